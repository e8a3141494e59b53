// A power by a constant integer (torch's x.pow(2), the x ** 3 of tanh-GELU) through
// refbackend-vectorized (as with AVX2). torch-mlir lowers it to math.fpowi, whose exponent the
// vectorizer broadcasts to a vector of i64 that convert-math-to-llvm refuses (llvm.intr.powi
// takes one integer exponent). After expand-powi it is multiplications (x * x * x), which
// vectorize like any elementwise op, and the module lowers to the llvm dialect.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline refbackend-vectorized --stop-after expand-powi | filecheck %s --check-prefix=MUL
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline refbackend-vectorized | filecheck %s --check-prefix=LLVM

// MUL-NOT: math.fpowi
// MUL: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// MUL-NEXT: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// MUL-NEXT: %[[CUBE:.*]] = arith.mulf %[[SQ]], %[[X]] : f32
// MUL-NEXT: linalg.yield %[[CUBE]] : f32
// MUL-NOT: math.fpowi
// VEC-NOT: linalg.generic
// VEC: arith.mulf {{.*}} : vector<64xf32>
// VEC-NOT: math.fpowi
// LLVM-NOT: math.
// LLVM: llvm.fmul {{.*}} : vector<64xf32>
// LLVM-NOT: math.

#id = affine_map<(i, j) -> (i, j)>
func.func @cube(%x: tensor<3x131xf32>) -> tensor<3x131xf32> {
  %three = arith.constant 3 : i64
  %e = tensor.empty() : tensor<3x131xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x131xf32>) outs(%e : tensor<3x131xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = math.fpowi %a, %three : f32, i64
    linalg.yield %p : f32
  } -> tensor<3x131xf32>
  return %r : tensor<3x131xf32>
}
