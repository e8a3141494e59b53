// addmm with the bias broadcast into the output first: beta = 1, the broadcast and the matmul
// write the same buffer (bufferized in place, no temporary to copy from).
// RUN: mlirpipe-opt %s --pipeline refbackend-blas --stop-after finalizing-bufferize | filecheck %s --check-prefix=BEFORE
// RUN: mlirpipe-opt %s --pipeline refbackend-blas --stop-after matmul-to-blas | filecheck %s --check-prefix=BLAS

// BEFORE: %[[OUT:.*]] = memref.alloc()
// BEFORE-NEXT: linalg.generic {{.*}} outs(%[[OUT]] : memref<5x3xf32>)
// BEFORE: linalg.matmul {{.*}} outs(%[[OUT]] : memref<5x3xf32>)
// BEFORE-NOT: memref.copy

// BLAS-LABEL: func.func @forward
// BLAS: %[[OUT:.*]] = memref.alloc()
// BLAS-NEXT: linalg.generic {{.*}} ins(%arg2 : memref<3xf32>) outs(%[[OUT]] : memref<5x3xf32>)
// BLAS: call @{{.*}}(%arg0, %arg1, %[[OUT]])
// BLAS-NEXT: return %[[OUT]]
// BLAS-NOT: memref.copy
// BLAS-DAG: %[[BETA:.*]] = arith.constant 1.000000e+00 : f32
// BLAS: llvm.call @scipy_cblas_sgemm({{.*}}, %[[BETA]], %{{[^,]*}}, %{{[^,]*}})

#row = affine_map<(m, n) -> (n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @forward(%x: tensor<5x4xf32>, %w: tensor<4x3xf32>, %bias: tensor<3xf32>) -> tensor<5x3xf32> {
  %e = tensor.empty() : tensor<5x3xf32>
  %init = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
            ins(%bias : tensor<3xf32>) outs(%e : tensor<5x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<5x3xf32>
  %r = linalg.matmul ins(%x, %w : tensor<5x4xf32>, tensor<4x3xf32>) outs(%init : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}
