// A zero-filled matmul through refbackend-dps-blas: the caller's out-param is written by the
// gemm alone. Between the entry's start and the gemm call there is no allocation, no fill and no
// copy, and nothing runs after it; refbackend-blas (callback ABI) still allocates its result.
// RUN: mlirpipe-opt %s --pipeline refbackend-dps-blas --stop-after matmul-to-blas | filecheck %s --check-prefix=BLAS
// RUN: mlirpipe-opt %s --pipeline refbackend-dps-blas | filecheck %s --check-prefix=LLVM
// RUN: mlirpipe-opt %s --pipeline refbackend-blas | filecheck %s --check-prefix=CALLBACK

// BLAS-LABEL: func.func @forward(%arg0: memref<64x64xf32>, %arg1: memref<64x64xf32>, %arg2: memref<64x64xf32>)
// BLAS-NEXT: call @mlirpipe_blas_f32_gemm(%arg0, %arg1, %arg2)
// BLAS-NEXT: return
// BLAS-NEXT: }
// BLAS-NOT: linalg.fill
// BLAS-NOT: memref.copy
// BLAS-NOT: memref.alloc

// LLVM-LABEL: llvm.func @forward(
// LLVM-NOT: llvm.call @malloc
// LLVM-NOT: llvm.call @memrefCopy
// LLVM-NOT: llvm.intr.memcpy
// LLVM-NOT: llvm.intr.memset
// LLVM-NOT: llvm.store
// LLVM-NOT: llvm.br
// LLVM: llvm.call @mlirpipe_blas_f32_gemm(
// LLVM-NEXT: llvm.return
// LLVM-LABEL: llvm.func @_mlir_ciface_forward(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr)
// LLVM-NOT: llvm.call @malloc
// LLVM: llvm.call @forward(
// LLVM-NEXT: llvm.return
// LLVM-NOT: llvm.call @malloc
// LLVM: llvm.call @scipy_cblas_sgemm(

// CALLBACK-LABEL: llvm.func @forward(
// CALLBACK: llvm.call @malloc
// CALLBACK: llvm.call @mlirpipe_blas_f32_gemm(
// CALLBACK: llvm.call @refbackend_consume_func_return_mrf32(

func.func @forward(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<64x64xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%1 : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %2 : tensor<64x64xf32>
}
