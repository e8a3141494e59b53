// Phase 2 of onnx-linalg on buffers: a loop-invariant scratch buffer is hoisted out of the loop
// (buffer-hoisting), then freed once after its last use (buffer-deallocation).
// The input is already bufferized and in loops, so the run starts after linalg-to-loops.
// RUN: mlirpipe-opt %s --pipeline onnx-linalg --start-after linalg-to-loops --stop-after buffer-hoisting | FileCheck %s --check-prefix=HOIST
// RUN: mlirpipe-opt %s --pipeline onnx-linalg --start-after linalg-to-loops --stop-after buffer-deallocation | FileCheck %s --check-prefix=DEALLOC
// RUN: mlirpipe-opt %s --pipeline onnx-linalg --start-after linalg-to-loops | FileCheck %s --check-prefix=LLVM

// HOIST-LABEL: func.func @scratch_in_loop
// HOIST: %[[TMP:.*]] = memref.alloc() : memref<8xf32>
// HOIST-NEXT: scf.for
// HOIST-NOT: memref.alloc
// HOIST: memref.store %{{.*}}, %[[TMP]]
// HOIST-NOT: memref.dealloc

// DEALLOC: %[[TMP:.*]] = memref.alloc() : memref<8xf32>
// DEALLOC-NEXT: scf.for
// DEALLOC: memref.load %[[TMP]]
// DEALLOC: memref.dealloc %[[TMP]] : memref<8xf32>
// DEALLOC-NEXT: return

// LLVM: llvm.call @malloc
// LLVM: llvm.call @free

func.func @scratch_in_loop(%arg0: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %cst = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %tmp = memref.alloc() : memref<8xf32>
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %arg0[%i, %j] : memref<4x8xf32>
      %w = arith.mulf %v, %cst : f32
      memref.store %w, %tmp[%j] : memref<8xf32>
    }
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %tmp[%j] : memref<8xf32>
      memref.store %v, %out[%i, %j] : memref<4x8xf32>
    }
  }
  return
}
