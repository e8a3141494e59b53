// A module of two functions through refbackend-vectorized: each function's register tiles are
// vectorized (the script visits the functions one at a time), and the module reaches the llvm
// dialect.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2,fma,avx512f mlirpipe-opt %s --pipeline refbackend-vectorized | filecheck %s --check-prefix=LLVM

// VEC-LABEL: func.func @first
// VEC-NOT: linalg.matmul
// VEC: vector.contract
// VEC-LABEL: func.func @second
// VEC-NOT: linalg.matmul
// VEC: vector.contract
// LLVM: llvm.func @first
// LLVM: llvm.func @second
func.func @first(%x: tensor<32x32xf32>, %y: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %e = tensor.empty() : tensor<32x32xf32>
  %c = arith.constant 0.0 : f32
  %z = linalg.fill ins(%c : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %r = linalg.matmul ins(%x, %y : tensor<32x32xf32>, tensor<32x32xf32>) outs(%z : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}

func.func @second(%x: tensor<24x32xf32>, %y: tensor<32x48xf32>) -> tensor<24x48xf32> {
  %e = tensor.empty() : tensor<24x48xf32>
  %c = arith.constant 0.0 : f32
  %z = linalg.fill ins(%c : f32) outs(%e : tensor<24x48xf32>) -> tensor<24x48xf32>
  %r = linalg.matmul ins(%x, %y : tensor<24x32xf32>, tensor<32x48xf32>) outs(%z : tensor<24x48xf32>) -> tensor<24x48xf32>
  return %r : tensor<24x48xf32>
}
