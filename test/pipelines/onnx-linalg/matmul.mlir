// The onnx-mlir seed: an ONNX MatMul (imported by torch-mlir's ONNX importer) through the three
// phases of the onnx-linalg pipeline.
// RUN: mlirpipe-opt %s --pipeline onnx-linalg --stop-after onnx-to-torch | FileCheck %s --check-prefix=TORCH
// RUN: mlirpipe-opt %s --pipeline onnx-linalg --stop-after onnx-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: mlirpipe-opt %s --pipeline onnx-linalg --stop-after bufferize | FileCheck %s --check-prefix=BUF
// RUN: mlirpipe-opt %s --pipeline onnx-linalg --stop-after linalg-to-loops | FileCheck %s --check-prefix=LOOPS
// RUN: mlirpipe-opt %s --pipeline onnx-linalg --stop-after lower-to-cf | FileCheck %s --check-prefix=CF
// RUN: mlirpipe-opt %s --pipeline onnx-linalg | FileCheck %s --check-prefix=LLVM

// TORCH-NOT: torch.operator
// TORCH: torch.aten.mm %arg0, %arg1 : !torch.vtensor<[2,3],f32>, !torch.vtensor<[3,4],f32> -> !torch.vtensor<[2,4],f32>

// Phase 1: zero fill + linalg.matmul on tensors, then bufferized with memref signatures.
// LINALG: %[[EMPTY:.*]] = tensor.empty() : tensor<2x4xf32>
// LINALG: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<2x4xf32>)
// LINALG: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3x4xf32>) outs(%[[ACC]] : tensor<2x4xf32>)
// BUF-NOT: bufferization.to_
// BUF-LABEL: func.func @matmul(%arg0: memref<2x3xf32>, %arg1: memref<3x4xf32>) -> memref<2x4xf32>
// BUF: %[[OUT:.*]] = memref.alloc()
// BUF: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : memref<2x4xf32>)
// BUF: linalg.matmul ins(%arg0, %arg1 : memref<2x3xf32>, memref<3x4xf32>) outs(%[[OUT]] : memref<2x4xf32>)
// BUF: return %[[OUT]]

// Phase 2: loops, then a CFG.
// LOOPS-NOT: linalg.
// LOOPS: scf.for
// LOOPS: scf.for
// LOOPS: scf.for
// LOOPS: arith.mulf
// LOOPS: arith.addf
// LOOPS-NOT: linalg.
// CF-NOT: scf.
// CF: cf.cond_br

// Phase 3: the llvm dialect only, with a C-interface wrapper.
// LLVM-NOT: {{^ *(%[^ ]+ = )?(func|memref|arith|cf|scf|linalg|bufferization|tensor|torch)\.}}
// LLVM: llvm.func @matmul
// LLVM: llvm.func @_mlir_ciface_matmul
// LLVM-NOT: {{^ *(%[^ ]+ = )?(func|memref|arith|cf|scf|linalg|bufferization|tensor|torch)\.}}

module {
  func.func @matmul(%arg0: !torch.vtensor<[2,3],f32>, %arg1: !torch.vtensor<[3,4],f32>) -> !torch.vtensor<[2,4],f32> attributes {torch.onnx_meta.ir_version = 14 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "", torch.onnx_meta.producer_version = ""} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.MatMul"(%arg0, %arg1) : (!torch.vtensor<[2,3],f32>, !torch.vtensor<[3,4],f32>) -> !torch.vtensor<[2,4],f32> 
    return %0 : !torch.vtensor<[2,4],f32>
  }
}
