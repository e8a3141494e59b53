// Reductions as torch-mlir lowers a softmax's through refbackend-vectorized (as with AVX2).
// After simplify-reductions: the row maximum of aten._softmax, a linalg.generic with two
// results (the maximum and its index) of which only the maximum is read, without the index (nor
// its compare and select); a row sum that keeps the reduced dimension ((4, 1), the map
// (d0, d1) -> (d0, 0)) written as (4), into a fill of (4), and expanded back. After
// tile-and-vectorize both are split into lanes (no linalg.generic is left), and after
// lower-contractions each row is one vector.reduction. A softmax (a row maximum, the
// exponentials, their row sum, the division) reads its row statistics as (32) by the map
// (d0, d1) -> (d0), not through the expand_shape to (32, 1), and after tile-and-vectorize is one
// scf.forall over blocks of 8 rows with all four in each block, none a parallel loop of its
// own, the exponentials computed once (a chunk of 64 and one of 36 a row).
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after simplify-reductions | filecheck %s --check-prefix=SIMPLE
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after lower-contractions | filecheck %s --check-prefix=LANES
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after mark-elementwise | filecheck %s --check-prefix=MARK

// SIMPLE-LABEL: func.func @row_max
// SIMPLE: %[[MAX:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x100xf32>) outs(%{{.*}} : tensor<4xf32>)
// SIMPLE-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// SIMPLE-NEXT: %[[M:.*]] = arith.maximumf %[[IN]], %[[OUT]] : f32
// SIMPLE-NEXT: linalg.yield %[[M]] : f32
// SIMPLE-NEXT: } -> tensor<4xf32>
// SIMPLE: return %[[MAX]]
// VEC-LABEL: func.func @row_max
// VEC-NOT: linalg.generic
// VEC: vector.transfer_read %arg0{{.*}} : tensor<4x100xf32>, vector<64xf32>
// VEC: arith.maximumf {{.*}} : vector<36xf32>
// VEC: vector.multi_reduction <maximumf>, %{{.*}} [1] : vector<1x64xf32> to vector<1xf32>
// VEC-NOT: linalg.generic
// LANES-LABEL: func.func @row_max
// LANES: vector.reduction <maximumf>, %{{.*}} : vector<64xf32> into f32

#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @row_max(%x: tensor<4x100xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0 : i64
  %ninf = arith.constant 0xFF800000 : f32
  %ei = tensor.empty() : tensor<4xi64>
  %fi = linalg.fill ins(%zero : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  %ef = tensor.empty() : tensor<4xf32>
  %ff = linalg.fill ins(%ninf : f32) outs(%ef : tensor<4xf32>) -> tensor<4xf32>
  %r:2 = linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x100xf32>) outs(%ff, %fi : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%a: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %a, %m : f32
    %gt = arith.cmpf ogt, %a, %m : f32
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %r#0 : tensor<4xf32>
}

// -----

// SIMPLE-LABEL: func.func @row_sum_keepdim
// SIMPLE: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4xf32>) -> tensor<4xf32>
// SIMPLE: %[[SUM:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[ROW:.*]]], {{.*}} outs(%[[INIT]] : tensor<4xf32>)
// SIMPLE: %[[KEPT:.*]] = tensor.expand_shape %[[SUM]] {{\[\[}}0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
// SIMPLE: return %[[KEPT]]
// VEC-LABEL: func.func @row_sum_keepdim
// VEC-NOT: linalg.generic
// VEC: arith.addf {{.*}} : vector<64xf32>
// VEC: vector.multi_reduction <add>, %{{.*}} [1] : vector<1x64xf32> to vector<1xf32>
// VEC-NOT: linalg.generic

#id2 = affine_map<(i, j) -> (i, j)>
#kept = affine_map<(i, j) -> (i, 0)>
func.func @row_sum_keepdim(%x: tensor<4x100xf32>) -> tensor<4x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x1xf32>) -> tensor<4x1xf32>
  %r = linalg.generic {indexing_maps = [#id2, #kept], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x100xf32>) outs(%f : tensor<4x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x1xf32>
  return %r : tensor<4x1xf32>
}

// -----

// The index of a row maximum that is read stays (and the reduction, of two results, is not
// split into lanes).
// SIMPLE-LABEL: func.func @row_argmax
// SIMPLE: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xi64>)
// SIMPLE: arith.select
// VEC-LABEL: func.func @row_argmax
// VEC: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xi64>)

#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @row_argmax(%x: tensor<4x100xf32>) -> tensor<4xi64> {
  %zero = arith.constant 0 : i64
  %ninf = arith.constant 0xFF800000 : f32
  %ei = tensor.empty() : tensor<4xi64>
  %fi = linalg.fill ins(%zero : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  %ef = tensor.empty() : tensor<4xf32>
  %ff = linalg.fill ins(%ninf : f32) outs(%ef : tensor<4xf32>) -> tensor<4xf32>
  %r:2 = linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x100xf32>) outs(%ff, %fi : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%a: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %a, %m : f32
    %gt = arith.cmpf ogt, %a, %m : f32
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %r#1 : tensor<4xi64>
}

// -----

// SIMPLE-LABEL: func.func @softmax
// SIMPLE-NOT: tensor.expand_shape
// SIMPLE: %[[MAX:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<32x100xf32>) outs(%{{.*}} : tensor<32xf32>)
// SIMPLE: %[[EXP:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[ROWS:.*]], #{{.*}}], {{.*}} ins(%arg0, %[[MAX]] : tensor<32x100xf32>, tensor<32xf32>)
// SIMPLE: math.exp
// SIMPLE: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[EXP]] : tensor<32x100xf32>) outs(%{{.*}} : tensor<32xf32>)
// SIMPLE: linalg.generic {indexing_maps = [#{{.*}}, #[[ROWS]], #{{.*}}], {{.*}} ins(%[[EXP]], %[[SUM]] : tensor<32x100xf32>, tensor<32xf32>)
// SIMPLE-NOT: tensor.expand_shape
// MARK-LABEL: func.func @softmax
// MARK-COUNT-1: mlirpipe.row_chain = 2
// MARK-NOT: mlirpipe.row_chain
// MARK: return
// VEC-LABEL: func.func @softmax
// VEC-NOT: linalg.generic
// VEC: scf.forall (%{{.*}}) = (0) to (32) step (8)
// VEC-NOT: scf.forall
// VEC: vector.multi_reduction <maximumf>
// VEC-COUNT-2: math.floor
// VEC-NOT: math.floor
// VEC-NOT: scf.forall
// VEC: vector.multi_reduction <add>
// VEC-NOT: math.floor
// VEC-NOT: scf.forall
// VEC: arith.divf {{.*}} : vector<64xf32>
// VEC-NOT: math.floor
// VEC: scf.forall.in_parallel
// VEC-NOT: linalg.generic
// VEC: return

#rows2 = affine_map<(i, j) -> (i, j)>
#stat = affine_map<(i, j) -> (i, 0)>
#row1 = affine_map<(i, j) -> (i)>
func.func @softmax(%x: tensor<32x100xf32>) -> tensor<32x100xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e1 = tensor.empty() : tensor<32x1xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<32x1xf32>) -> tensor<32x1xf32>
  %max = linalg.generic {indexing_maps = [#rows2, #stat], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<32x100xf32>) outs(%fm : tensor<32x1xf32>) {
  ^bb0(%a: f32, %m: f32):
    %r = arith.maximumf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<32x1xf32>
  %e = tensor.empty() : tensor<32x100xf32>
  %exp = linalg.generic {indexing_maps = [#rows2, #stat, #rows2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<32x100xf32>, tensor<32x1xf32>) outs(%e : tensor<32x100xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<32x100xf32>
  %e2 = tensor.empty() : tensor<32x1xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x1xf32>) -> tensor<32x1xf32>
  %sum = linalg.generic {indexing_maps = [#rows2, #stat], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<32x100xf32>) outs(%fs : tensor<32x1xf32>) {
  ^bb0(%a: f32, %s: f32):
    %r = arith.addf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<32x1xf32>
  %out = linalg.generic {indexing_maps = [#rows2, #stat, #rows2], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<32x100xf32>, tensor<32x1xf32>) outs(%e : tensor<32x100xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = arith.divf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<32x100xf32>
  return %out : tensor<32x100xf32>
}

// -----

// Two readers of the row maximum read the exponentials too (both returned): neither is marked a
// chain's end, for a block of either would compute the exponentials and the maximum again.
// MARK-LABEL: func.func @two_ends
// MARK-NOT: mlirpipe.row_chain
// MARK: return

#rows2 = affine_map<(i, j) -> (i, j)>
#row1 = affine_map<(i, j) -> (i)>
func.func @two_ends(%x: tensor<32x100xf32>) -> (tensor<32x100xf32>, tensor<32x100xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %e1 = tensor.empty() : tensor<32xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<32xf32>) -> tensor<32xf32>
  %max = linalg.generic {indexing_maps = [#rows2, #row1], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<32x100xf32>) outs(%fm : tensor<32xf32>) {
  ^bb0(%a: f32, %m: f32):
    %r = arith.maximumf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<32xf32>
  %e = tensor.empty() : tensor<32x100xf32>
  %y = linalg.generic {indexing_maps = [#rows2, #row1, #rows2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<32x100xf32>, tensor<32xf32>) outs(%e : tensor<32x100xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<32x100xf32>
  %z = linalg.generic {indexing_maps = [#rows2, #row1, #rows2], iterator_types = ["parallel", "parallel"]}
      ins(%y, %max : tensor<32x100xf32>, tensor<32xf32>) outs(%e : tensor<32x100xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.divf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<32x100xf32>
  %w = linalg.generic {indexing_maps = [#rows2, #row1, #rows2], iterator_types = ["parallel", "parallel"]}
      ins(%y, %max : tensor<32x100xf32>, tensor<32xf32>) outs(%e : tensor<32x100xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.mulf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<32x100xf32>
  return %z, %w : tensor<32x100xf32>, tensor<32x100xf32>
}
