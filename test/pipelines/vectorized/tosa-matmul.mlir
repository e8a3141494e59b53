// A TOSA matmul (always batched) through tosa-vectorized. After tosa-to-linalg: a
// linalg.batch_matmul of batch 1. After unit-batch-to-matmul: a linalg.matmul on the collapsed
// operands, which pack-panels then packs like any other (B in panels of 64 with AVX-512, and A
// in strips of 6 too with AVX2). At the end: no linalg op, the FMAs on vectors of 64 floats.
// RUN: env MLIRPIPE_CPU_FEATURES=avx512f mlirpipe-opt %s --pipeline tosa-vectorized --stop-after tosa-to-linalg | filecheck %s --check-prefix=BATCH
// RUN: env MLIRPIPE_CPU_FEATURES=avx512f mlirpipe-opt %s --pipeline tosa-vectorized --stop-after unit-batch-to-matmul | filecheck %s --check-prefix=MATMUL
// RUN: env MLIRPIPE_CPU_FEATURES=avx512f mlirpipe-opt %s --pipeline tosa-vectorized --stop-after pack-panels | filecheck %s --check-prefix=PACK
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline tosa-vectorized --stop-after pack-panels | filecheck %s --check-prefix=PACK-AVX2
// RUN: env MLIRPIPE_CPU_FEATURES=avx512f mlirpipe-opt %s --pipeline tosa-vectorized | filecheck %s --check-prefix=LLVM

// BATCH-NOT: tosa.
// BATCH: linalg.batch_matmul ins(%arg0, %arg1 : tensor<1x60x48xf32>, tensor<1x48x128xf32>)

// MATMUL-NOT: linalg.batch_matmul
// MATMUL-DAG: %[[A:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<1x60x48xf32> into tensor<60x48xf32>
// MATMUL-DAG: %[[B:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1], [2]] : tensor<1x48x128xf32> into tensor<48x128xf32>
// MATMUL: linalg.matmul ins(%[[A]], %[[B]] : tensor<60x48xf32>, tensor<48x128xf32>)
// MATMUL-NOT: linalg.batch_matmul

// PACK: linalg.pack %{{.*}} inner_tiles = [64] {{.*}} -> tensor<2x48x64xf32>
// PACK: linalg.contract {{.*}} {mlirpipe.packed = "rhs"}
// PACK-NOT: linalg.matmul

// PACK-AVX2: linalg.pack %{{.*}} inner_tiles = [16] {{.*}} -> tensor<8x48x16xf32>
// PACK-AVX2: linalg.pack %{{.*}} inner_tiles = [6] {{.*}} -> tensor<10x48x6xf32>
// PACK-AVX2: linalg.contract {{.*}} {mlirpipe.packed = "both"}

// LLVM-NOT: linalg.
// LLVM: llvm.intr.fmuladd(%{{.*}}) : (vector<64xf32>, vector<64xf32>, vector<64xf32>) -> vector<64xf32>
// LLVM-NOT: linalg.

func.func @forward(%a: tensor<1x60x48xf32>, %b: tensor<1x48x128xf32>) -> tensor<1x60x128xf32> {
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.matmul %a, %b, %zp, %zp : (tensor<1x60x48xf32>, tensor<1x48x128xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x60x128xf32>
  return %r : tensor<1x60x128xf32>
}
