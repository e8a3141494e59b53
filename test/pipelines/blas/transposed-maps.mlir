// Transposed operands without a transpose op: linalg.matmul with A^T and B^T maps, and a
// linalg.generic matmul with B's map permuted (x @ w.T); each maps to the transpose flags.
// RUN: mlirpipe-opt %s --split-input-file --pipeline refbackend-blas --stop-after matmul-to-blas | filecheck %s --check-prefix=BLAS

// BLAS-LABEL: func.func @maps_tt
// BLAS-NOT: linalg.matmul
// BLAS-DAG: %[[T:.*]] = arith.constant 112 : i32
// BLAS-DAG: %[[C5:.*]] = arith.constant 5 : i32
// BLAS-DAG: %[[C4:.*]] = arith.constant 4 : i32
// BLAS: llvm.call @scipy_cblas_sgemm(%{{[^,]*}}, %[[T]], %[[T]], %[[C5]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[C5]], %{{[^,]*}}, %[[C4]],

#ma = affine_map<(m, n, k) -> (k, m)>
#mb = affine_map<(m, n, k) -> (n, k)>
#mc = affine_map<(m, n, k) -> (m, n)>
func.func @maps_tt(%a: tensor<4x5xf32>, %b: tensor<3x4xf32>) -> tensor<5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %r = linalg.matmul indexing_maps = [#ma, #mb, #mc] ins(%a, %b : tensor<4x5xf32>, tensor<3x4xf32>) outs(%f : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}

// -----

// BLAS-LABEL: func.func @generic_bt
// BLAS-NOT: linalg.generic
// BLAS-DAG: %[[NT:.*]] = arith.constant 111 : i32
// BLAS-DAG: %[[T:.*]] = arith.constant 112 : i32
// BLAS: llvm.call @scipy_cblas_sgemm(%{{[^,]*}}, %[[NT]], %[[T]],

#ma = affine_map<(m, n, k) -> (m, k)>
#mb = affine_map<(m, n, k) -> (n, k)>
#mc = affine_map<(m, n, k) -> (m, n)>
func.func @generic_bt(%a: tensor<5x4xf32>, %b: tensor<3x4xf32>) -> tensor<5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %r = linalg.generic {indexing_maps = [#ma, #mb, #mc], iterator_types = ["parallel", "parallel", "reduction"]}
         ins(%a, %b : tensor<5x4xf32>, tensor<3x4xf32>) outs(%f : tensor<5x3xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}
