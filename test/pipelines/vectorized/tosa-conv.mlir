// A TOSA convolution (NHWC image, FHWC filter, as the TorchDynamo path gives it) through
// tosa-vectorized. After tosa-to-linalg it is a linalg.conv_2d_nhwc_fhwc; unit-batch-to-matmul
// leaves it named (it rewrites batch_matmuls of batch 1 only); conv-to-nhwc makes it a
// linalg.conv_2d_nhwc_hwcf on the same image, its constant filter transposed to HWCF at compile
// time (the weights 1..8 of F=2, H=W=1, C=4 stored F-major become 1 5 2 6 3 7 4 8); after
// tile-and-vectorize no convolution and no linalg.generic is left: the convolution path, not
// loops.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline tosa-vectorized --stop-after unit-batch-to-matmul | filecheck %s --check-prefix=NAMED
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline tosa-vectorized --stop-after conv-to-nhwc | filecheck %s --check-prefix=HWCF
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline tosa-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC

// NAMED-LABEL: func.func @forward
// NAMED: linalg.conv_2d_nhwc_fhwc {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x8x8x4xf32>, tensor<2x1x1x4xf32>)
// NAMED-NOT: linalg.generic {{.*}}reduction
// HWCF-LABEL: func.func @forward
// HWCF: %[[FILTER:.*]] = arith.constant dense_resource<[[BLOB:mlirpipe_filter[_0-9]*]]> : tensor<1x1x4x2xf32>
// HWCF: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%arg0, %[[FILTER]] : tensor<1x8x8x4xf32>, tensor<1x1x4x2xf32>)
// HWCF-NOT: linalg.transpose
// HWCF: [[BLOB]]: "0x040000000000803F0000A040000000400000C040000040400000E0400000804000000041"
// VEC-LABEL: func.func @forward
// VEC-NOT: linalg.conv
// VEC-NOT: linalg.generic
// VEC: vector.contract
// VEC-NOT: linalg.conv
// VEC-NOT: linalg.generic

func.func @forward(%x: tensor<1x8x8x4xf32>) -> tensor<1x8x8x2xf32> {
  %w = "tosa.const"() <{values = dense<[[[[1.0, 2.0, 3.0, 4.0]]], [[[5.0, 6.0, 7.0, 8.0]]]]> : tensor<2x1x1x4xf32>}> : () -> tensor<2x1x1x4xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<2x1x1x4xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x2xf32>
  return %r : tensor<1x8x8x2xf32>
}

// -----

// TOSA's depthwise convolution: a linalg.depthwise_conv_2d_nhwc_hwcm with one filter per
// channel (M = 1), which conv-to-nhwc makes a linalg.depthwise_conv_2d_nhwc_hwc on the filter
// and the result without that dimension (reshapes, no copy); then the depthwise path.
// NAMED-LABEL: func.func @depthwise
// NAMED: linalg.depthwise_conv_2d_nhwc_hwcm {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x8x8x4xf32>, tensor<3x3x4x1xf32>) outs(%{{.*}} : tensor<1x6x6x4x1xf32>)
// HWCF-LABEL: func.func @depthwise
// HWCF: %[[F:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<3x3x4x1xf32> into tensor<3x3x4xf32>
// HWCF: %[[R:.*]] = linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%arg0, %[[F]] : tensor<1x8x8x4xf32>, tensor<3x3x4xf32>) outs(%{{.*}} : tensor<1x6x6x4xf32>)
// HWCF: tensor.expand_shape %[[R]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 6, 6, 4, 1]
// VEC-LABEL: func.func @depthwise
// VEC-NOT: linalg.depthwise
// VEC: vector.fma
// VEC-NOT: linalg.depthwise
func.func @depthwise(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x1xf32>) -> tensor<1x6x6x4xf32> {
  %b = "tosa.const"() <{values = dense<0.0> : tensor<4xf32>}> : () -> tensor<4xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<3x3x4x1xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x6x4xf32>
  return %r : tensor<1x6x6x4xf32>
}
