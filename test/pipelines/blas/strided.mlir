// Offset and strided slices: A's row stride 9 is its lda; B's column step 2 leaves no unit
// stride, so B alone is copied (linalg.copy in the helper); C is an offset slice's temporary.
// RUN: mlirpipe-opt %s --pipeline refbackend-blas --stop-after matmul-to-blas | filecheck %s --check-prefix=BLAS
// RUN: mlirpipe-opt %s --pipeline refbackend-blas | filecheck %s --check-prefix=LLVM

// BLAS: %[[A:.*]] = memref.subview %arg0[1, 2] [5, 4] [1, 1] : memref<8x9xf32> to memref<5x4xf32, strided<[9, 1], offset: 11>>
// BLAS: %[[B:.*]] = memref.subview %arg1[1, 1] [4, 3] [1, 2] : memref<6x10xf32> to memref<4x3xf32, strided<[10, 2], offset: 11>>
// BLAS: call @{{.*}}(%[[A]], %[[B]], %{{.*}})
// BLAS-NOT: linalg.matmul
// BLAS: func.func private
// BLAS: %{{.*}}, %[[A_OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %arg0
// BLAS: linalg.copy ins(%arg1 : memref<4x3xf32, strided<[10, 2], offset: 11>>)
// BLAS-NOT: linalg.copy
// BLAS-DAG: %[[C9:.*]] = arith.constant 9 : i32
// BLAS-DAG: %[[C3:.*]] = arith.constant 3 : i32
// The offset (11 elements) moves A's pointer: offset * 4 bytes.
// BLAS-DAG: %[[C4:.*]] = arith.constant 4 : index
// BLAS-DAG: arith.muli %[[A_OFF]], %[[C4]] : index
// BLAS: llvm.call @scipy_cblas_sgemm(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[C9]], %{{[^,]*}}, %[[C3]], %{{[^,]*}}, %{{[^,]*}}, %[[C3]])

// LLVM-NOT: {{^ *(%[^ ]+ = )?(func|memref|arith|cf|scf|linalg|bufferization|tensor)\.}}
// LLVM: llvm.call @scipy_cblas_sgemm(

func.func @forward(%a: tensor<8x9xf32>, %b: tensor<6x10xf32>) -> tensor<5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %sa = tensor.extract_slice %a[1, 2] [5, 4] [1, 1] : tensor<8x9xf32> to tensor<5x4xf32>
  %sb = tensor.extract_slice %b[1, 1] [4, 3] [1, 2] : tensor<6x10xf32> to tensor<4x3xf32>
  %e = tensor.empty() : tensor<5x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %r = linalg.matmul ins(%sa, %sb : tensor<5x4xf32>, tensor<4x3xf32>) outs(%f : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}
