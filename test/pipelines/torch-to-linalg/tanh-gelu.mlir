// torch.aten.gelu with approximate "tanh", written in the torch dialect: the stage
// decompose-tanh-gelu writes it out as torch's formula, with torch's sqrt(2 / pi) = 0.7978845608
// (convert-torch-to-linalg would multiply by 0.7977240352); the erf GELU and a 16-bit one stay
// whole. The stage before it, torch-backend, leaves the op whole (no torch-mlir decomposition
// lowers it).
// RUN: mlirpipe-opt %s --pipeline torch-to-linalg --stop-after torch-backend | FileCheck %s --check-prefix=WHOLE
// RUN: mlirpipe-opt %s --pipeline torch-to-linalg --stop-after decompose-tanh-gelu | FileCheck %s --check-prefix=BACKEND
// RUN: mlirpipe-opt %s --pipeline torch-to-linalg | FileCheck %s --check-prefix=LINALG

// WHOLE-LABEL: func.func @tanh_f32
// WHOLE: torch.aten.gelu %arg0, %{{.*}} : !torch.vtensor<[4,8],f32>, !torch.str

// 0.5 x (1 + tanh(kBeta (x + kKappa x x x))), in torch's order
// BACKEND-LABEL: func.func @tanh_f32
// BACKEND-NOT: torch.aten.gelu
// BACKEND: %[[ONE:.*]] = torch.constant.int 1
// BACKEND: %[[XX:.*]] = torch.aten.mul.Tensor %arg0, %arg0
// BACKEND: %[[CUBE:.*]] = torch.aten.mul.Tensor %[[XX]], %arg0
// BACKEND: %[[KAPPA:.*]] = torch.constant.float 4.471500e-02
// BACKEND: %[[KCUBE:.*]] = torch.aten.mul.Scalar %[[CUBE]], %[[KAPPA]]
// BACKEND: %[[SUM:.*]] = torch.aten.add.Tensor %arg0, %[[KCUBE]], %[[ONE]]
// BACKEND: %[[BETA:.*]] = torch.constant.float 0.797884560802865
// BACKEND: %[[INNER:.*]] = torch.aten.mul.Scalar %[[SUM]], %[[BETA]]
// BACKEND: %[[TANH:.*]] = torch.aten.tanh %[[INNER]] : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
// BACKEND: %[[HALF:.*]] = torch.constant.float 5.000000e-01
// BACKEND: %[[HALFX:.*]] = torch.aten.mul.Scalar %arg0, %[[HALF]]
// BACKEND: %[[FONE:.*]] = torch.constant.float 1.000000e+00
// BACKEND: %[[ONEPLUS:.*]] = torch.aten.add.Scalar %[[TANH]], %[[FONE]], %[[ONE]]
// BACKEND: %[[Y:.*]] = torch.aten.mul.Tensor %[[HALFX]], %[[ONEPLUS]]
// BACKEND: return %[[Y]] : !torch.vtensor<[4,8],f32>
// BACKEND-LABEL: func.func @tanh_f64
// BACKEND-NOT: torch.aten.gelu
// BACKEND: torch.constant.float 0.797884560802865
// BACKEND: torch.aten.tanh %{{.*}} : !torch.vtensor<[?,8],f64> -> !torch.vtensor<[?,8],f64>
// BACKEND-LABEL: func.func @erf_f32
// BACKEND: torch.aten.gelu %arg0, %{{.*}} : !torch.vtensor<[4,8],f32>, !torch.str
// BACKEND-LABEL: func.func @tanh_f16
// BACKEND: torch.aten.gelu %arg0, %{{.*}} : !torch.vtensor<[4,8],f16>, !torch.str

// torch-mlir's constant is in neither function (f32: 7.977240e-01, f64: 0.79772403...)
// LINALG-LABEL: func.func @tanh_f32
// LINALG-NOT: {{7.977240e-01|0.797724}}
// LINALG: arith.constant 0.797884560802865{{[0-9]*}} : f64
// LINALG-NOT: {{7.977240e-01|0.797724}}
// LINALG: math.tanh %{{.*}} : f32
// LINALG-NOT: {{7.977240e-01|0.797724}}
// LINALG-LABEL: func.func @tanh_f64
// LINALG-NOT: {{7.977240e-01|0.797724}}
// LINALG: arith.constant 0.797884560802865{{[0-9]*}} : f64
// LINALG-NOT: {{7.977240e-01|0.797724}}
// LINALG: math.tanh %{{.*}} : f64
// LINALG-NOT: {{7.977240e-01|0.797724}}
// LINALG-LABEL: func.func @erf_f32
// LINALG: math.erf
// LINALG-LABEL: func.func @tanh_f16
// LINALG: math.tanh %{{.*}} : f16

func.func @tanh_f32(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %str = torch.constant.str "tanh"
  %0 = torch.aten.gelu %arg0, %str : !torch.vtensor<[4,8],f32>, !torch.str -> !torch.vtensor<[4,8],f32>
  return %0 : !torch.vtensor<[4,8],f32>
}

func.func @tanh_f64(%arg0: !torch.vtensor<[?,8],f64>) -> !torch.vtensor<[?,8],f64> {
  %str = torch.constant.str "tanh"
  %0 = torch.aten.gelu %arg0, %str : !torch.vtensor<[?,8],f64>, !torch.str -> !torch.vtensor<[?,8],f64>
  return %0 : !torch.vtensor<[?,8],f64>
}

func.func @erf_f32(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %str = torch.constant.str "none"
  %0 = torch.aten.gelu %arg0, %str : !torch.vtensor<[4,8],f32>, !torch.str -> !torch.vtensor<[4,8],f32>
  return %0 : !torch.vtensor<[4,8],f32>
}

func.func @tanh_f16(%arg0: !torch.vtensor<[4,8],f16>) -> !torch.vtensor<[4,8],f16> {
  %str = torch.constant.str "tanh"
  %0 = torch.aten.gelu %arg0, %str : !torch.vtensor<[4,8],f16>, !torch.str -> !torch.vtensor<[4,8],f16>
  return %0 : !torch.vtensor<[4,8],f16>
}
