// The buddy-mlir seed: a 10-element add imported from FX as TOSA, lowered by the tosa pipeline.
// RUN: mlirpipe-opt %s --pipeline tosa --stop-after tosa-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: mlirpipe-opt %s --pipeline tosa --stop-after bufferize | FileCheck %s --check-prefix=PARTIAL
// RUN: mlirpipe-opt %s --pipeline tosa --stop-after finalizing-bufferize | FileCheck %s --check-prefix=FINAL
// RUN: mlirpipe-opt %s --pipeline tosa --stop-after linalg-to-affine-loops | FileCheck %s --check-prefix=LOOPS
// RUN: mlirpipe-opt %s --pipeline tosa | FileCheck %s --check-prefix=LLVM

// LINALG-NOT: tosa.
// LINALG: linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%arg0, %arg1 : tensor<10xf32>, tensor<10xf32>)
// LINALG: arith.addf

// PARTIAL-LABEL: func.func @forward(%arg0: tensor<10xf32>, %arg1: tensor<10xf32>) -> tensor<10xf32>
// PARTIAL-DAG: bufferization.to_buffer %arg0
// PARTIAL-DAG: bufferization.to_buffer %arg1
// PARTIAL: bufferization.to_tensor

// FINAL-NOT: bufferization.to_
// FINAL-LABEL: func.func @forward(%arg0: memref<10xf32>, %arg1: memref<10xf32>) -> memref<10xf32>
// FINAL-NOT: bufferization.to_

// LOOPS-NOT: linalg.
// LOOPS-NOT: affine.
// LOOPS: scf.for
// LOOPS: arith.addf
// LOOPS-NOT: linalg.

// LLVM-NOT: {{^ *(%[^ ]+ = )?(func|memref|arith|cf|scf|affine|linalg|tensor|tosa)\.}}
// LLVM: llvm.func @forward
// LLVM: llvm.fadd
// LLVM: llvm.func @_mlir_ciface_forward
// LLVM-NOT: {{^ *(%[^ ]+ = )?(func|memref|arith|cf|scf|affine|linalg|tensor|tosa)\.}}

module {
  func.func @forward(%arg0: tensor<10xf32>, %arg1: tensor<10xf32>) -> tensor<10xf32> {
    %0 = tosa.add %arg0, %arg1 : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
    return %0 : tensor<10xf32>
  }
}
