// f32 math.tanh and math.erf (the two GELUs: torch's `approximate="tanh"` and its default)
// through refbackend-vectorized (as with AVX2 and with AVX-512). After approximate-erf: no
// math.tanh or math.erf is left, nor a math.exp (refbackend would expand tanh late into a
// quotient of exps, each a call of the C library's expf); tanh is an odd polynomial below
// |x| = 0.625 and 1 - 2 / (exp(2|x|) + 1) above it, erf a polynomial in x^2 below |x| = 1 and
// 1 - R(|x|) above it (no exp), each selected and given the sign of x. After
// tile-and-vectorize all of it is on vectors of a row's 64 elements; the LLVM dialect calls no
// function. An f64 tanh is left as it is (an f64 erf on vectors, which
// refback-expand-ops-for-llvm does not expand, fails the lowering with or without these stages).
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after approximate-erf | filecheck %s --check-prefix=APPROX
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx512f mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized | filecheck %s --check-prefix=LLVM

// APPROX-LABEL: func.func @gelus
// APPROX: linalg.generic
// APPROX-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// APPROX-NOT: math.tanh
// APPROX-NOT: math.erf
// APPROX-NOT: math.exp
// APPROX: %[[A:.*]] = math.absf %{{.*}} : f32
// APPROX: math.floor
// APPROX: arith.divf
// APPROX: arith.cmpf olt, %[[A]], %{{.*}} : f32
// APPROX: %[[T:.*]] = arith.select
// APPROX: math.copysign %[[T]], %{{.*}} : f32
// APPROX: arith.minimumf
// APPROX-NOT: math.floor
// APPROX: math.copysign
// APPROX: arith.cmpf olt
// APPROX: arith.select
// APPROX-NOT: math.erf
// APPROX: linalg.yield
// VEC-LABEL: func.func @gelus
// VEC-NOT: math.tanh
// VEC: math.floor %{{.*}} : vector<64xf32>
// VEC: math.copysign %{{.*}} : vector<64xf32>
// VEC: math.copysign %{{.*}} : vector<64xf32>
// VEC-NOT: math.erf
// LLVM-LABEL: llvm.func @gelus
// LLVM-NOT: llvm.call @{{[a-z]}}
// LLVM-NOT: llvm.intr.exp
// LLVM: llvm.return

#id2 = affine_map<(i, j) -> (i, j)>
func.func @gelus(%x: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %e = tensor.empty() : tensor<4x128xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x128xf32>) outs(%e : tensor<4x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    %f = math.erf %a : f32
    %y = arith.addf %t, %f : f32
    linalg.yield %y : f32
  } -> tensor<4x128xf32>
  return %r : tensor<4x128xf32>
}

// -----

// APPROX-LABEL: func.func @f64
// APPROX: math.tanh %{{.*}} : f64
// VEC-LABEL: func.func @f64
// VEC: math.tanh %{{.*}} : vector<64xf64>
// LLVM-LABEL: llvm.func @f64

#id2 = affine_map<(i, j) -> (i, j)>
func.func @f64(%x: tensor<4x128xf64>) -> tensor<4x128xf64> {
  %e = tensor.empty() : tensor<4x128xf64>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x128xf64>) outs(%e : tensor<4x128xf64>) {
  ^bb0(%a: f64, %o: f64):
    %t = math.tanh %a : f64
    linalg.yield %t : f64
  } -> tensor<4x128xf64>
  return %r : tensor<4x128xf64>
}
