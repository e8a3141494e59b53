// A TOSA convolution (NHWC image, FHWC filter, as the TorchDynamo path gives it) through
// tosa-vectorized. After tosa-to-linalg it is a linalg.conv_2d_nhwc_fhwc; unit-batch-to-matmul
// leaves it named (it rewrites batch_matmuls of batch 1 only); conv-to-nhwc makes it a
// linalg.conv_2d_nhwc_hwcf on the same image, its constant filter transposed to HWCF at compile
// time (the weights 1..8 of F=2, H=W=1, C=4 stored F-major become 1 5 2 6 3 7 4 8); after
// tile-and-vectorize no convolution and no linalg.generic is left: the convolution path, not
// loops.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline tosa-vectorized --stop-after unit-batch-to-matmul | filecheck %s --check-prefix=NAMED
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline tosa-vectorized --stop-after conv-to-nhwc | filecheck %s --check-prefix=HWCF
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline tosa-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC

// NAMED: linalg.conv_2d_nhwc_fhwc {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x8x8x4xf32>, tensor<2x1x1x4xf32>)
// NAMED-NOT: linalg.generic {{.*}}reduction
// HWCF: %[[FILTER:.*]] = arith.constant dense_resource<[[BLOB:mlirpipe_filter[_0-9]*]]> : tensor<1x1x4x2xf32>
// HWCF: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%arg0, %[[FILTER]] : tensor<1x8x8x4xf32>, tensor<1x1x4x2xf32>)
// HWCF-NOT: linalg.transpose
// HWCF: [[BLOB]]: "0x040000000000803F0000A040000000400000C040000040400000E0400000804000000041"
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
