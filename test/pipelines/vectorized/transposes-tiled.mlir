// After tile-transposes: a convolution's image to NHWC in tiles of 8 image columns x 8 channels,
// its result back to NCHW in tiles of 8 channels x 8 columns (14 columns: a tile of 8 and one
// of 6), each an iteration of an scf.forall (over batch, rows and the tiles of columns and
// channels) whose result is the whole transpose: a result of the function stays the
// allocation the caller's buffer replaces (an scf.for nest's result was copied into it). A
// tile is still a transpose; the filter's (of rank 3) is left whole. After tile-and-vectorize
// a tile of static shape is one transfer_read (the tile's columns gathered) and one
// transfer_write of 8 x 8; a tile of dynamic shape (14 columns: tiles of 8 and 6) stays a
// transpose, a loop nest to come, and so does a tile of i1 (a vector of i1 is stored as bits,
// a tensor of i1 holds a byte per element: mlirpipe-mark-elementwise unmarks the tile).
// The transposes of the last two dimensions (an attention's keys) are cut and vectorized alike.
// A transpose that keeps its last dimension last (heads split from a projection, rank 5) is
// tiled and vectorized as an elementwise op: a row of 64 and one of 32 (96 = 64 + 32), each a
// contiguous read and write; one of i1 is left as it is.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-transposes | filecheck %s --check-prefix=TILE
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after buffer-deallocation | filecheck %s --check-prefix=LOOPS

// TILE-LABEL: func.func @tiled_transposes
// TILE: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (1, 10, 2, 2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x10x16x16xf32>)
// TILE: linalg.transpose ins(%{{.*}} : tensor<1x8x1x8xf32>) outs(%{{.*}} : tensor<1x1x8x8xf32>) permutation = [0, 2, 3, 1]
// TILE: linalg.depthwise_conv_2d_nhwc_hwc
// TILE: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 8, 2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x16x8x14xf32>)
// TILE: linalg.transpose ins(%{{.*}} : tensor<1x1x?x8xf32>) outs(%{{.*}} : tensor<1x8x1x?xf32>) permutation = [0, 3, 1, 2]
// TILE-NOT: linalg.transpose

// VEC-LABEL: func.func @tiled_transposes
// VEC: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (10, 2, 2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x10x16x16xf32>)
// VEC-NOT: linalg.transpose
// VEC: %[[T:.*]] = vector.transfer_read %arg0[{{.*}}]{{.*}}permutation_map = {{.*}} : tensor<1x16x10x16xf32>, vector<8x8xf32>
// VEC-NEXT: vector.transfer_write %[[T]], {{.*}} : vector<8x8xf32>, tensor<1x1x8x8xf32>
// VEC: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 8, 2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x16x8x14xf32>)
// VEC: linalg.transpose ins(%{{.*}} : tensor<1x1x?x8xf32>) outs(%{{.*}} : tensor<1x8x1x?xf32>) permutation = [0, 3, 1, 2]

// LOOPS-LABEL: func.func @tiled_transposes
// LOOPS-NOT: memref.copy

func.func @tiled_transposes(%image: tensor<1x16x10x16xf32>, %filter: tensor<16x3x3xf32>) -> tensor<1x16x8x14xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x8x14xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x8x14xf32>) -> tensor<1x16x8x14xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%image, %filter : tensor<1x16x10x16xf32>, tensor<16x3x3xf32>) outs(%f : tensor<1x16x8x14xf32>) -> tensor<1x16x8x14xf32>
  return %r : tensor<1x16x8x14xf32>
}

// -----

// TILE-LABEL: func.func @bool_transpose
// TILE: linalg.transpose ins(%{{.*}} : tensor<1x8x1x8xi1>) outs(%{{.*}} : tensor<1x1x8x8xi1>) permutation = [0, 2, 3, 1]
// LOOPS-LABEL: func.func @bool_transpose
// VEC-LABEL: func.func @bool_transpose
// VEC: scf.forall (%{{.*}}, %{{.*}}) in (8, 2)
// VEC: linalg.transpose ins(%{{.*}} : tensor<1x8x1x8xi1>) outs(%{{.*}} : tensor<1x1x8x8xi1>) permutation = [0, 2, 3, 1]
// VEC-NOT: vector<8x8xi1>
// VEC: return
func.func @bool_transpose(%a: tensor<1x16x8x8xi1>) -> tensor<1x8x8x16xi1> {
  %e = tensor.empty() : tensor<1x8x8x16xi1>
  %t = linalg.transpose ins(%a : tensor<1x16x8x8xi1>) outs(%e : tensor<1x8x8x16xi1>) permutation = [0, 2, 3, 1]
  return %t : tensor<1x8x8x16xi1>
}

// -----

// TILE-LABEL: func.func @keys
// TILE: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (2, 3, 2, 2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<2x3x16x16xf32>)
// TILE: linalg.transpose ins(%{{.*}} : tensor<1x1x8x8xf32>) outs(%{{.*}} : tensor<1x1x8x8xf32>) permutation = [0, 1, 3, 2]
// VEC-LABEL: func.func @keys
// VEC-NOT: linalg.transpose
// VEC: %[[T:.*]] = vector.transfer_read %arg0[{{.*}}]{{.*}}permutation_map = {{.*}} : tensor<2x3x16x16xf32>, vector<8x8xf32>
// VEC-NEXT: vector.transfer_write %[[T]], {{.*}} : vector<8x8xf32>, tensor<1x1x8x8xf32>
// VEC: return
// LOOPS-LABEL: func.func @keys
func.func @keys(%k: tensor<2x3x16x16xf32>) -> tensor<2x3x16x16xf32> {
  %e = tensor.empty() : tensor<2x3x16x16xf32>
  %t = linalg.transpose ins(%k : tensor<2x3x16x16xf32>) outs(%e : tensor<2x3x16x16xf32>) permutation = [0, 1, 3, 2]
  return %t : tensor<2x3x16x16xf32>
}

// -----

// TILE-LABEL: func.func @matrix
// TILE: scf.forall (%{{.*}}, %{{.*}}) in (3, 2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<24x16xf32>)
// VEC-LABEL: func.func @matrix
// VEC: vector.transfer_read %arg0[{{.*}}]{{.*}}permutation_map = {{.*}} : tensor<16x24xf32>, vector<8x8xf32>
// VEC-NOT: linalg.transpose
// VEC: return
// LOOPS-LABEL: func.func @matrix
func.func @matrix(%k: tensor<16x24xf32>) -> tensor<24x16xf32> {
  %e = tensor.empty() : tensor<24x16xf32>
  %t = linalg.transpose ins(%k : tensor<16x24xf32>) outs(%e : tensor<24x16xf32>) permutation = [1, 0]
  return %t : tensor<24x16xf32>
}

// -----

// TILE-LABEL: func.func @split_heads
// TILE: linalg.transpose ins(%{{.*}} : tensor<1x4x2x3x96xf32>) outs(%{{.*}} : tensor<3x4x2x1x96xf32>) permutation = [3, 1, 2, 0, 4]
// VEC-LABEL: func.func @split_heads
// VEC-NOT: linalg.transpose
// VEC: %[[R:.*]] = vector.transfer_read %arg0[%c0, %{{.*}}, %{{.*}}, %{{.*}}, %c0], %{{.*}} {in_bounds = [true]} : tensor<1x4x2x3x96xf32>, vector<64xf32>
// VEC-NEXT: vector.transfer_write %[[R]], %{{.*}} : vector<64xf32>, tensor<1x1x1x1x64xf32>
// VEC: %[[R2:.*]] = vector.transfer_read %arg0[%c0, %{{.*}}, %{{.*}}, %{{.*}}, %c64], %{{.*}} {in_bounds = [true]} : tensor<1x4x2x3x96xf32>, vector<32xf32>
// VEC-NEXT: vector.transfer_write %[[R2]], %{{.*}} : vector<32xf32>, tensor<1x1x1x1x32xf32>
// VEC: return
// LOOPS-LABEL: func.func @split_heads
func.func @split_heads(%a: tensor<1x4x2x3x96xf32>) -> tensor<3x4x2x1x96xf32> {
  %e = tensor.empty() : tensor<3x4x2x1x96xf32>
  %t = linalg.transpose ins(%a : tensor<1x4x2x3x96xf32>) outs(%e : tensor<3x4x2x1x96xf32>) permutation = [3, 1, 2, 0, 4]
  return %t : tensor<3x4x2x1x96xf32>
}

// -----

// VEC-LABEL: func.func @bool_rows
// VEC-NOT: vector<
// VEC: linalg.transpose ins(%{{.*}} : tensor<4x3x16xi1>) outs(%{{.*}} : tensor<3x4x16xi1>) permutation = [1, 0, 2]
// VEC-NOT: vector<
// VEC: return
// TILE-LABEL: func.func @bool_rows
// LOOPS-LABEL: func.func @bool_rows
func.func @bool_rows(%a: tensor<4x3x16xi1>) -> tensor<3x4x16xi1> {
  %e = tensor.empty() : tensor<3x4x16xi1>
  %t = linalg.transpose ins(%a : tensor<4x3x16xi1>) outs(%e : tensor<3x4x16xi1>) permutation = [1, 0, 2]
  return %t : tensor<3x4x16xi1>
}
