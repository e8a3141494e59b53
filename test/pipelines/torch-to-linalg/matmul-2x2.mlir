// The torch-mlir seed as the FX importer emits it (torch dialect), down to linalg-on-tensors,
// then chained into refbackend (the output level of one pipeline is the input of the next).
// RUN: mlirpipe-opt %s --pipeline torch-to-linalg --stop-after torch-backend | FileCheck %s --check-prefix=BACKEND
// RUN: mlirpipe-opt %s --pipeline torch-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: mlirpipe-opt %s --pipeline torch-to-linalg | mlirpipe-opt - --pipeline refbackend | FileCheck %s --check-prefix=LLVM

// torch.aten.full_like became a literal; the matmul is torch.aten.mm with value semantics.
// BACKEND-LABEL: func.func @forward(%arg0: !torch.vtensor<[2,2],f32>) -> !torch.vtensor<[2,2],f32>
// BACKEND: %[[ONES:.*]] = torch.vtensor.literal(dense<1.000000e+00> : tensor<2x2xf32>)
// BACKEND-NOT: torch.aten.full_like
// BACKEND: torch.aten.mm %arg0, %[[ONES]]

// LINALG-NOT: torch.
// LINALG-LABEL: func.func @forward(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32>
// LINALG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// LINALG: %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<2x2xf32>
// LINALG: %[[EMPTY:.*]] = tensor.empty() : tensor<2x2xf32>
// LINALG: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<2x2xf32>)
// LINALG: linalg.matmul ins(%arg0, %[[ONES]] : tensor<2x2xf32>, tensor<2x2xf32>) outs(%[[ACC]] : tensor<2x2xf32>)
// LINALG-NOT: torch.

// LLVM: llvm.func @forward
// LLVM-NOT: linalg.
// LLVM-NOT: torch.

module {
  func.func @forward(%arg0: !torch.vtensor<[2,2],f32>) -> !torch.vtensor<[2,2],f32> {
    %int2 = torch.constant.int 2
    %int2_0 = torch.constant.int 2
    %0 = torch.prim.ListConstruct %int2, %int2_0 : (!torch.int, !torch.int) -> !torch.list<int>
    %int2_1 = torch.constant.int 2
    %int1 = torch.constant.int 1
    %1 = torch.prim.ListConstruct %int2_1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %int6 = torch.constant.int 6
    %int0 = torch.constant.int 0
    %cpu = torch.constant.device "cpu"
    %false = torch.constant.bool false
    %2 = torch.aten.empty_strided %0, %1, %int6, %int0, %cpu, %false : !torch.list<int>, !torch.list<int>, !torch.int, !torch.int, !torch.Device, !torch.bool -> !torch.vtensor<[2,2],f32>
    %int1_2 = torch.constant.int 1
    %none = torch.constant.none
    %none_3 = torch.constant.none
    %none_4 = torch.constant.none
    %false_5 = torch.constant.bool false
    %none_6 = torch.constant.none
    %3 = torch.aten.full_like %2, %int1_2, %none, %none_3, %none_4, %false_5, %none_6 : !torch.vtensor<[2,2],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[2,2],f32>
    %4 = torch.aten.mm %arg0, %3 : !torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32> -> !torch.vtensor<[2,2],f32>
    return %4 : !torch.vtensor<[2,2],f32>
  }
}
