// The torch-mlir seed through refbackend-blas: the zero fill of the output folds into beta = 0, the matmul becomes one sgemm call, and the result reaches the llvm dialect.
// RUN: mlirpipe-opt %s --pipeline refbackend-blas --stop-after finalizing-bufferize | filecheck %s --check-prefix=BEFORE
// RUN: mlirpipe-opt %s --pipeline refbackend-blas --stop-after matmul-to-blas | filecheck %s --check-prefix=BLAS
// RUN: mlirpipe-opt %s --pipeline refbackend-blas | filecheck %s --check-prefix=LLVM

// BEFORE: %[[OUT:.*]] = memref.alloc()
// BEFORE-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : memref<2x2xf32>)
// BEFORE-NEXT: linalg.matmul {{.*}} outs(%[[OUT]] : memref<2x2xf32>)

// BLAS-LABEL: func.func @forward(%arg0: memref<2x2xf32>) -> memref<2x2xf32>
// BLAS: %[[W:.*]] = memref.get_global @__constant_2x2xf32
// BLAS-NEXT: %[[OUT:.*]] = memref.alloc()
// BLAS-NEXT: call @[[GEMM:mlirpipe_blas_f32_gemm]](%arg0, %[[W]], %[[OUT]])
// BLAS-NEXT: return %[[OUT]]
// BLAS: llvm.func @scipy_cblas_sgemm(i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32)
// BLAS: func.func private @[[GEMM]]
// BLAS-DAG: %[[TWO:.*]] = arith.constant 2 : i32
// BLAS-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// BLAS-DAG: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// BLAS-DAG: %[[ROW:.*]] = arith.constant 101 : i32
// BLAS-DAG: %[[N:.*]] = arith.constant 111 : i32
// BLAS: llvm.call @scipy_cblas_sgemm(%[[ROW]], %[[N]], %[[N]], %[[TWO]], %[[TWO]], %[[TWO]], %[[ONE]], %{{.*}}, %[[TWO]], %{{.*}}, %[[TWO]], %[[BETA]], %{{.*}}, %[[TWO]])
// BLAS-NOT: linalg.matmul
// BLAS-NOT: linalg.fill
// BLAS-NOT: memref.copy

// LLVM-NOT: {{^ *(%[^ ]+ = )?(func|memref|arith|cf|scf|linalg|bufferization|tensor)\.}}
// LLVM: llvm.func @forward
// LLVM: llvm.call @mlirpipe_blas_f32_gemm
// LLVM: llvm.func @scipy_cblas_sgemm(
// LLVM: llvm.call @scipy_cblas_sgemm(
// LLVM-NOT: {{^ *(%[^ ]+ = )?(func|memref|arith|cf|scf|linalg|bufferization|tensor)\.}}

func.func @forward(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant dense<1.000000e+00> : tensor<2x2xf32>
  %0 = tensor.empty() : tensor<2x2xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = linalg.matmul ins(%arg0, %cst_0 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%1 : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %2 : tensor<2x2xf32>
}
