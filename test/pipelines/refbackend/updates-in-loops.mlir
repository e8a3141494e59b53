// A tensor updated element by element (tensor.insert, as torch-mlir lowers multinomial) or a
// slice at a time (tensor.insert_slice) inside an scf.for stays one buffer that the loop
// writes in place: no allocation and no copy of the whole tensor per iteration. A tm_tensor op
// in a loop still gets a new buffer per iteration: tm-tensor-bufferize has no alias analysis.
// RUN: mlirpipe-opt %s --split-input-file --pipeline refbackend --stop-after finalizing-bufferize | FileCheck %s
// RUN: mlirpipe-opt %s --split-input-file --pipeline refbackend --stop-after buffer-deallocation | FileCheck %s --check-prefix=DEALLOC
// RUN: mlirpipe-opt %s --split-input-file --pipeline refbackend-dps --stop-after finalizing-bufferize | FileCheck %s
// RUN: mlirpipe-opt %s --split-input-file --pipeline refbackend-blas --stop-after finalizing-bufferize | FileCheck %s
// RUN: mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after finalizing-bufferize | FileCheck %s

// The loop carries the one buffer allocated before it and stores into it.
// CHECK-LABEL: func.func @insert_in_loop
// CHECK: %[[BUF:.*]] = memref.alloc() {{.*}} : memref<1048576xi64>
// CHECK-NEXT: scf.for {{.*}} iter_args(%[[ITER:.*]] = %[[BUF]])
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: memref.store %{{.*}}, %[[ITER]][%{{.*}}] : memref<1048576xi64>
// CHECK-NEXT: scf.yield %[[ITER]]
// CHECK-NEXT: }
// CHECK-NEXT: return

// The argument is copied once, before the loop (it must not change); each slice is copied
// into its place in that copy.
// CHECK-LABEL: func.func @insert_slice_in_loop(%arg0: memref<1048576xf32>, %arg1: memref<4xf32>)
// CHECK: %[[BUF:.*]] = memref.alloc() {{.*}} : memref<1048576xf32>
// CHECK-NEXT: memref.copy %arg0, %[[BUF]]
// CHECK-NEXT: scf.for {{.*}} iter_args(%[[ITER:.*]] = %[[BUF]])
// CHECK-NEXT: %[[SLICE:.*]] = memref.subview %[[ITER]][%{{.*}}] [4] [1]
// CHECK-NEXT: memref.copy %arg1, %[[SLICE]]
// CHECK-NEXT: scf.yield %[[ITER]]

// tm-tensor-bufferize gives the scatter a new buffer holding a copy of the one it updates.
// CHECK-LABEL: func.func @scatter_in_loop
// CHECK: scf.for {{.*}} iter_args(%[[ITER:.*]] = %{{.*}})
// CHECK-NEXT: %[[NEW:.*]] = memref.alloc() : memref<1048576xf32>
// CHECK-NEXT: memref.copy %[[ITER]], %[[NEW]]
// CHECK-NEXT: tm_tensor.scatter {{.*}} outs(%[[NEW]] : memref<1048576xf32>)
// CHECK: scf.yield %[[NEW]]

// Nothing to free inside the insert loops (which now store straight into the buffer they
// return); the scatter loop frees the buffer of the iteration before.
// DEALLOC-LABEL: func.func @insert_in_loop
// DEALLOC: %[[BUF:.*]] = memref.alloc()
// DEALLOC-NEXT: scf.for
// DEALLOC-NOT: memref.alloc
// DEALLOC-NOT: memref.dealloc
// DEALLOC: memref.store %{{.*}}, %[[BUF]]
// DEALLOC-NOT: memref.alloc
// DEALLOC-NOT: memref.dealloc
// DEALLOC: return %[[BUF]]
// DEALLOC-LABEL: func.func @insert_slice_in_loop
// DEALLOC: scf.for
// DEALLOC-NOT: memref.alloc
// DEALLOC-NOT: memref.dealloc
// DEALLOC: return
// DEALLOC-LABEL: func.func @scatter_in_loop
// DEALLOC: scf.for
// DEALLOC: memref.alloc
// DEALLOC: memref.dealloc
// DEALLOC: scf.yield

func.func @insert_in_loop(%count: tensor<i64>) -> tensor<1048576xi64> {
  %k = tensor.extract %count[] : tensor<i64>
  %n = arith.index_cast %k : i64 to index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = tensor.empty() : tensor<1048576xi64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %init) -> (tensor<1048576xi64>) {
    %v = arith.index_cast %i : index to i64
    %u = tensor.insert %v into %t[%i] : tensor<1048576xi64>
    scf.yield %u : tensor<1048576xi64>
  }
  return %r : tensor<1048576xi64>
}

// -----

func.func @insert_slice_in_loop(%arg0: tensor<1048576xf32>, %row: tensor<4xf32>) -> tensor<1048576xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %cn = arith.constant 1048576 : index
  %r = scf.for %i = %c0 to %cn step %c4 iter_args(%t = %arg0) -> (tensor<1048576xf32>) {
    %u = tensor.insert_slice %row into %t[%i] [4] [1] : tensor<4xf32> into tensor<1048576xf32>
    scf.yield %u : tensor<1048576xf32>
  }
  return %r : tensor<1048576xf32>
}

// -----

func.func @scatter_in_loop(%arg0: tensor<1048576xf32>, %idx: tensor<1x1xi64>, %upd: tensor<1x1xf32>) -> tensor<1048576xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant 1048576 : index
  %r = scf.for %i = %c0 to %cn step %c1 iter_args(%t = %arg0) -> (tensor<1048576xf32>) {
    %u = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%upd, %idx : tensor<1x1xf32>, tensor<1x1xi64>) outs(%t : tensor<1048576xf32>) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %b, %a : f32
      tm_tensor.yield %s : f32
    } -> tensor<1048576xf32>
    scf.yield %u : tensor<1048576xf32>
  }
  return %r : tensor<1048576xf32>
}
