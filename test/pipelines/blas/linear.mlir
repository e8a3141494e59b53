// nn.Linear(4, 3) as torch-mlir imports it (mlirpipe import ...::Lin --inputs 5x4xf32 --to linalg):
// the weight transpose becomes the B transpose flag, the zero fill beta = 0; the bias add after
// the matmul stays a linalg.generic.
// RUN: mlirpipe-opt %s --pipeline refbackend-blas --stop-after matmul-to-blas | filecheck %s --check-prefix=BLAS
// RUN: mlirpipe-opt %s --pipeline refbackend-blas | filecheck %s --check-prefix=LLVM

// BLAS-LABEL: func.func @forward(%arg0: memref<5x4xf32>) -> memref<5x3xf32>
// BLAS: %[[W:.*]] = memref.get_global @__constant_3x4xf32 : memref<3x4xf32>
// BLAS-NOT: linalg.transpose
// BLAS-NOT: linalg.fill
// BLAS: %[[OUT:.*]] = memref.alloc() {{.*}} : memref<5x3xf32>
// BLAS-NEXT: call @[[GEMM:.*]](%arg0, %[[W]], %[[OUT]]) : (memref<5x4xf32>, memref<3x4xf32>, memref<5x3xf32>) -> ()
// BLAS: linalg.generic
// BLAS-SAME: ins(%[[OUT]], %{{.*}} : memref<5x3xf32>, memref<3xf32>)
// BLAS: arith.addf
// M=5 N=3 K=4, A NoTrans lda=4, B Trans ldb=4, beta=0, ldc=3.
// BLAS-DAG: %[[C3:.*]] = arith.constant 3 : i32
// BLAS-DAG: %[[C4:.*]] = arith.constant 4 : i32
// BLAS-DAG: %[[C5:.*]] = arith.constant 5 : i32
// BLAS-DAG: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// BLAS-DAG: %[[ROW:.*]] = arith.constant 101 : i32
// BLAS-DAG: %[[NT:.*]] = arith.constant 111 : i32
// BLAS-DAG: %[[T:.*]] = arith.constant 112 : i32
// BLAS: llvm.call @scipy_cblas_sgemm(%[[ROW]], %[[NT]], %[[T]], %[[C5]], %[[C3]], %[[C4]], %{{.*}}, %{{.*}}, %[[C4]], %{{.*}}, %[[C4]], %[[BETA]], %{{.*}}, %[[C3]])

// LLVM-NOT: {{^ *(%[^ ]+ = )?(func|memref|arith|cf|scf|linalg|bufferization|tensor)\.}}
// LLVM: llvm.call @scipy_cblas_sgemm(

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module {
  func.func @forward(%arg0: tensor<5x4xf32>) -> tensor<5x3xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant dense_resource<torch_tensor_3_torch.float32> : tensor<3xf32>
    %cst_1 = arith.constant dense_resource<torch_tensor_3_4_torch.float32> : tensor<3x4xf32>
    %0 = tensor.empty() : tensor<4x3xf32>
    %transposed = linalg.transpose ins(%cst_1 : tensor<3x4xf32>) outs(%0 : tensor<4x3xf32>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<5x3xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<5x3xf32>) -> tensor<5x3xf32>
    %3 = linalg.matmul ins(%arg0, %transposed : tensor<5x4xf32>, tensor<4x3xf32>) outs(%2 : tensor<5x3xf32>) -> tensor<5x3xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%3, %cst_0 : tensor<5x3xf32>, tensor<3xf32>) outs(%1 : tensor<5x3xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %5 = arith.addf %in, %in_2 : f32
      linalg.yield %5 : f32
    } -> tensor<5x3xf32>
    return %4 : tensor<5x3xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_3_torch.float32: "0x04000000C089733DEC6D6ABE84887ABE",
      torch_tensor_3_4_torch.float32: "0x040000005C99FBBE48F8403E883E843E3A28AC3E4CFF1B3E108F2D3E80A973BC10F772BE5C912F3E926AD73E3C1FD83EC0F7B33C"
    }
  }
#-}
