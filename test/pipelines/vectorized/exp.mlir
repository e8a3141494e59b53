// An f32 math.exp through refbackend-vectorized (as with AVX2 and with AVX-512). After
// approximate-exp: no math.exp is left (llvm.intr.exp would be a call of expf per element);
// x log2(e) rounded down to k, exp(r) by a polynomial, 2^k in two halves built from their bits,
// selects for the ends (0 below ln(2^-150), +inf above ln(FLT_MAX), NaN). After
// tile-and-vectorize all of it is on vectors of a row's 64 elements. An f64 exp is left as it is.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after approximate-exp | filecheck %s --check-prefix=EXP
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx512f mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC

// EXP-LABEL: func.func @exp
// EXP: linalg.generic
// EXP-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// EXP-NOT: math.exp
// EXP: %[[K:.*]] = math.floor %{{.*}} : f32
// EXP: %[[KI:.*]] = arith.fptosi %[[K]] : f32 to i32
// EXP: %[[HALF:.*]] = arith.shrsi %[[KI]], %{{.*}} : i32
// EXP: arith.bitcast %{{.*}} : i32 to f32
// EXP: arith.subi %[[KI]], %[[HALF]] : i32
// EXP: arith.bitcast %{{.*}} : i32 to f32
// EXP: arith.cmpf olt, %[[X]], %{{.*}} : f32
// EXP: arith.cmpf ogt, %[[X]], %{{.*}} : f32
// EXP: arith.cmpf uno, %[[X]], %[[X]] : f32
// EXP: %[[R:.*]] = arith.select %{{.*}}, %[[X]], %{{.*}} : f32
// EXP-NEXT: linalg.yield %[[R]] : f32
// VEC-LABEL: func.func @exp
// VEC-NOT: math.exp
// VEC: math.floor %{{.*}} : vector<64xf32>
// VEC: arith.bitcast %{{.*}} : vector<64xi32> to vector<64xf32>
// VEC: arith.select %{{.*}} : vector<64xi1>, vector<64xf32>
// VEC-NOT: math.exp

#id2 = affine_map<(i, j) -> (i, j)>
func.func @exp(%x: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %e = tensor.empty() : tensor<4x128xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x128xf32>) outs(%e : tensor<4x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = math.exp %a : f32
    linalg.yield %y : f32
  } -> tensor<4x128xf32>
  return %r : tensor<4x128xf32>
}

// -----

// EXP-LABEL: func.func @exp_f64
// EXP: math.exp %{{.*}} : f64
// VEC-LABEL: func.func @exp_f64
// VEC: math.exp %{{.*}} : vector<64xf64>

#id2 = affine_map<(i, j) -> (i, j)>
func.func @exp_f64(%x: tensor<4x128xf64>) -> tensor<4x128xf64> {
  %e = tensor.empty() : tensor<4x128xf64>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x128xf64>) outs(%e : tensor<4x128xf64>) {
  ^bb0(%a: f64, %o: f64):
    %y = math.exp %a : f64
    linalg.yield %y : f64
  } -> tensor<4x128xf64>
  return %r : tensor<4x128xf64>
}
