// Chains of elementwise ops through refbackend-vectorized (as with AVX2). After
// fuse-elementwise: a batch norm's four ops and the ReLU after it (torch-mlir's lowering of
// BatchNorm2d in eval mode) are one linalg.generic reading the image and the four per-channel
// vectors, one pass over memory; after tile-and-vectorize it is vectors like any elementwise op.
// A layer norm's squares are computed inside the sum that reads them; a post-norm's residual
// sum widened to f64 inside both the mean and the variance that read it. Left as they are: a
// producer read by two ops (unless cheap and no narrower than what it reads), one whose body
// has a side effect (torch-mlir's cf.assert of a non-zero divisor), one read through a
// transposing map, and one that reads its output's element.
// A splat constant input (torch-mlir's `where(mask, 0.5, x)`) is read as a scalar constant in
// the body, the tensor no longer an operand (and not read element by element); a splat of
// booleans too, after which the op has no tensor of i1 left and is vectorized; not when it is
// the only operand that bounds a loop (a sum over the rows of a splat). A constant of complex
// numbers and a scalar constant input are left as they are.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after fuse-elementwise | filecheck %s --check-prefix=FUSE
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC

// FUSE-LABEL: func.func @batch_norm_relu
// FUSE: %[[R:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1, %arg2, %arg3, %arg4 : tensor<1x16x4x100xf32>, tensor<16x1x1xf32>, tensor<16x1x1xf32>, tensor<16x1x1xf32>, tensor<16x1x1xf32>) outs(%{{.*}} : tensor<1x16x4x100xf32>)
// FUSE-NEXT: ^bb0(%[[X:.*]]: f32, %[[MEAN:.*]]: f32, %[[RSTD:.*]]: f32, %[[W:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// FUSE-NEXT: %[[C:.*]] = arith.subf %[[X]], %[[MEAN]] : f32
// FUSE-NEXT: %[[N:.*]] = arith.mulf %[[C]], %[[RSTD]] : f32
// FUSE-NEXT: %[[S:.*]] = arith.mulf %[[N]], %[[W]] : f32
// FUSE-NEXT: %[[Y:.*]] = arith.addf %[[S]], %[[B]] : f32
// FUSE-NEXT: %[[GT:.*]] = arith.cmpf ugt, %[[Y]], %{{.*}} : f32
// FUSE-NEXT: %[[RELU:.*]] = arith.select %[[GT]], %[[Y]], %{{.*}} : f32
// FUSE-NEXT: linalg.yield %[[RELU]] : f32
// FUSE-NOT: linalg.generic
// FUSE: return %[[R]]
// VEC-LABEL: func.func @batch_norm_relu
// VEC-NOT: linalg.generic
// VEC: arith.subf {{.*}} : vector<64xf32>
// VEC: arith.select {{.*}} : vector<64xi1>, vector<64xf32>
// VEC-NOT: linalg.generic
// VEC: return
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c, 0, 0)>
func.func @batch_norm_relu(%x: tensor<1x16x4x100xf32>, %mean: tensor<16x1x1xf32>, %rstd: tensor<16x1x1xf32>,
                           %w: tensor<16x1x1xf32>, %b: tensor<16x1x1xf32>) -> tensor<1x16x4x100xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x4x100xf32>
  %0 = linalg.generic {indexing_maps = [#id4, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %mean : tensor<1x16x4x100xf32>, tensor<16x1x1xf32>) outs(%e : tensor<1x16x4x100xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.subf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x16x4x100xf32>
  %1 = linalg.generic {indexing_maps = [#id4, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%0, %rstd : tensor<1x16x4x100xf32>, tensor<16x1x1xf32>) outs(%e : tensor<1x16x4x100xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.mulf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x16x4x100xf32>
  %2 = linalg.generic {indexing_maps = [#id4, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%1, %w : tensor<1x16x4x100xf32>, tensor<16x1x1xf32>) outs(%e : tensor<1x16x4x100xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.mulf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x16x4x100xf32>
  %3 = linalg.generic {indexing_maps = [#id4, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%2, %b : tensor<1x16x4x100xf32>, tensor<16x1x1xf32>) outs(%e : tensor<1x16x4x100xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.addf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x16x4x100xf32>
  %4 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%3 : tensor<1x16x4x100xf32>) outs(%e : tensor<1x16x4x100xf32>) {
  ^bb0(%a: f32, %o: f32):
    %gt = arith.cmpf ugt, %a, %zero : f32
    %r = arith.select %gt, %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x16x4x100xf32>
  return %4 : tensor<1x16x4x100xf32>
}

// -----

// A layer norm's variance: the squares of the centred rows summed; the squares are computed in
// the reduction's body, which is still split into vector lanes.
// FUSE-LABEL: func.func @sum_of_squares
// FUSE: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1 : tensor<4x100xf32>, tensor<4xf32>)
// FUSE-NEXT: ^bb0(%[[X:.*]]: f32, %[[MEAN:.*]]: f32, %[[ACC:.*]]: f32):
// FUSE-NEXT: %[[C:.*]] = arith.subf %[[X]], %[[MEAN]] : f32
// FUSE-NEXT: %[[SQ:.*]] = arith.mulf %[[C]], %[[C]] : f32
// FUSE-NEXT: %[[S:.*]] = arith.addf %[[SQ]], %[[ACC]] : f32
// FUSE-NEXT: linalg.yield %[[S]] : f32
// FUSE-NOT: linalg.generic
// VEC-LABEL: func.func @sum_of_squares
// VEC-NOT: linalg.generic
// VEC: arith.mulf {{.*}} : vector<64xf32>
// VEC: vector.multi_reduction <add>, %{{.*}} [1] : vector<1x64xf32> to vector<1xf32>
// VEC-NOT: linalg.generic
// VEC: return
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @sum_of_squares(%x: tensor<4x100xf32>, %mean: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x100xf32>
  %sq = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<4x100xf32>, tensor<4xf32>) outs(%e : tensor<4x100xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %c = arith.subf %a, %m : f32
    %s = arith.mulf %c, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x100xf32>
  %er = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sq : tensor<4x100xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %sum : tensor<4xf32>
}

// -----

// Read by two ops: a producer with a math function is computed once, by itself; a conversion
// (a layer norm's input widened to f64 for its mean and for its variance) is computed again in
// each of its users instead of being written and read back.
// FUSE-LABEL: func.func @two_users
// FUSE: %[[D:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x16xf32>)
// FUSE: math.sqrt
// FUSE: linalg.generic {{.*}} ins(%[[D]] : tensor<4x16xf32>)
// FUSE: linalg.generic {{.*}} ins(%[[D]] : tensor<4x16xf32>)
// FUSE: linalg.generic {{.*}} ins(%arg0 : tensor<4x16xf32>) outs(%{{.*}} : tensor<4x16xf64>)
// FUSE-NEXT: ^bb0(%[[A:.*]]: f32, %{{.*}}: f64):
// FUSE-NEXT: %[[W:.*]] = arith.extf %[[A]] : f32 to f64
// FUSE-NEXT: arith.addf %[[W]], %[[W]] : f64
// FUSE: linalg.generic {{.*}} ins(%arg0 : tensor<4x16xf32>) outs(%{{.*}} : tensor<4x16xf64>)
// FUSE-NEXT: ^bb0(%[[B:.*]]: f32, %{{.*}}: f64):
// FUSE-NEXT: %[[V:.*]] = arith.extf %[[B]] : f32 to f64
// FUSE-NEXT: arith.mulf %[[V]], %[[V]] : f64
// FUSE-NOT: linalg.generic
#id2 = affine_map<(i, j) -> (i, j)>
func.func @two_users(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf64>, tensor<4x16xf64>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %d = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.sqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %p = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.subf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %e64 = tensor.empty() : tensor<4x16xf64>
  %w = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x16xf32>) outs(%e64 : tensor<4x16xf64>) {
  ^bb0(%a: f32, %o: f64):
    %r = arith.extf %a : f32 to f64
    linalg.yield %r : f64
  } -> tensor<4x16xf64>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<4x16xf64>) outs(%e64 : tensor<4x16xf64>) {
  ^bb0(%a: f64, %o: f64):
    %r = arith.addf %a, %a : f64
    linalg.yield %r : f64
  } -> tensor<4x16xf64>
  %t = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w, %w : tensor<4x16xf64>, tensor<4x16xf64>) outs(%e64 : tensor<4x16xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %r = arith.mulf %a, %b : f64
    linalg.yield %r : f64
  } -> tensor<4x16xf64>
  return %p, %q, %s, %t : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf64>, tensor<4x16xf64>
}

// -----

// A post-norm's residual sum widened to f64, read by the layer norm's mean and by its variance:
// computed again in each (it reads the two f32 inputs, no more bytes than the f64 it wrote).
// Left as they are, with two users each: a sum of three f32 tensors (12 bytes read for 4
// written) and a widened quotient (a division).
// FUSE-LABEL: func.func @post_norm_sums
// FUSE: %[[Q:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x16xf32>, tensor<4x16xf32>) outs(%{{.*}} : tensor<4x16xf64>)
// FUSE: arith.divf
// FUSE: %[[T:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1, %arg2 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// FUSE: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1 : tensor<4x16xf32>, tensor<4x16xf32>) outs(%{{.*}} : tensor<4xf64>)
// FUSE-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[ACC:.*]]: f64):
// FUSE-NEXT: %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// FUSE-NEXT: %[[W:.*]] = arith.extf %[[S]] : f32 to f64
// FUSE-NEXT: arith.addf %[[W]], %[[ACC]] : f64
// FUSE: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1, %arg3 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4xf64>) outs(%{{.*}} : tensor<4xf64>)
// FUSE-NEXT: ^bb0(%[[A2:.*]]: f32, %[[B2:.*]]: f32, %[[M:.*]]: f64, %[[ACC2:.*]]: f64):
// FUSE-NEXT: %[[S2:.*]] = arith.addf %[[A2]], %[[B2]] : f32
// FUSE-NEXT: %[[W2:.*]] = arith.extf %[[S2]] : f32 to f64
// FUSE-NEXT: arith.subf %[[W2]], %[[M]] : f64
// FUSE: linalg.generic {{.*}} ins(%[[Q]] : tensor<4x16xf64>)
// FUSE: linalg.generic {{.*}} ins(%[[Q]] : tensor<4x16xf64>)
// FUSE: linalg.generic {{.*}} ins(%[[T]] : tensor<4x16xf32>)
// FUSE: linalg.generic {{.*}} ins(%[[T]] : tensor<4x16xf32>)
// FUSE-NOT: linalg.generic
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @post_norm_sums(%x: tensor<4x16xf32>, %y: tensor<4x16xf32>, %z: tensor<4x16xf32>, %mean: tensor<4xf64>)
    -> (tensor<4xf64>, tensor<4xf64>, tensor<4x16xf64>, tensor<4x16xf64>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f64
  %e64 = tensor.empty() : tensor<4x16xf64>
  %e32 = tensor.empty() : tensor<4x16xf32>
  %w = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e64 : tensor<4x16xf64>) {
  ^bb0(%a: f32, %b: f32, %o: f64):
    %s = arith.addf %a, %b : f32
    %r = arith.extf %s : f32 to f64
    linalg.yield %r : f64
  } -> tensor<4x16xf64>
  %q = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e64 : tensor<4x16xf64>) {
  ^bb0(%a: f32, %b: f32, %o: f64):
    %s = arith.divf %a, %b : f32
    %r = arith.extf %s : f32 to f64
    linalg.yield %r : f64
  } -> tensor<4x16xf64>
  %t = linalg.generic {indexing_maps = [#id2, #id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y, %z : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) outs(%e32 : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.addf %s, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %er = tensor.empty() : tensor<4xf64>
  %f = linalg.fill ins(%zero : f64) outs(%er : tensor<4xf64>) -> tensor<4xf64>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%w : tensor<4x16xf64>) outs(%f : tensor<4xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %s = arith.addf %a, %acc : f64
    linalg.yield %s : f64
  } -> tensor<4xf64>
  %var = linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%w, %mean : tensor<4x16xf64>, tensor<4xf64>) outs(%f : tensor<4xf64>) {
  ^bb0(%a: f64, %m: f64, %acc: f64):
    %c = arith.subf %a, %m : f64
    %sq = arith.mulf %c, %c : f64
    %s = arith.addf %sq, %acc : f64
    linalg.yield %s : f64
  } -> tensor<4xf64>
  %q1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<4x16xf64>) outs(%e64 : tensor<4x16xf64>) {
  ^bb0(%a: f64, %o: f64):
    %r = arith.addf %a, %a : f64
    linalg.yield %r : f64
  } -> tensor<4x16xf64>
  %q2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<4x16xf64>) outs(%e64 : tensor<4x16xf64>) {
  ^bb0(%a: f64, %o: f64):
    %r = arith.mulf %a, %a : f64
    linalg.yield %r : f64
  } -> tensor<4x16xf64>
  %t1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x16xf32>) outs(%e32 : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %t2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x16xf32>) outs(%e32 : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  return %sum, %var, %q1, %q2, %t1, %t2 : tensor<4xf64>, tensor<4xf64>, tensor<4x16xf64>, tensor<4x16xf64>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// A producer with torch-mlir's cf.assert, one read through a transposing map and one that reads
// its output's element (an accumulation into %acc): each left as its own op.
// FUSE-LABEL: func.func @left_alone
// FUSE: %[[Q:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x4xf32>)
// FUSE: cf.assert
// FUSE: %[[M:.*]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<4x4xf32>)
// FUSE: %[[T:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x4xf32>)
// FUSE: %[[U:.*]] = linalg.generic {indexing_maps = [#[[TR:.*]], #{{.*}}], {{.*}} ins(%[[T]] : tensor<4x4xf32>)
// FUSE: %[[A:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x4xf32>) outs(%arg1 : tensor<4x4xf32>)
// FUSE: linalg.generic {{.*}} ins(%[[A]] : tensor<4x4xf32>)
#id2 = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
func.func @left_alone(%x: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %nz = arith.cmpf one, %a, %zero : f32
    cf.assert %nz, "unimplemented: tensor with zero element"
    %r = arith.divf %one, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %m = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %one : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %u = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %in, %o : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %v = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.mulf %in, %in : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  return %m, %u, %v : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A row broadcast to 4 rows, then summed over them: the sum reads nothing else of 4 rows, so
// the broadcast, the only op giving that loop its length, stays an op of its own.
// FUSE-LABEL: func.func @broadcast_summed
// FUSE: %[[B:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// FUSE: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[B]] : tensor<4x8xf32>)
#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @broadcast_summed(%v: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%v : tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %er = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%er : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%b : tensor<4x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %sum : tensor<8xf32>
}

// -----

// FUSE-LABEL: func.func @splat_select
// FUSE: linalg.generic {{.*}} ins(%arg0 : tensor<4x100xf32>) outs(%{{.*}} : tensor<4x100xf32>)
// FUSE-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// FUSE-NEXT: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// FUSE: arith.select %{{.*}}, %[[X]], %[[HALF]] : f32
// FUSE-NOT: dense<5.000000e-01>
// FUSE: return
// VEC-LABEL: func.func @splat_select
// VEC: arith.select {{.*}} : vector<64xi1>, vector<64xf32>
// VEC: return
#id2 = affine_map<(i, j) -> (i, j)>
func.func @splat_select(%x: tensor<4x100xf32>) -> tensor<4x100xf32> {
  %half = arith.constant dense<0.5> : tensor<4x100xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x100xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %half : tensor<4x100xf32>, tensor<4x100xf32>) outs(%e : tensor<4x100xf32>) {
  ^bb0(%a: f32, %h: f32, %o: f32):
    %gt = arith.cmpf ogt, %a, %zero : f32
    %s = arith.select %gt, %a, %h : f32
    linalg.yield %s : f32
  } -> tensor<4x100xf32>
  return %r : tensor<4x100xf32>
}

// -----

// FUSE-LABEL: func.func @splat_of_true
// FUSE: linalg.generic {{.*}} ins(%arg0 : tensor<4x100xf32>) outs(%{{.*}} : tensor<4x100xf32>)
// FUSE-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// FUSE-NEXT: %[[TRUE:.*]] = arith.constant true
// FUSE: arith.andi %{{.*}}, %[[TRUE]] : i1
// VEC-LABEL: func.func @splat_of_true
// VEC-NOT: linalg.generic
// VEC: arith.select {{.*}} : vector<64xi1>, vector<64xf32>
// VEC: return
#id2 = affine_map<(i, j) -> (i, j)>
func.func @splat_of_true(%x: tensor<4x100xf32>) -> tensor<4x100xf32> {
  %true = arith.constant dense<true> : tensor<4x100xi1>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x100xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %true : tensor<4x100xf32>, tensor<4x100xi1>) outs(%e : tensor<4x100xf32>) {
  ^bb0(%a: f32, %t: i1, %o: f32):
    %gt = arith.cmpf ogt, %a, %zero : f32
    %both = arith.andi %gt, %t : i1
    %neg = arith.negf %a : f32
    %s = arith.select %both, %a, %neg : f32
    linalg.yield %s : f32
  } -> tensor<4x100xf32>
  return %r : tensor<4x100xf32>
}

// -----

// FUSE-LABEL: func.func @sum_of_splat
// FUSE: %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<4x8xf32>
// FUSE: linalg.generic {{.*}} ins(%[[ONES]] : tensor<4x8xf32>)
#rows = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @sum_of_splat(%init: tensor<4xf32>) -> tensor<4xf32> {
  %ones = arith.constant dense<1.0> : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%ones : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// FUSE-LABEL: func.func @complex_and_scalar_constants
// FUSE: linalg.generic {{.*}} ins(%arg0, %{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xcomplex<f32>>, f32)
#id1 = affine_map<(i) -> (i)>
#scalar = affine_map<(i) -> ()>
func.func @complex_and_scalar_constants(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = arith.constant dense<[(1.0, 2.0), (3.0, 4.0)]> : tensor<2xcomplex<f32>>
  %k = arith.constant 3.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1, #scalar, #id1], iterator_types = ["parallel"]}
      ins(%x, %c, %k : tensor<2xf32>, tensor<2xcomplex<f32>>, f32) outs(%e : tensor<2xf32>) {
  ^bb0(%a: f32, %h: complex<f32>, %s: f32, %o: f32):
    %re = complex.re %h : complex<f32>
    %t = arith.addf %a, %re : f32
    %u = arith.mulf %t, %s : f32
    linalg.yield %u : f32
  } -> tensor<2xf32>
  return %r : tensor<2xf32>
}
