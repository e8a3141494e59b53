// The matmul of the seed becomes one BLAS call, whatever names the printer gives its values.
// RUN: mlirpipe-opt %s --pipeline refbackend-blas --assert 'no-op linalg.matmul after matmul-to-blas' --assert 'exactly 1 func.call @mlirpipe_blas_*_gemm after matmul-to-blas' --assert 'exactly 1 llvm.call @*cblas_sgemm' --assert 'count(llvm.call) >= 1' --assert 'only-dialects llvm,builtin' -o %t

func.func @forward(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c0 = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<2x2xf32>
  %1 = linalg.fill ins(%c0 : f32) outs(%0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<2x2xf32>, tensor<2x2xf32>) outs(%1 : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %2 : tensor<2x2xf32>
}
