// A zero-filled matmul through refbackend-vectorized as it is on a CPU with AVX-512 (its
// [stage.cpu.avx512f] tables; matmul.mlir shows the AVX2 form). After pack-panels: B in panels
// of 64 columns, A as it is (no second pack), the matmul a linalg.contract writing C seen in
// panels. After tile-and-vectorize: register tiles of 4 rows by one panel (4x64), each with
// its share of C's zero fill (a write of zeros into the tile, no fill of C before the tiles):
// the accumulator, read from that fill, is carried through the k loop as an iter_arg (no read
// or write of C inside) and written once after it; per k, A's 4 values of the tile and one row
// of the panel. After lower-vectors: the accumulator starts from the zero vector (C is never
// read), 4 scalar loads of A and 4 vector.fma of 64 floats per k; in the LLVM dialect, 4
// fmuladd on vector<64xf32> (16 zmm accumulators) and no linalg op.
// RUN: env MLIRPIPE_CPU_FEATURES=avx512f mlirpipe-opt %s --pipeline refbackend-vectorized --stop-after pack-panels | filecheck %s --check-prefix=PACK
// RUN: env MLIRPIPE_CPU_FEATURES=avx512f mlirpipe-opt %s --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx512f mlirpipe-opt %s --pipeline refbackend-vectorized --stop-after lower-vectors | filecheck %s --check-prefix=LOADS
// RUN: env MLIRPIPE_CPU_FEATURES=avx512f mlirpipe-opt %s --pipeline refbackend-vectorized | filecheck %s --check-prefix=LLVM
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline refbackend-vectorized --stop-after pack-panels | filecheck %s --check-prefix=NARROW

// PACK-LABEL: func.func @forward
// PACK: %[[PANELS:.*]] = linalg.pack %arg1 outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [64] into %{{.*}} : tensor<48x128xf32> -> tensor<2x48x64xf32>
// PACK-NOT: linalg.pack
// PACK: linalg.contract {{.*}} {mlirpipe.packed = "rhs"} ins(%arg0, %[[PANELS]] : tensor<60x48xf32>, tensor<2x48x64xf32>) outs(%{{.*}} : tensor<60x2x64xf32>)
// PACK-NOT: linalg.matmul

// VEC-LABEL: func.func @forward
// VEC-NOT: linalg.
// VEC: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4x1x64xf32>
// VEC-NOT: linalg.
// VEC: scf.for %[[P:.*]] = %c0 to %c2 step %c1
// VEC-NEXT: scf.for %[[M:.*]] = %c0 to %c60 step %c4
// VEC-NEXT: %[[TILE:.*]] = tensor.extract_slice %{{.*}}[%[[M]], %[[P]], 0] [4, 1, 64] [1, 1, 1] : tensor<60x2x64xf32> to tensor<4x1x64xf32>
// VEC-NEXT: %[[FILLED:.*]] = vector.transfer_write %[[ZERO]], %[[TILE]][%c0, %c0, %c0]
// VEC-NEXT: %[[ACC:.*]] = vector.transfer_read %[[FILLED]][%c0, %c0, %c0]{{.*}} : tensor<4x1x64xf32>, vector<4x1x64xf32>
// VEC-NEXT: %[[LOOP:.*]]:2 = scf.for %[[K:.*]] = %c0 to %c48 step %c1 iter_args(%[[CT:.*]] = %[[FILLED]], %[[A:.*]] = %[[ACC]]) -> (tensor<4x1x64xf32>, vector<4x1x64xf32>)
// VEC-NOT: tensor<4x1x64xf32>, vector
// VEC: vector.transfer_read %arg0[%[[M]], %[[K]]]{{.*}} : tensor<60x48xf32>, vector<4x1xf32>
// VEC: vector.transfer_read %{{.*}}[%[[P]], %[[K]], %c0]{{.*}} : tensor<2x48x64xf32>, vector<64xf32>
// VEC-NOT: tensor<4x1x64xf32>, vector
// VEC: vector.contract {{.*}} %[[A]] : vector<4x1xf32>, vector<1x1x64xf32> into vector<4x1x64xf32>
// VEC-NEXT: scf.yield %[[CT]], %{{.*}} : tensor<4x1x64xf32>, vector<4x1x64xf32>
// VEC-NEXT: }
// VEC-NEXT: vector.transfer_write %[[LOOP]]#1, %[[LOOP]]#0[%c0, %c0, %c0]
// VEC-NOT: linalg.

// LOADS-LABEL: func.func @forward
// LOADS: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4x1x64xf32>
// LOADS: %[[TILE:.*]] = memref.subview %{{.*}} [4, 1, 64] [1, 1, 1] : memref<60x2x64xf32> to
// LOADS-NOT: vector.transfer_read %[[TILE]]
// LOADS: scf.for %{{.*}} = %c0 to %c48 step %c1 iter_args(%{{.*}} = %[[ZERO]]) -> (vector<4x1x64xf32>)
// LOADS-COUNT-4: memref.load %arg0[{{.*}}] : memref<60x48xf32>
// LOADS-NEXT: vector.transfer_read %{{.*}} : memref<2x48x64xf32>, vector<64xf32>
// LOADS-COUNT-4: vector.fma %{{.*}} : vector<64xf32>
// LOADS: return

// LLVM-NOT: linalg.
// LLVM-COUNT-4: llvm.intr.fmuladd(%{{.*}}) : (vector<64xf32>, vector<64xf32>, vector<64xf32>) -> vector<64xf32>
// LLVM-NOT: linalg.

// Without AVX-512 the same matmul gets 16-column panels and 6-row strips of A.
// NARROW: linalg.pack %arg1 {{.*}} -> tensor<8x48x16xf32>
// NARROW: linalg.pack %arg0 {{.*}} -> tensor<10x48x6xf32>
// NARROW: mlirpipe.packed = "both"

func.func @forward(%a: tensor<60x48xf32>, %b: tensor<48x128xf32>) -> tensor<60x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<60x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<60x128xf32>) -> tensor<60x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<60x48xf32>, tensor<48x128xf32>) outs(%f : tensor<60x128xf32>) -> tensor<60x128xf32>
  return %r : tensor<60x128xf32>
}
