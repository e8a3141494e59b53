// An i32 matmul has no BLAS gemm: the pass leaves it exactly as it was and, with debug, says why.
// The remark goes to the stderr of the process, so this RUN line runs the tool as a subprocess.
// RUN: %python -m pytest_mlirpipe.tools.opt %s --pass-pipeline 'builtin.module(mlirpipe-matmul-to-blas{debug=true})' 2>&1 | filecheck %s --check-prefix=DEBUG
// RUN: mlirpipe-opt %s --pass-pipeline 'builtin.module(mlirpipe-matmul-to-blas)' | filecheck %s --check-prefix=SAME
// RUN: mlirpipe-opt %s --pipeline refbackend-blas --stop-after matmul-to-blas | filecheck %s --check-prefix=STAGE

// DEBUG: remark: mlirpipe-matmul-to-blas: 'linalg.matmul' left as it was: element type i32 has no BLAS gemm (f32 -> cblas_sgemm, f64 -> cblas_dgemm)

// SAME-LABEL: func.func @forward(%arg0: memref<3x4xi32>, %arg1: memref<4x2xi32>, %arg2: memref<3x2xi32>)
// SAME-NEXT: linalg.matmul ins(%arg0, %arg1 : memref<3x4xi32>, memref<4x2xi32>) outs(%arg2 : memref<3x2xi32>)
// SAME-NEXT: return
// SAME-NOT: cblas
// SAME-NOT: func.func private

// Through the pipeline's stage, likewise.
// STAGE: linalg.matmul ins(%arg0, %arg1 : memref<3x4xi32>, memref<4x2xi32>) outs(%arg2 : memref<3x2xi32>)
// STAGE-NOT: cblas

func.func @forward(%a: memref<3x4xi32>, %b: memref<4x2xi32>, %c: memref<3x2xi32>) {
  linalg.matmul ins(%a, %b : memref<3x4xi32>, memref<4x2xi32>) outs(%c : memref<3x2xi32>)
  return
}
