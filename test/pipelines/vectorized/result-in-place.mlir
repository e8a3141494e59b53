// refbackend-vectorized writes C straight into the caller's buffer: the function returns the
// allocation C was written in, not a collapse_shape of its view in strips and panels
// (mlirpipe-fold-reshape-pairs), so buffer-results-to-out-params makes the allocation the
// out-param and nothing is copied. Also when M is not a multiple of the strip height (two
// contracts, each writing its rows of C in place).
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after fold-reshapes | filecheck %s --check-prefix=FOLD
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after buffer-deallocation | filecheck %s
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-fold-reshape-pairs)' | filecheck %s --check-prefix=PAIRS

// FOLD-LABEL: func.func @strips
// FOLD: %[[ALLOC:.*]] = memref.alloc() {{.*}} : memref<102x512xf32>
// FOLD: memref.expand_shape %[[ALLOC]]
// FOLD-NOT: memref.collapse_shape
// FOLD: return %[[ALLOC]] : memref<102x512xf32>
// CHECK-LABEL: func.func @strips
// CHECK-SAME: %[[OUT:[a-z0-9_]+]]: memref<102x512xf32>)
// CHECK-NOT: memref.alloc() {{.*}} : memref<102x512xf32>
// CHECK: memref.expand_shape %[[OUT]]
// CHECK-NOT: memref.copy
// CHECK: return
func.func @strips(%a: tensor<102x16xf32>, %b: tensor<16x512xf32>) -> tensor<102x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<102x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<102x512xf32>) -> tensor<102x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<102x16xf32>, tensor<16x512xf32>) outs(%f : tensor<102x512xf32>) -> tensor<102x512xf32>
  return %r : tensor<102x512xf32>
}

// -----

// CHECK-LABEL: func.func @split
// CHECK-SAME: %[[OUT:[a-z0-9_]+]]: memref<64x512xf32>)
// CHECK-NOT: memref.alloc() {{.*}} : memref<64x512xf32>
// CHECK: memref.subview %[[OUT]][0, 0] [60, 512]
// CHECK: memref.subview %[[OUT]][60, 0] [4, 512]
// CHECK-NOT: memref.copy
// CHECK: return
func.func @split(%a: tensor<64x16xf32>, %b: tensor<16x512xf32>) -> tensor<64x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x512xf32>) -> tensor<64x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x16xf32>, tensor<16x512xf32>) outs(%f : tensor<64x512xf32>) -> tensor<64x512xf32>
  return %r : tensor<64x512xf32>
}

// -----

// The pass alone: a collapse_shape undoing an expand_shape is its source; one with other
// groups, or of another op's result, stays.
// PAIRS-LABEL: func.func @pairs
// PAIRS: %[[E:.*]] = memref.expand_shape %arg0 {{\[\[}}0, 1], [2]]
// PAIRS: %[[K:.*]] = memref.collapse_shape %[[E]] {{\[\[}}0], [1, 2]]
// PAIRS: %[[S:.*]] = memref.collapse_shape %arg1
// PAIRS: return %arg0, %[[K]], %[[S]]
func.func @pairs(%m: memref<6x8xf32>, %n: memref<2x3x8xf32>) -> (memref<6x8xf32>, memref<2x24xf32>, memref<6x8xf32>) {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [2, 3, 8] : memref<6x8xf32> into memref<2x3x8xf32>
  %back = memref.collapse_shape %e [[0, 1], [2]] : memref<2x3x8xf32> into memref<6x8xf32>
  %other = memref.collapse_shape %e [[0], [1, 2]] : memref<2x3x8xf32> into memref<2x24xf32>
  %plain = memref.collapse_shape %n [[0, 1], [2]] : memref<2x3x8xf32> into memref<6x8xf32>
  return %back, %other, %plain : memref<6x8xf32>, memref<2x24xf32>, memref<6x8xf32>
}
