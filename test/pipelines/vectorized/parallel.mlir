// The blocks of a matmul with several of them (150x300: row blocks of 64, column blocks of 256,
// partial ones at the edges) share OpenMP threads: after lower-vectors the block loop is an
// omp.wsloop over both block indices inside omp.parallel, with no scf.forall and no
// memref.alloca_scope left (convert-scf-to-cf could not lower loops inside one); the
// LLVM-dialect result keeps omp.parallel, which the translation to LLVM IR turns into
// __kmpc_fork_call.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline refbackend-vectorized --stop-after lower-vectors | filecheck %s --check-prefix=OMP
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline refbackend-vectorized | filecheck %s --check-prefix=LLVM

// OMP-LABEL: func.func @forward
// OMP-NOT: scf.forall
// OMP: omp.parallel {
// OMP-NEXT: omp.wsloop {
// OMP-NEXT: omp.loop_nest (%{{.*}}, %{{.*}}) : index = (%c0, %c0) to (%c3, %c2) step (%c1, %c1) collapse(2) {
// OMP-NOT: memref.alloca_scope
// OMP: vector.fma
// OMP: omp.yield
// OMP-NOT: scf.forall
// OMP-NOT: memref.alloca_scope

// LLVM: omp.parallel {
// LLVM: omp.wsloop {
// LLVM: llvm.intr.fmuladd
// LLVM-NOT: scf.
// LLVM-NOT: memref.

func.func @forward(%a: tensor<150x40xf32>, %b: tensor<40x300xf32>) -> tensor<150x300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<150x300xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<150x300xf32>) -> tensor<150x300xf32>
  %r = linalg.matmul ins(%a, %b : tensor<150x40xf32>, tensor<40x300xf32>) outs(%f : tensor<150x300xf32>) -> tensor<150x300xf32>
  return %r : tensor<150x300xf32>
}
