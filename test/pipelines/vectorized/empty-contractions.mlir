// mlirpipe-fold-empty-contractions: a matmul or batch_matmul with a dimension of size 0 is its
// initial result C (K = 0: sums of no products). In refbackend-vectorized (stage
// fold-empty-contractions) the script then has no such matmul to tile, which crashed it.
// RUN: mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-fold-empty-contractions)' | filecheck %s
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized | filecheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @no_products
// CHECK-NOT: linalg.matmul
// CHECK: %[[C:.*]] = linalg.fill
// CHECK-NEXT: return %[[C]]
// LLVM-LABEL: llvm.func @no_products
func.func @no_products(%a: tensor<4x0xf32>, %b: tensor<0x16xf32>) -> tensor<4x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4x0xf32>, tensor<0x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @batch_of_no_products
// CHECK-NOT: linalg.batch_matmul
// CHECK: return %arg2
// LLVM-LABEL: llvm.func @batch_of_no_products
func.func @batch_of_no_products(%a: tensor<2x4x0xf64>, %b: tensor<2x0x15xf64>, %c: tensor<2x4x15xf64>) -> tensor<2x4x15xf64> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x4x0xf64>, tensor<2x0x15xf64>) outs(%c : tensor<2x4x15xf64>) -> tensor<2x4x15xf64>
  return %r : tensor<2x4x15xf64>
}

// -----

// Products of a K of 1 are kept.
// CHECK-LABEL: func.func @one_product
// CHECK: linalg.matmul
func.func @one_product(%a: tensor<4x1xf32>, %b: tensor<1x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x1xf32>, tensor<1x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
