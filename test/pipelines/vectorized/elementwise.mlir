// Elementwise ops through refbackend-vectorized (as with AVX2). After mark-elementwise: each
// linalg.generic of static shapes whose loops are all parallel carries mlirpipe.elementwise =
// its rank, unless an operand is of i1 (a vector of i1 is stored as bits). After
// tile-and-vectorize: a scaled ReLU on NCHW (the scale broadcast per channel) in blocks of 8
// channels shared among threads (scf.forall), each row of its last dimension as vectors of at
// most 64 elements (100 = 64 + 36, the rest a tile of its own); the comparison writing i1 stays
// a linalg.generic (linalg-to-loops makes it loops); so does a row whose body the vectorizer
// does not take (torch-mlir's cf.assert of a non-zero divisor). A reduction of the last
// dimension is marked mlirpipe.row_reduction and summed in lanes (after lower-contractions, one
// vector.reduction a row).
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after mark-elementwise | filecheck %s --check-prefix=MARK
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after lower-contractions | filecheck %s --check-prefix=LANES

// MARK-LABEL: func.func @scale_relu
// MARK: linalg.generic {{.*}} attrs = {mlirpipe.elementwise = 4 : i64}

// VEC-LABEL: func.func @scale_relu
// VEC-NOT: linalg.generic
// VEC: scf.forall (%{{.*}}) in (2)
// VEC: %[[X:.*]] = vector.transfer_read %arg0{{.*}} : tensor<1x16x4x100xf32>, vector<64xf32>
// VEC: %[[S:.*]] = vector.transfer_read %arg1{{.*}} : tensor<16x1x1xf32>, vector<64xf32>
// VEC: %[[M:.*]] = arith.mulf %[[X]], %[[S]] : vector<64xf32>
// VEC: arith.maximumf %[[M]], %{{.*}} : vector<64xf32>
// VEC: vector.transfer_read %arg0{{.*}} : tensor<1x16x4x100xf32>, vector<36xf32>
// VEC: arith.maximumf %{{.*}} : vector<36xf32>
// VEC-NOT: linalg.generic
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c, 0, 0)>
func.func @scale_relu(%x: tensor<1x16x4x100xf32>, %s: tensor<16x1x1xf32>) -> tensor<1x16x4x100xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x4x100xf32>
  %r = linalg.generic {indexing_maps = [#id4, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<1x16x4x100xf32>, tensor<16x1x1xf32>) outs(%e : tensor<1x16x4x100xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %p = arith.maximumf %m, %zero : f32
    linalg.yield %p : f32
  } -> tensor<1x16x4x100xf32>
  return %r : tensor<1x16x4x100xf32>
}

// -----

// MARK-LABEL: func.func @compare
// MARK-NOT: mlirpipe.elementwise
// VEC-LABEL: func.func @compare
// VEC-NOT: vector.
// VEC: linalg.generic
// VEC-NOT: vector.

#id2 = affine_map<(i, j) -> (i, j)>
func.func @compare(%x: tensor<4x16xf32>, %y: tensor<4x16xf32>) -> tensor<4x16xi1> {
  %e = tensor.empty() : tensor<4x16xi1>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xi1>) {
  ^bb0(%a: f32, %b: f32, %o: i1):
    %c = arith.cmpf ogt, %a, %b : f32
    linalg.yield %c : i1
  } -> tensor<4x16xi1>
  return %r : tensor<4x16xi1>
}


// -----

// MARK-LABEL: func.func @reciprocal_checked
// MARK: linalg.generic {{.*}} attrs = {mlirpipe.elementwise = 2 : i64}
// VEC-LABEL: func.func @reciprocal_checked
// VEC: scf.for
// VEC: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x16xf32>) outs(%{{.*}} : tensor<1x16xf32>)
// VEC: cf.assert
// VEC-NOT: vector.

#id2 = affine_map<(i, j) -> (i, j)>
func.func @reciprocal_checked(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %nz = arith.cmpf one, %a, %zero : f32
    cf.assert %nz, "unimplemented: tensor with zero element"
    %q = arith.divf %one, %a : f32
    linalg.yield %q : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// A row sum: each row's 100 elements in lanes of 64 (a vector of partial sums, the 36 past the
// first 64 added to its first 36 lanes), the lanes summed once at the end of the row.
// MARK-LABEL: func.func @row_sum
// MARK: linalg.generic {{.*}} attrs = {mlirpipe.row_reduction = 2 : i64}
// VEC-LABEL: func.func @row_sum
// VEC-NOT: linalg.generic
// VEC: scf.for %[[ROW:.*]] = %c0 to %c4 step %c1
// VEC: %[[A:.*]] = vector.transfer_read %arg0[%[[ROW]], %c0]{{.*}} : tensor<4x100xf32>, vector<64xf32>
// VEC: arith.addf %[[A]], %{{.*}} : vector<64xf32>
// VEC: %[[B:.*]] = vector.transfer_read %arg0[%[[ROW]], %c64]{{.*}} : tensor<4x100xf32>, vector<36xf32>
// VEC: arith.addf %[[B]], %{{.*}} : vector<36xf32>
// VEC: vector.multi_reduction <add>, %{{.*}} [1] : vector<1x64xf32> to vector<1xf32>
// VEC-NOT: linalg.generic
// LANES-LABEL: func.func @row_sum
// LANES: vector.reduction <add>, %{{.*}} : vector<64xf32> into f32

#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @row_sum(%x: tensor<4x100xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x100xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// On tensors of no elements: not marked, left to linalg-to-loops (tiling them crashes).
// MARK-LABEL: func.func @empty_rows
// MARK-NOT: mlirpipe.
// VEC-LABEL: func.func @empty_rows
// LANES-LABEL: func.func @empty_rows
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @empty_rows(%x: tensor<4x0xf32>) -> (tensor<4x0xf32>, tensor<4xf32>) {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x0xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x0xf32>) outs(%e0 : tensor<4x0xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x0xf32>
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x0xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %twice, %sum : tensor<4x0xf32>, tensor<4xf32>
}
