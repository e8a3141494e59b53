// ONNX Gelu (opset 20) as torch-mlir's ONNX importer emits it. With approximate="tanh" it
// becomes torch.aten.gelu "tanh", which the stage decompose-tanh-gelu writes out as torch's
// formula with torch's sqrt(2 / pi) = 0.7978845608 (convert-torch-to-linalg would multiply by
// 0.7977240352); the default GELU (erf) stays whole.
// RUN: mlirpipe-opt %s --pipeline onnx-linalg --stop-after decompose-tanh-gelu | FileCheck %s --check-prefix=TORCH
// RUN: mlirpipe-opt %s --pipeline onnx-linalg --stop-after onnx-to-linalg | FileCheck %s --check-prefix=LINALG

// TORCH-LABEL: func.func @tanh_gelu
// TORCH-NOT: torch.aten.gelu
// TORCH: torch.constant.float 0.797884560802865
// TORCH: torch.aten.tanh %{{.*}} : !torch.vtensor<[16,64],f32> -> !torch.vtensor<[16,64],f32>
// TORCH-NOT: torch.aten.gelu
// TORCH-LABEL: func.func @gelu
// TORCH: torch.aten.gelu %arg0, %{{.*}} : !torch.vtensor<[16,64],f32>, !torch.str

// LINALG-LABEL: func.func @tanh_gelu
// LINALG-NOT: {{7.977240e-01|0.797724}}
// LINALG: arith.constant 0.797884560802865{{[0-9]*}} : f64
// LINALG-NOT: {{7.977240e-01|0.797724}}
// LINALG: math.tanh %{{.*}} : f32
// LINALG-NOT: {{7.977240e-01|0.797724}}
// LINALG-LABEL: func.func @gelu
// LINALG: math.erf

module {
  func.func @tanh_gelu(%arg0: !torch.vtensor<[16,64],f32>) -> !torch.vtensor<[16,64],f32> attributes {torch.onnx_meta.ir_version = 10 : si64, torch.onnx_meta.opset_version = 20 : si64, torch.onnx_meta.producer_name = "", torch.onnx_meta.producer_version = ""} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.Gelu"(%arg0) {torch.onnx.approximate = "tanh"} : (!torch.vtensor<[16,64],f32>) -> !torch.vtensor<[16,64],f32>
    return %0 : !torch.vtensor<[16,64],f32>
  }
  func.func @gelu(%arg0: !torch.vtensor<[16,64],f32>) -> !torch.vtensor<[16,64],f32> attributes {torch.onnx_meta.ir_version = 10 : si64, torch.onnx_meta.opset_version = 20 : si64, torch.onnx_meta.producer_name = "", torch.onnx_meta.producer_version = ""} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.Gelu"(%arg0) : (!torch.vtensor<[16,64],f32>) -> !torch.vtensor<[16,64],f32>
    return %0 : !torch.vtensor<[16,64],f32>
  }
}
