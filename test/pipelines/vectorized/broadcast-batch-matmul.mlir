// mlirpipe-flatten-broadcast-batch-matmul: a batch_matmul whose B is one 2-d tensor broadcast
// along the batch (a linalg.generic that only copies it) becomes one linalg.matmul of A's
// batches stacked with that tensor, expanded back; the broadcast and C's 3-d fill are gone.
// In refbackend-vectorized (stage flatten-batch-matmuls) pack-panels then packs that matmul.
// Other batch_matmuls are left as they are.
// RUN: mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-flatten-broadcast-batch-matmul)' | filecheck %s
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after pack-panels | filecheck %s --check-prefix=PACK

// CHECK-LABEL: func.func @broadcast
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.batch_matmul
// CHECK: %[[A:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<3x2x4xf32> into tensor<6x4xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<6x32xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<6x32xf32>)
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[A]], %arg1 : tensor<6x4xf32>, tensor<4x32xf32>) outs(%[[F]] : tensor<6x32xf32>)
// CHECK: %[[R:.*]] = tensor.expand_shape %[[M]] {{\[\[}}0, 1], [2]] output_shape [3, 2, 32] : tensor<6x32xf32> into tensor<3x2x32xf32>
// CHECK-NOT: linalg.
// CHECK: return %[[R]]
// PACK-LABEL: func.func @broadcast
// PACK-NOT: linalg.batch_matmul
// PACK: linalg.contract {{.*}} {mlirpipe.packed = "both"} ins({{.*}} : tensor<1x4x6xf32>, tensor<2x4x16xf32>)
#bcast = affine_map<(d0, d1, d2) -> (d1, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @broadcast(%a: tensor<3x2x4xf32>, %w: tensor<4x32xf32>) -> tensor<3x2x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4x32xf32>
  %b = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : tensor<4x32xf32>) outs(%e : tensor<3x4x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x4x32xf32>
  %ce = tensor.empty() : tensor<3x2x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ce : tensor<3x2x32xf32>) -> tensor<3x2x32xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x2x4xf32>, tensor<3x4x32xf32>) outs(%c : tensor<3x2x32xf32>) -> tensor<3x2x32xf32>
  return %r : tensor<3x2x32xf32>
}

// -----

// C given (not a fill): it is collapsed too, and accumulated into.
// CHECK-LABEL: func.func @accumulate
// CHECK: %[[C:.*]] = tensor.collapse_shape %arg2 {{\[\[}}0, 1], [2]] : tensor<3x2x32xf32> into tensor<6x32xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %arg1 : tensor<6x4xf32>, tensor<4x32xf32>) outs(%[[C]] : tensor<6x32xf32>)
#bcast = affine_map<(d0, d1, d2) -> (d1, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @accumulate(%a: tensor<3x2x4xf32>, %w: tensor<4x32xf32>, %c: tensor<3x2x32xf32>) -> tensor<3x2x32xf32> {
  %e = tensor.empty() : tensor<3x4x32xf32>
  %b = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : tensor<4x32xf32>) outs(%e : tensor<3x4x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x4x32xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x2x4xf32>, tensor<3x4x32xf32>) outs(%c : tensor<3x2x32xf32>) -> tensor<3x2x32xf32>
  return %r : tensor<3x2x32xf32>
}

// -----

// Left as they are: B a batch of its own, and B a generic that computes (not only copies).
// CHECK-LABEL: func.func @kept
// CHECK-NOT: linalg.matmul
// CHECK-COUNT-2: linalg.batch_matmul
#bcast = affine_map<(d0, d1, d2) -> (d1, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @kept(%a: tensor<3x2x4xf32>, %b: tensor<3x4x32xf32>, %w: tensor<4x32xf32>, %c: tensor<3x2x32xf32>) -> (tensor<3x2x32xf32>, tensor<3x2x32xf32>) {
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x2x4xf32>, tensor<3x4x32xf32>) outs(%c : tensor<3x2x32xf32>) -> tensor<3x2x32xf32>
  %e = tensor.empty() : tensor<3x4x32xf32>
  %d = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : tensor<4x32xf32>) outs(%e : tensor<3x4x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %twice = arith.addf %in, %in : f32
    linalg.yield %twice : f32
  } -> tensor<3x4x32xf32>
  %s = linalg.batch_matmul ins(%a, %d : tensor<3x2x4xf32>, tensor<3x4x32xf32>) outs(%c : tensor<3x2x32xf32>) -> tensor<3x2x32xf32>
  return %r, %s : tensor<3x2x32xf32>, tensor<3x2x32xf32>
}

// -----

// A and B of bf16 accumulated into C of f32: A is collapsed as bf16, C as f32.
// CHECK-LABEL: func.func @mixed
// CHECK: %[[A:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<3x2x4xbf16> into tensor<6x4xbf16>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<6x32xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<6x32xf32>)
// CHECK: linalg.matmul ins(%[[A]], %arg1 : tensor<6x4xbf16>, tensor<4x32xbf16>) outs(%[[F]] : tensor<6x32xf32>)
// PACK-LABEL: func.func @mixed
// PACK: linalg.matmul
#bcast = affine_map<(d0, d1, d2) -> (d1, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @mixed(%a: tensor<3x2x4xbf16>, %w: tensor<4x32xbf16>) -> tensor<3x2x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4x32xbf16>
  %b = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : tensor<4x32xbf16>) outs(%e : tensor<3x4x32xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  } -> tensor<3x4x32xbf16>
  %ce = tensor.empty() : tensor<3x2x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ce : tensor<3x2x32xf32>) -> tensor<3x2x32xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x2x4xbf16>, tensor<3x4x32xbf16>) outs(%c : tensor<3x2x32xf32>) -> tensor<3x2x32xf32>
  return %r : tensor<3x2x32xf32>
}
