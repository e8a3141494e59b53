// The torch-mlir seed: a 2x2 matmul against a ones constant, lowered by RefBackend stage by stage.
// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after generalize-tensor-pad | FileCheck %s --check-prefix=INPUT
// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after bufferize | FileCheck %s --check-prefix=PARTIAL
// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after finalizing-bufferize | FileCheck %s --check-prefix=FINAL
// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after buffer-deallocation | FileCheck %s --check-prefix=DEALLOC
// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after munge-calling-conventions | FileCheck %s --check-prefix=MUNGE
// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after linalg-to-loops | FileCheck %s --check-prefix=LOOPS
// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after lower-to-cf | FileCheck %s --check-prefix=CF
// RUN: mlirpipe-opt %s --pipeline refbackend | FileCheck %s --check-prefix=LLVM

// Nothing to generalize: still tensors, still linalg.
// INPUT-LABEL: func.func @forward(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32>
// INPUT: linalg.matmul
// INPUT-NOT: memref

// Bodies bufferized, boundaries not: the shape the seed's linalg-bufferize left.
// PARTIAL-LABEL: func.func @forward(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32>
// PARTIAL: %[[ARG:.*]] = bufferization.to_buffer %arg0 : tensor<2x2xf32> to memref<2x2xf32>
// PARTIAL: memref.get_global @__constant_2x2xf32
// PARTIAL: linalg.matmul ins(%[[ARG]], %{{.*}} : memref<2x2xf32>, memref<2x2xf32>)
// PARTIAL: %[[RES:.*]] = bufferization.to_tensor %{{.*}} : memref<2x2xf32> to tensor<2x2xf32>
// PARTIAL: return %[[RES]] : tensor<2x2xf32>

// After finalizing-bufferize: memref signature, no to_tensor/to_buffer left.
// FINAL-NOT: bufferization.to_tensor
// FINAL-NOT: bufferization.to_buffer
// FINAL-LABEL: func.func @forward(%arg0: memref<2x2xf32>) -> memref<2x2xf32>
// FINAL: linalg.matmul ins(%arg0, %{{.*}} : memref<2x2xf32>, memref<2x2xf32>)
// FINAL-NOT: bufferization.to_tensor
// FINAL-NOT: bufferization.to_buffer

// One buffer, zero-filled and accumulated into in place (no temporary, no copy), is returned
// and so not freed.
// DEALLOC: %[[OUT:.*]] = memref.alloc()
// DEALLOC-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : memref<2x2xf32>)
// DEALLOC-NEXT: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<2x2xf32>, memref<2x2xf32>) outs(%[[OUT]] : memref<2x2xf32>)
// DEALLOC-NOT: memref.dealloc
// DEALLOC-NOT: memref.copy
// DEALLOC: return %[[OUT]]

// ExecutionEngine ABI: unranked memrefs in, results through a callback.
// MUNGE: func.func private @refbackend_consume_func_return_mrf32(memref<*xf32>) attributes {llvm.emit_c_interface}
// MUNGE-LABEL: func.func @forward(%arg0: memref<*xf32>) attributes {llvm.emit_c_interface}
// MUNGE: call @refbackend_consume_func_return_mrf32
// MUNGE-NEXT: return

// No linalg op after linalg-to-loops.
// LOOPS-NOT: linalg.
// The multiply by the ones constant folds away; the reduction stays.
// LOOPS: scf.for
// LOOPS: scf.for
// LOOPS: scf.for
// LOOPS: memref.load %cast
// LOOPS: arith.addf
// LOOPS-NOT: linalg.

// CF-NOT: scf.
// CF-NOT: affine.
// CF: cf.br

// Only the llvm dialect at the end.
// LLVM-NOT: {{^ *(%[^ ]+ = )?(func|memref|arith|cf|scf|linalg|bufferization|tensor)\.}}
// LLVM: llvm.func @forward
// LLVM: llvm.func @_mlir_ciface_forward
// LLVM-NOT: {{^ *(%[^ ]+ = )?(func|memref|arith|cf|scf|linalg|bufferization|tensor)\.}}

func.func @forward(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant dense<1.000000e+00> : tensor<2x2xf32>
  %0 = tensor.empty() : tensor<2x2xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = linalg.matmul ins(%arg0, %cst_0 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%1 : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %2 : tensor<2x2xf32>
}
