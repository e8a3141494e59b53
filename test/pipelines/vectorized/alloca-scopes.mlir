// mlirpipe-inline-alloca-scopes: the scope convert-scf-to-openmp puts around a parallel loop's
// body is inlined (its result replaced by what it returns) when nothing in it allocates; one
// that holds a memref.alloca stays, and the pass says where and what to do.
// RUN: mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-inline-alloca-scopes)' --verify-diagnostics=all | filecheck %s

// CHECK-LABEL: func.func @no_alloca
// CHECK-NOT: memref.alloca_scope
// CHECK: %[[S:.*]] = arith.addf %arg0, %arg0 : f32
// CHECK-NEXT: memref.store %[[S]], %arg1[] : memref<f32>
// CHECK-NEXT: return %[[S]] : f32
func.func @no_alloca(%x: f32, %m: memref<f32>) -> f32 {
  %r = memref.alloca_scope -> (f32) {
    %s = arith.addf %x, %x : f32
    memref.alloca_scope.return %s : f32
  }
  memref.store %r, %m[] : memref<f32>
  return %r : f32
}

// -----

func.func @with_alloca(%x: f32) {
  memref.alloca_scope {
    // expected-error@+1 {{mlirpipe-inline-alloca-scopes: this memref.alloca is inside a memref.alloca_scope (a parallel loop's body), which therefore stays and convert-scf-to-cf cannot lower; hoist the allocation out of the loop (e.g. allocate it before the scf.forall) or lower it to memref.alloc}}
    %a = memref.alloca() : memref<f32>
    memref.store %x, %a[] : memref<f32>
  }
  return
}
