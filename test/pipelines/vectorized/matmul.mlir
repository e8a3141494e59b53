// A zero-filled matmul through refbackend-vectorized. After pack-panels: B in panels of 16
// columns and A in strips of 6 rows, the matmul a linalg.contract writing C seen in strips and
// panels. After tile-and-vectorize: both copies as vectors; C zero-filled a row of a panel at a
// time; register tiles of one strip by one panel (6x16) as vector.contract, the accumulator
// tile read once before the k loop, carried through it as an iter_arg (no read or write of C
// inside), written once after it; A's 6 values of one k are one contiguous read; no linalg op
// is left. After lower-contractions: rows of vector.fma. After lower-vectors: A's 6 values read
// as 6 scalars (LLVM broadcasts each from memory).
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline refbackend-vectorized --stop-after pack-panels | filecheck %s --check-prefix=PACK
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline refbackend-vectorized --stop-after lower-contractions | filecheck %s --check-prefix=FMA
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline refbackend-vectorized --stop-after lower-vectors | filecheck %s --check-prefix=LOADS
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline refbackend-vectorized | filecheck %s --check-prefix=LLVM

// PACK-LABEL: func.func @forward
// PACK: %[[PANELS:.*]] = linalg.pack %arg1 outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [16] into %{{.*}} : tensor<48x32xf32> -> tensor<2x48x16xf32>
// PACK: %[[STRIPS:.*]] = linalg.pack %arg0 inner_dims_pos = [0] inner_tiles = [6] into %{{.*}} : tensor<60x48xf32> -> tensor<10x48x6xf32>
// PACK: %[[C:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2, 3]] output_shape [10, 6, 2, 16] : tensor<60x32xf32> into tensor<10x6x2x16xf32>
// PACK: %[[R:.*]] = linalg.contract {{.*}} {mlirpipe.packed = "both"} ins(%[[STRIPS]], %[[PANELS]] : tensor<10x48x6xf32>, tensor<2x48x16xf32>) outs(%[[C]] : tensor<10x6x2x16xf32>)
// PACK: tensor.collapse_shape %[[R]] {{\[\[}}0, 1], [2, 3]] : tensor<10x6x2x16xf32> into tensor<60x32xf32>
// PACK-NOT: linalg.matmul

// VEC-LABEL: func.func @forward
// VEC-NOT: linalg.
// VEC: vector.transfer_read %{{.*}} : tensor<48x2x16xf32>, vector<8x16xf32>
// VEC: vector.transfer_read %{{.*}} : tensor<10x6x48xf32>, vector<8x6xf32>
// VEC: vector.transfer_write %{{.*}} : vector<16xf32>, tensor<1x1x1x16xf32>
// VEC: %[[ACC:.*]] = vector.transfer_read %[[C:[a-z0-9_]+]][%[[S:[a-z0-9_]+]], %c0, %[[P:[a-z0-9_]+]], %c0]{{.*}} : tensor<10x6x2x16xf32>, vector<6x1x16xf32>
// VEC-NEXT: %[[LOOP:.*]]:2 = scf.for %[[K:.*]] = %c0 to %c48 step %c1 iter_args(%[[CT:.*]] = %[[C]], %[[A:.*]] = %[[ACC]]) -> (tensor<10x6x2x16xf32>, vector<6x1x16xf32>)
// VEC-NOT: tensor<10x6x2x16xf32>, vector
// VEC: vector.transfer_read %{{.*}}[%[[S]], %[[K]], %c0]{{.*}} : tensor<10x48x6xf32>, vector<6xf32>
// VEC: vector.transfer_read %{{.*}}[%[[P]], %[[K]], %c0]{{.*}} : tensor<2x48x16xf32>, vector<16xf32>
// VEC-NOT: tensor<10x6x2x16xf32>, vector
// VEC: vector.contract {{.*}} %[[A]] : vector<1x6xf32>, vector<1x1x16xf32> into vector<6x1x16xf32>
// VEC-NEXT: scf.yield %[[CT]], %{{.*}} : tensor<10x6x2x16xf32>, vector<6x1x16xf32>
// VEC-NEXT: }
// VEC-NEXT: vector.transfer_write %[[LOOP]]#1, %[[LOOP]]#0[%[[S]], %c0, %[[P]], %c0]
// VEC-NOT: linalg.

// FMA-LABEL: func.func @forward
// FMA-NOT: vector.contract
// FMA-COUNT-6: vector.fma %{{.*}} : vector<16xf32>
// FMA-NOT: vector.contract
// FMA-NOT: linalg.

// LOADS-LABEL: func.func @forward
// LOADS: scf.for
// LOADS-COUNT-6: memref.load %{{.*}} : memref<10x48x6xf32>
// LOADS-NOT: vector<6xf32>
// LOADS: vector.transfer_read %{{.*}} : memref<2x48x16xf32>, vector<16xf32>
// LOADS-NOT: vector<6xf32>
// LOADS: return

// LLVM-NOT: linalg.
// LLVM-COUNT-6: llvm.intr.fmuladd(%{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>

func.func @forward(%a: tensor<60x48xf32>, %b: tensor<48x32xf32>) -> tensor<60x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<60x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<60x32xf32>) -> tensor<60x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<60x48xf32>, tensor<48x32xf32>) outs(%f : tensor<60x32xf32>) -> tensor<60x32xf32>
  return %r : tensor<60x32xf32>
}
