// A matmul (not packed: N is not a multiple of the panel width) and a batch_matmul that
// accumulate into a function's argument: C has no producer, so no fill is fused into the
// blocks, and both are still tiled and vectorized.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s
// RUN: env MLIRPIPE_CPU_FEATURES=avx2,fma,avx512f mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s

// CHECK-LABEL: func.func @matmul_into_argument
// CHECK-NOT: linalg.matmul
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %arg2)
// CHECK: vector.contract
// CHECK-NOT: linalg.matmul
func.func @matmul_into_argument(%a: tensor<4x8xf32>, %b: tensor<8x15xf32>, %c: tensor<4x15xf32>) -> tensor<4x15xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x15xf32>) outs(%c : tensor<4x15xf32>) -> tensor<4x15xf32>
  return %r : tensor<4x15xf32>
}

// -----

// CHECK-LABEL: func.func @batch_matmul_into_argument
// CHECK-NOT: linalg.batch_matmul
// CHECK: scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}} = %arg2)
// CHECK: vector.contract
// CHECK-NOT: linalg.batch_matmul
func.func @batch_matmul_into_argument(%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>, %c: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%c : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}
