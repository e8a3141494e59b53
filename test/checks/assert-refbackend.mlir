// Structural assertions on the stages of refbackend: they hold whatever the printer writes.
// RUN: mlirpipe-opt %s --pipeline refbackend --assert 'count(linalg.*) == 2 after bufferize' --assert 'no-dialect linalg,tm_tensor after linalg-to-loops' --assert 'no-op memref.copy after linalg-to-loops' --assert 'only-dialects llvm,builtin' > %t.ll.mlir
// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after bufferize | mlirpipe-assert 'exactly 1 linalg.matmul' 'exactly 1 linalg.fill' 'no-dialect llvm'
// RUN: mlirpipe-assert 'only-dialects {llvm, builtin}' 'exactly 1 llvm.func @forward' < %t.ll.mlir

// A broken assertion fails its RUN line and names the ops at fault, where they came from and
// the stage (the op lines are those of @forward below).
// RUN: not mlirpipe-opt %s --pipeline refbackend --stop-after munge-calling-conventions --assert 'no-dialect linalg after bufferize' 2>&1 >/dev/null | filecheck %s --check-prefix=NOLINALG
// NOLINALG: error: assertion 'no-dialect linalg after bufferize' failed after stage 'bufferize' of pipeline 'refbackend': 2 ops of dialect linalg
// NOLINALG-NEXT: assert-refbackend.mlir:22:8: linalg.fill ins(%cst : f32) outs(%alloc : memref<2x2xf32>)
// NOLINALG-NEXT: assert-refbackend.mlir:23:8: linalg.matmul ins(

// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after bufferize | not mlirpipe-assert 'exactly 1 func.call @cblas_sgemm' 'count(linalg.*) < 2' 2>&1 | filecheck %s --check-prefix=COUNT
// COUNT: error: assertion 'exactly 1 func.call @cblas_sgemm' failed in <stdin>: 0 ops match 'func.call @cblas_sgemm', expected == 1
// COUNT: error: assertion 'count(linalg.*) < 2' failed in <stdin>: 2 ops match 'linalg.*', expected < 2
// COUNT-NEXT: <stdin>:{{[0-9]+}}:{{[0-9]+}}: linalg.fill
// COUNT-NEXT: <stdin>:{{[0-9]+}}:{{[0-9]+}}: linalg.matmul

func.func @forward(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c0 = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<2x2xf32>
  %1 = linalg.fill ins(%c0 : f32) outs(%0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<2x2xf32>, tensor<2x2xf32>) outs(%1 : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %2 : tensor<2x2xf32>
}
