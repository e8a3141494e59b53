// Poolings through refbackend-vectorized, as torch-mlir imports max_pool2d(x, 3, 2, 1),
// avg_pool2d(x, 2) and adaptive_avg_pool2d(x, 1). After pool-to-nhwc: a max (sum) pooling on
// NCHW images is one on NHWC images between transposes of the image and the result; a fill of
// the result is a fill of the NHWC one. After simplify-reductions: the adaptive pooling's sum
// over H and W is one over H x W (the image collapsed). After tile-and-vectorize no pooling
// and no linalg.generic is left (each would be a scalar loop): a pooling is tiled as a
// depthwise convolution, its maximum (sum) on vectors along the channels; the sum over H x W
// is split into lanes and reduced. Before, all three were scalar loops. A sum over trailing
// loops of an input read in another order keeps its loops.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after simplify-reductions | filecheck %s --check-prefix=NHWC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2,fma,avx512f mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC

// NHWC-LABEL: func.func @max_pool
// NHWC: %[[IMAGE:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x16x12x12xf32>) outs(%{{.*}} : tensor<1x12x12x16xf32>) permutation = [0, 2, 3, 1]
// NHWC: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x5x5x16xf32>)
// NHWC: %[[POOL:.*]] = linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%[[IMAGE]], %{{.*}} : tensor<1x12x12x16xf32>, tensor<3x3xf32>) outs(%[[FILL]] : tensor<1x5x5x16xf32>)
// NHWC: linalg.transpose ins(%[[POOL]] : tensor<1x5x5x16xf32>) outs(%{{.*}} : tensor<1x16x5x5xf32>) permutation = [0, 3, 1, 2]
// NHWC-NOT: linalg.pooling_nchw
// VEC-LABEL: func.func @max_pool
// VEC-NOT: linalg.pooling
// VEC-NOT: arith.maximumf %{{.*}} : f32
// VEC: arith.maximumf %{{.*}} : vector<{{[0-9]+}}xf32>
// VEC-NOT: linalg.pooling
// VEC-NOT: linalg.generic
// VEC: return

func.func @max_pool(%arg0: tensor<1x16x10x10xf32>) -> tensor<1x16x5x5xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %padded = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
    tensor.yield %cst : f32
  } : tensor<1x16x10x10xf32> to tensor<1x16x12x12xf32>
  %0 = tensor.empty() : tensor<1x16x5x5xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  %2 = tensor.empty() : tensor<3x3xf32>
  %3 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%padded, %2 : tensor<1x16x12x12xf32>, tensor<3x3xf32>) outs(%1 : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  return %3 : tensor<1x16x5x5xf32>
}

// -----

// NHWC-LABEL: func.func @avg_pool
// NHWC: %[[IMAGE:.*]] = linalg.transpose ins(%arg0 : tensor<1x16x10x10xf32>) outs(%{{.*}} : tensor<1x10x10x16xf32>) permutation = [0, 2, 3, 1]
// NHWC: linalg.pooling_nhwc_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%[[IMAGE]], %{{.*}} : tensor<1x10x10x16xf32>, tensor<2x2xf32>) outs(%{{.*}} : tensor<1x5x5x16xf32>)
// NHWC: permutation = [0, 3, 1, 2]
// NHWC: arith.divf
// VEC-LABEL: func.func @avg_pool
// VEC-NOT: linalg.pooling
// VEC: arith.addf %{{.*}} : vector<{{[0-9]+}}xf32>
// VEC-NOT: linalg.pooling
// VEC-NOT: linalg.generic
// VEC: return

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @avg_pool(%arg0: tensor<1x16x10x10xf32>) -> tensor<1x16x5x5xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 4.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x16x5x5xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  %2 = tensor.empty() : tensor<2x2xf32>
  %3 = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%arg0, %2 : tensor<1x16x10x10xf32>, tensor<2x2xf32>) outs(%1 : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%3 : tensor<1x16x5x5xf32>) outs(%0 : tensor<1x16x5x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.divf %in, %cst_0 : f32
    linalg.yield %5 : f32
  } -> tensor<1x16x5x5xf32>
  return %4 : tensor<1x16x5x5xf32>
}

// -----

// NHWC-LABEL: func.func @adaptive_avg_pool
// NHWC: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]] : tensor<1x64x7x7xf32> into tensor<1x64x49xf32>
// NHWC: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[FLAT]] : tensor<1x64x49xf32>) outs(%{{.*}} : tensor<1x64xf32>)
// VEC-LABEL: func.func @adaptive_avg_pool
// VEC-NOT: linalg.generic
// VEC: vector.multi_reduction <add>
// VEC-NOT: linalg.generic
// VEC: return

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
func.func @adaptive_avg_pool(%arg0: tensor<1x64x7x7xf32>) -> tensor<1x64x1x1xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 4.900000e+01 : f32
  %0 = tensor.empty() : tensor<1x64x1x1xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x64x1x1xf32>) -> tensor<1x64x1x1xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%arg0 : tensor<1x64x7x7xf32>) outs(%1 : tensor<1x64x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.addf %in, %out : f32
    linalg.yield %4 : f32
  } -> tensor<1x64x1x1xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2 : tensor<1x64x1x1xf32>) outs(%0 : tensor<1x64x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.divf %in, %cst_0 : f32
    linalg.yield %4 : f32
  } -> tensor<1x64x1x1xf32>
  return %3 : tensor<1x64x1x1xf32>
}

// -----

// A sum over the trailing loops of an input read through a permuted map (its H and W not
// contiguous in that order) keeps its two reduction loops: collapsing them would read it in
// another order.
// NHWC-LABEL: func.func @sum_transposed
// NHWC-NOT: tensor.collapse_shape %arg0
// NHWC: iterator_types = ["parallel", "parallel", "reduction", "reduction"]

#in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
func.func @sum_transposed(%arg0: tensor<1x64x7x5xf32>) -> tensor<1x64xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x64xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x64xf32>) -> tensor<1x64xf32>
  %2 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%arg0 : tensor<1x64x7x5xf32>) outs(%1 : tensor<1x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %3 = arith.addf %in, %out : f32
    linalg.yield %3 : f32
  } -> tensor<1x64xf32>
  return %2 : tensor<1x64xf32>
}
