// The buddy-mlir seed: addmm (bias + x @ y) as TOSA: a batch matmul between reshapes, then an add.
// RUN: mlirpipe-opt %s --pipeline tosa --stop-after tosa-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: mlirpipe-opt %s --pipeline tosa --stop-after finalizing-bufferize | FileCheck %s --check-prefix=FINAL
// RUN: mlirpipe-opt %s --pipeline tosa --stop-after buffer-deallocation | FileCheck %s --check-prefix=DEALLOC
// RUN: mlirpipe-opt %s --pipeline tosa | FileCheck %s --check-prefix=LLVM

// LINALG-NOT: tosa.
// LINALG: tensor.expand_shape %arg1
// LINALG: tensor.expand_shape %arg2
// LINALG: linalg.fill
// LINALG: linalg.batch_matmul
// LINALG: tensor.collapse_shape
// LINALG: linalg.generic
// LINALG: arith.addf

// FINAL-NOT: bufferization.to_
// FINAL-LABEL: func.func @forward(%arg0: memref<3x3xf32>, %arg1: memref<3x3xf32>, %arg2: memref<3x3xf32>) -> memref<3x3xf32>
// FINAL: %[[ACC:.*]] = memref.alloc() {{.*}} : memref<1x3x3xf32>
// FINAL: linalg.batch_matmul {{.*}} outs(%[[ACC]] : memref<1x3x3xf32>)
// FINAL-NOT: bufferization.to_

// The batch-matmul accumulator dies after the add; the result escapes and is not freed.
// DEALLOC: %[[ACC:.*]] = memref.alloc() {{.*}} : memref<1x3x3xf32>
// DEALLOC: %[[OUT:.*]] = memref.alloc() {{.*}} : memref<3x3xf32>
// DEALLOC: linalg.generic
// DEALLOC: memref.dealloc %[[ACC]]
// DEALLOC-NEXT: return %[[OUT]]

// LLVM-NOT: linalg.
// LLVM: llvm.func @forward
// LLVM: llvm.func @_mlir_ciface_forward
// LLVM-NOT: linalg.

module {
  func.func @forward(%arg0: tensor<3x3xf32>, %arg1: tensor<3x3xf32>, %arg2: tensor<3x3xf32>) -> tensor<3x3xf32> {
    %0 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
    %1 = tosa.const_shape  {values = dense<[1, 3, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %2 = tosa.const_shape  {values = dense<3> : tensor<2xindex>} : () -> !tosa.shape<2>
    %3 = tosa.reshape %arg1, %1 : (tensor<3x3xf32>, !tosa.shape<3>) -> tensor<1x3x3xf32>
    %4 = tosa.reshape %arg2, %1 : (tensor<3x3xf32>, !tosa.shape<3>) -> tensor<1x3x3xf32>
    %5 = tosa.matmul %3, %4, %0, %0 : (tensor<1x3x3xf32>, tensor<1x3x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x3xf32>
    %6 = tosa.reshape %5, %2 : (tensor<1x3x3xf32>, !tosa.shape<2>) -> tensor<3x3xf32>
    %7 = tosa.add %6, %arg0 : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    return %7 : tensor<3x3xf32>
  }
}
