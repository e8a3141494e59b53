// A convolution's elementwise epilogue (a scale and a ReLU, as fuse-elementwise leaves a batch
// norm and its ReLU) computed in the convolution's blocks through refbackend-vectorized (as with
// AVX2). After mark-elementwise: the convolution is marked mlirpipe.conv_epilogue and the op
// reading its result mlirpipe.epilogue (not mlirpipe.elementwise). After tile-and-vectorize:
// one scf.forall of blocks of output rows, each computing the convolution's block (its 1-D
// register tiles, vector.contract) and then the epilogue on it, row by row as vectors: the
// block is read back from cache instead of the whole result from memory. A convolution whose
// result is read twice keeps its own blocks, and its reader is an elementwise op like others.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after mark-elementwise | filecheck %s --check-prefix=MARK
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC

// MARK-LABEL: func.func @conv_scale_relu
// MARK: linalg.conv_2d_nhwc_hwcf {{.*}}mlirpipe.conv_epilogue
// MARK: linalg.generic {{.*}} attrs = {mlirpipe.epilogue}
// MARK-NOT: mlirpipe.elementwise
// VEC-LABEL: func.func @conv_scale_relu
// VEC-NOT: linalg.conv_2d
// VEC: scf.forall (
// VEC-NOT: scf.forall (
// VEC: vector.contract
// VEC-NOT: scf.forall (
// VEC: arith.mulf {{.*}} : vector<16xf32>
// VEC: arith.maximumf {{.*}} : vector<16xf32>
// VEC-NOT: scf.forall (
// VEC-NOT: linalg.generic
// VEC: return
#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
#chan = affine_map<(n, h, w, c) -> (c)>
func.func @conv_scale_relu(%x: tensor<1x10x10x8xf32>, %f: tensor<3x3x8x16xf32>, %s: tensor<16xf32>) -> tensor<1x8x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %f : tensor<1x10x10x8xf32>, tensor<3x3x8x16xf32>) outs(%init : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %s : tensor<1x8x8x16xf32>, tensor<16xf32>) outs(%e : tensor<1x8x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %p = arith.maximumf %m, %zero : f32
    linalg.yield %p : f32
  } -> tensor<1x8x8x16xf32>
  return %r : tensor<1x8x8x16xf32>
}

// -----

// MARK-LABEL: func.func @conv_read_twice
// MARK-NOT: mlirpipe.conv_epilogue
// MARK: linalg.generic {{.*}} attrs = {mlirpipe.elementwise = 4 : i64}
// MARK-NOT: mlirpipe.epilogue
// VEC-LABEL: func.func @conv_read_twice
// VEC-NOT: linalg.conv_2d
// VEC: scf.forall (
// VEC: vector.contract
// VEC: scf.forall.in_parallel
// VEC: arith.maximumf {{.*}} : vector<16xf32>
// VEC: return
#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
func.func @conv_read_twice(%x: tensor<1x10x10x8xf32>, %f: tensor<3x3x8x16xf32>) -> (tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %f : tensor<1x10x10x8xf32>, tensor<3x3x8x16xf32>) outs(%init : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x8x8x16xf32>) outs(%e : tensor<1x8x8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.maximumf %a, %zero : f32
    linalg.yield %p : f32
  } -> tensor<1x8x8x16xf32>
  return %r, %c : tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>
}
