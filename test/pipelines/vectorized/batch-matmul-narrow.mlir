// A batched matmul narrower than a block (N = 32 against blocks of 256 columns, as the
// attention's scores and weighted sum of 12 heads of 64 on sequences of 128): the block's
// single column of blocks is folded away before the register tiles are cut: every tile is
// static, without masks, and its accumulator leaves the k loop (C's zero fill, fused into the
// block before, keeps its masks: one write per tile).
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC

// VEC-LABEL: func.func @forward
// VEC: vector.mask %{{.*}} { vector.transfer_write %{{.*}} : vector<1x4x16xf32>, tensor<1x?x?xf32> }
// VEC: scf.for {{.*}} -> (tensor<1x8x32xf32>, vector<4x16xf32>) {
// VEC-NEXT: vector.transfer_read %{{.*}} : tensor<2x8x4xf32>, vector<4x1xf32>
// VEC: vector.contract {{.*}} : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
// VEC-NOT: vector.mask
// VEC-NOT: x?x
// VEC: return

func.func @forward(%x: tensor<2x8x4xf32>, %y: tensor<2x4x32xf32>) -> tensor<2x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %r = linalg.batch_matmul ins(%x, %y : tensor<2x8x4xf32>, tensor<2x4x32xf32>) outs(%f : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %r : tensor<2x8x32xf32>
}
