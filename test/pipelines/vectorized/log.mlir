// An f32 math.log through refbackend-vectorized (as with AVX2 and with AVX-512). After
// approximate-log: no math.log is left (llvm.intr.log would be a call of logf per element);
// the exponent and the mantissa are read from the float's bits (a subnormal scaled by 2^23
// first), the mantissa's log is a polynomial, the exponent adds its multiple of ln 2, and
// selects give the ends (-inf for 0, NaN below 0, +inf, NaN). After tile-and-vectorize all of it
// is on vectors of a row's 64 elements; the LLVM dialect calls no function. An f64 log is left
// as it is.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after approximate-log | filecheck %s --check-prefix=LOG
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx512f mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized | filecheck %s --check-prefix=LLVM

// LOG-LABEL: func.func @log
// LOG: linalg.generic
// LOG-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// LOG-NOT: math.log
// LOG: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// LOG: arith.shrui %[[BITS]], %{{.*}} : i32
// LOG: arith.andi %[[BITS]], %{{.*}} : i32
// LOG: arith.bitcast %{{.*}} : i32 to f32
// LOG: arith.sitofp %{{.*}} : i32 to f32
// LOG: arith.cmpf oeq, %[[X]], %{{.*}} : f32
// LOG: arith.cmpf olt, %[[X]], %{{.*}} : f32
// LOG: arith.cmpf oeq, %[[X]], %{{.*}} : f32
// LOG: arith.cmpf uno, %[[X]], %[[X]] : f32
// LOG: arith.select %{{.*}}, %[[X]], %{{.*}} : f32
// LOG-NEXT: %[[R:.*]] = arith.select %{{.*}}, %[[X]], %{{.*}} : f32
// LOG-NEXT: linalg.yield %[[R]] : f32
// VEC-LABEL: func.func @log
// VEC-NOT: math.log
// VEC: arith.bitcast %{{.*}} : vector<64xf32> to vector<64xi32>
// VEC: arith.select %{{.*}} : vector<64xi1>, vector<64xf32>
// VEC-NOT: math.log
// LLVM-LABEL: llvm.func @log
// LLVM-NOT: llvm.call @{{[a-z]}}
// LLVM-NOT: llvm.intr.log
// LLVM: llvm.return

#id2 = affine_map<(i, j) -> (i, j)>
func.func @log(%x: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %e = tensor.empty() : tensor<4x128xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x128xf32>) outs(%e : tensor<4x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = math.log %a : f32
    linalg.yield %y : f32
  } -> tensor<4x128xf32>
  return %r : tensor<4x128xf32>
}

// -----

// LOG-LABEL: func.func @log_f64
// LOG: math.log %{{.*}} : f64
// VEC-LABEL: func.func @log_f64
// VEC: math.log %{{.*}} : vector<64xf64>
// LLVM-LABEL: llvm.func @log_f64

#id2 = affine_map<(i, j) -> (i, j)>
func.func @log_f64(%x: tensor<4x128xf64>) -> tensor<4x128xf64> {
  %e = tensor.empty() : tensor<4x128xf64>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x128xf64>) outs(%e : tensor<4x128xf64>) {
  ^bb0(%a: f64, %o: f64):
    %y = math.log %a : f64
    linalg.yield %y : f64
  } -> tensor<4x128xf64>
  return %r : tensor<4x128xf64>
}
