// A convolution with bias, as torch-mlir imports nn.Conv2d(bias=True): its initial result a
// linalg.broadcast of the bias along N, H and W of the NCHW result. After conv-to-nhwc the bias
// is broadcast along N, H and W of the NHWC result (no NCHW tensor of it, no transpose of one:
// that broadcast was a scalar loop over the whole result and its transpose a pass over memory;
// a depthwise 3x3 + pointwise block of 32 channels at 56x56 on 8 images took 31x torch). After
// tile-and-vectorize the broadcast is fused into the convolution's blocks (a dense one and a
// depthwise one alike): each register tile's bias is written as vectors into the block, then
// read as the accumulator; no linalg.broadcast is left to become a loop.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after conv-to-nhwc | filecheck %s --check-prefix=NHWC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2,fma,avx512f mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefixes=VEC,WIDE

// NHWC-LABEL: func.func @conv_bias
// NHWC-NOT: dimensions = [0, 2, 3]
// NHWC: %[[BIAS:.*]] = linalg.broadcast ins(%arg2 : tensor<32xf32>) outs(%{{.*}} : tensor<8x8x8x32xf32>) dimensions = [0, 1, 2]
// NHWC-NEXT: %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} outs(%[[BIAS]] : tensor<8x8x8x32xf32>)
// NHWC: linalg.transpose ins(%[[CONV]] : tensor<8x8x8x32xf32>) outs(%{{.*}} : tensor<8x32x8x8xf32>) permutation = [0, 3, 1, 2]
// VEC-LABEL: func.func @conv_bias
// VEC-NOT: linalg.broadcast
// VEC: scf.forall (%{{.*}}, %{{.*}}) in (8, 2)
// VEC: %[[B:.*]] = vector.transfer_read %arg2[%{{.*}}], %{{.*}} : tensor<32xf32>, vector<{{[0-9]+}}x{{16|32}}xf32>
// VEC-NEXT: vector.transfer_write %[[B]], %{{.*}} : vector<{{[0-9]+}}x{{16|32}}xf32>, tensor<1x4x8x32xf32>
// VEC: vector.contract
// VEC-NOT: linalg.broadcast
// VEC: return

func.func @conv_bias(%x: tensor<8x16x10x10xf32>, %f: tensor<32x16x3x3xf32>, %b: tensor<32xf32>) -> tensor<8x32x8x8xf32> {
  %e = tensor.empty() : tensor<8x32x8x8xf32>
  %init = linalg.broadcast ins(%b : tensor<32xf32>) outs(%e : tensor<8x32x8x8xf32>) dimensions = [0, 2, 3]
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %f : tensor<8x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%init : tensor<8x32x8x8xf32>) -> tensor<8x32x8x8xf32>
  return %r : tensor<8x32x8x8xf32>
}

// -----

// NHWC-LABEL: func.func @depthwise_bias
// NHWC-NOT: dimensions = [0, 2, 3]
// NHWC: %[[BIAS:.*]] = linalg.broadcast ins(%arg2 : tensor<32xf32>) outs(%{{.*}} : tensor<8x14x14x32xf32>) dimensions = [0, 1, 2]
// NHWC-NEXT: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} outs(%[[BIAS]] : tensor<8x14x14x32xf32>)
// VEC-LABEL: func.func @depthwise_bias
// VEC-NOT: linalg.broadcast
// VEC: scf.forall (%{{.*}}, %{{.*}}) in (8, 4)
// VEC: %[[B:.*]] = vector.transfer_read %arg2[%{{.*}}], %{{.*}} : tensor<32xf32>, vector<{{[0-9]+}}x{{16|32}}xf32>
// VEC-NEXT: vector.transfer_write %[[B]], %{{.*}} : vector<{{[0-9]+}}x{{16|32}}xf32>, tensor<1x?x14x32xf32>
// VEC: vector.fma
// VEC-NOT: linalg.broadcast
// VEC: return

func.func @depthwise_bias(%x: tensor<8x32x16x16xf32>, %f: tensor<32x3x3xf32>, %b: tensor<32xf32>) -> tensor<8x32x14x14xf32> {
  %e = tensor.empty() : tensor<8x32x14x14xf32>
  %init = linalg.broadcast ins(%b : tensor<32xf32>) outs(%e : tensor<8x32x14x14xf32>) dimensions = [0, 2, 3]
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %f : tensor<8x32x16x16xf32>, tensor<32x3x3xf32>) outs(%init : tensor<8x32x14x14xf32>) -> tensor<8x32x14x14xf32>
  return %r : tensor<8x32x14x14xf32>
}

// -----

// Register tiles partial along both the columns and the channels (AVX-512's 8 x 32 on 10
// columns and 48 channels; 8 x 16 of the depthwise one on 10 columns and 40 channels): the
// corner tile (2 columns x 16 channels; 2 x 8) is peeled too and has static shapes, as the
// others (scf-for-loop-peeling without skip-partial: a loop inside the partial iteration of a
// peeled loop is peeled as well); before, the vectorizer failed on it and the whole lowering
// stopped (MobileNetV2's depthwise 3x3 of 144 channels on 28x28).
// WIDE-LABEL: func.func @corner_tiles
// WIDE-NOT: linalg.conv
// WIDE-DAG: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// WIDE-DAG: vector.contract {{.*}} : vector<8x1xf32>, vector<1x16xf32> into vector<8x16xf32>
// WIDE-DAG: vector.contract {{.*}} : vector<2x1xf32>, vector<1x32xf32> into vector<2x32xf32>
// WIDE-DAG: vector.contract {{.*}} : vector<2x1xf32>, vector<1x16xf32> into vector<2x16xf32>
// WIDE-DAG: vector.fma {{.*}} : vector<2x8xf32>
// WIDE-DAG: vector.fma {{.*}} : vector<8x16xf32>
// WIDE-NOT: linalg.conv
// WIDE-NOT: linalg.depthwise
// WIDE: return

func.func @corner_tiles(%x: tensor<1x24x12x12xf32>, %f: tensor<48x24x3x3xf32>, %y: tensor<1x40x12x12xf32>, %g: tensor<40x3x3xf32>) -> (tensor<1x48x10x10xf32>, tensor<1x40x10x10xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x48x10x10xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x48x10x10xf32>) -> tensor<1x48x10x10xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %f : tensor<1x24x12x12xf32>, tensor<48x24x3x3xf32>) outs(%init : tensor<1x48x10x10xf32>) -> tensor<1x48x10x10xf32>
  %e2 = tensor.empty() : tensor<1x40x10x10xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x40x10x10xf32>) -> tensor<1x40x10x10xf32>
  %d = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%y, %g : tensor<1x40x12x12xf32>, tensor<40x3x3xf32>) outs(%init2 : tensor<1x40x10x10xf32>) -> tensor<1x40x10x10xf32>
  return %c, %d : tensor<1x48x10x10xf32>, tensor<1x40x10x10xf32>
}
