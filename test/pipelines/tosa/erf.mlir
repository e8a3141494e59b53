// gelu's erf: tosa.erf becomes math.erf, which has no LLVM intrinsic; the tosa pipeline expands
// it into arith as refbackend does, so only the llvm dialect is left.
// RUN: mlirpipe-opt %s --pipeline tosa --stop-after linalg-to-affine-loops | FileCheck %s --check-prefix=LOOPS
// RUN: mlirpipe-opt %s --pipeline tosa | FileCheck %s --check-prefix=LLVM

// LOOPS: math.erf

// LLVM-NOT: math.
// LLVM: llvm.func @forward(
// LLVM-NOT: math.

func.func @forward(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.erf %arg0 : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
