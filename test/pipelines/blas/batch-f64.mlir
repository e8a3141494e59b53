// torch.bmm in f64: one dgemm per batch in an scf.for, pointers advanced by the batch strides.
// RUN: mlirpipe-opt %s --pipeline refbackend-blas --stop-after matmul-to-blas | filecheck %s --check-prefix=BLAS
// RUN: mlirpipe-opt %s --pipeline refbackend-blas | filecheck %s --check-prefix=LLVM

// BLAS-LABEL: func.func @forward
// BLAS-NOT: linalg.batch_matmul
// BLAS: call @{{.*}}(%arg0, %arg1, %{{.*}}) : (memref<3x5x4xf64>, memref<3x4x6xf64>, memref<3x5x6xf64>) -> ()
// BLAS: llvm.func @scipy_cblas_dgemm(i32, i32, i32, i32, i32, i32, f64, !llvm.ptr, i32, !llvm.ptr, i32, f64, !llvm.ptr, i32)
// BLAS: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:3, %[[STRIDES:.*]]:3 = memref.extract_strided_metadata %arg0
// BLAS: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// BLAS: arith.muli %[[I]], %[[STRIDES]]#0 : index
// BLAS: llvm.call @scipy_cblas_dgemm(
// BLAS-NEXT: }
// BLAS-NOT: linalg.

// LLVM-NOT: {{^ *(%[^ ]+ = )?(func|memref|arith|cf|scf|linalg|bufferization|tensor)\.}}
// LLVM: llvm.call @scipy_cblas_dgemm(

func.func @forward(%a: tensor<3x5x4xf64>, %b: tensor<3x4x6xf64>) -> tensor<3x5x6xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<3x5x6xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<3x5x6xf64>) -> tensor<3x5x6xf64>
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x5x4xf64>, tensor<3x4x6xf64>) outs(%f : tensor<3x5x6xf64>) -> tensor<3x5x6xf64>
  return %r : tensor<3x5x6xf64>
}
