// Convolutions through refbackend-vectorized. After conv-to-nhwc: a convolution (and a
// depthwise one) on NCHW images is one on NHWC images between transposes of the image, the
// filter and the result; a zero fill of the result is a fill of the NHWC one, a bias (any other
// initial result) is transposed. After tile-and-vectorize no convolution is left: output rows
// shared among threads (scf.forall), register tiles of one output row (6 columns x 16 channels
// with AVX2, the 2 columns left a tile of their own; 8 x 32 with AVX-512) whose accumulator is
// read once before the loops over the filter's rows and the input channels, carried through
// them as an iter_arg and written once after them; per filter row and input channel, one
// vector.contract per filter column (an outer product of input columns and output channels).
// A depthwise convolution: per filter row, one vector.fma per output column and filter column.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after conv-to-nhwc | filecheck %s --check-prefix=NHWC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2,fma,avx512f mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=WIDE
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized | filecheck %s --check-prefix=LLVM

// NHWC-LABEL: func.func @conv
// NHWC: %[[IMAGE:.*]] = linalg.transpose ins(%arg0 : tensor<1x8x10x10xf32>) outs(%{{.*}} : tensor<1x10x10x8xf32>) permutation = [0, 2, 3, 1]
// NHWC: %[[FILTER:.*]] = linalg.transpose ins(%arg1 : tensor<32x8x3x3xf32>) outs(%{{.*}} : tensor<3x3x8x32xf32>) permutation = [2, 3, 1, 0]
// NHWC: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x8x8x32xf32>)
// NHWC: %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%[[IMAGE]], %[[FILTER]] : {{.*}}) outs(%[[FILL]] : tensor<1x8x8x32xf32>)
// NHWC: linalg.transpose ins(%[[CONV]] : tensor<1x8x8x32xf32>) outs(%{{.*}} : tensor<1x32x8x8xf32>) permutation = [0, 3, 1, 2]
// NHWC-NOT: linalg.conv_2d_nchw_fchw

// VEC-LABEL: func.func @conv
// VEC-NOT: linalg.conv
// VEC: scf.forall (%{{.*}}) in (2)
// VEC: %[[ACC:.*]] = vector.transfer_read {{.*}} : tensor<1x1x6x16xf32>, vector<6x16xf32>
// VEC-NEXT: %[[ROWS:.*]]:2 = scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[ACC]]) -> (tensor<1x1x6x16xf32>, vector<6x16xf32>)
// VEC-NEXT: scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args(%{{.*}} = %{{.*}}, %[[A:.*]] = %{{.*}}) -> (tensor<1x1x6x16xf32>, vector<6x16xf32>)
// VEC-NOT: transfer_write
// VEC: vector.transfer_read {{.*}} : tensor<1x10x10x8xf32>, vector<8x1xf32>
// VEC: vector.transfer_read {{.*}} : tensor<3x3x8x32xf32>, vector<3x1x16xf32>
// VEC-NOT: transfer_write
// VEC: vector.contract {{.*}} %[[A]] : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// VEC-NEXT: vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// VEC-NEXT: vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// VEC-NEXT: scf.yield
// VEC: vector.transfer_write %[[ROWS]]#1, %[[ROWS]]#0
// VEC: vector.contract {{.*}} : vector<2x1xf32>, vector<1x16xf32> into vector<2x16xf32>
// VEC-NOT: linalg.conv

// WIDE-LABEL: func.func @conv
// WIDE-NOT: linalg.conv
// WIDE: vector.transfer_read {{.*}} : tensor<1x1x8x32xf32>, vector<8x32xf32>
// WIDE: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// WIDE-NOT: linalg.conv

// LLVM-LABEL: llvm.func @conv
// LLVM-COUNT-6: llvm.intr.fmuladd(%{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>

func.func @conv(%image: tensor<1x8x10x10xf32>, %filter: tensor<32x8x3x3xf32>) -> tensor<1x32x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%image, %filter : tensor<1x8x10x10xf32>, tensor<32x8x3x3xf32>) outs(%f : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  return %r : tensor<1x32x8x8xf32>
}

// -----

// NHWC-LABEL: func.func @depthwise
// NHWC: %[[IMAGE:.*]] = linalg.transpose ins(%arg0 : tensor<1x16x11x11xf32>) outs(%{{.*}} : tensor<1x11x11x16xf32>) permutation = [0, 2, 3, 1]
// NHWC: %[[FILTER:.*]] = linalg.transpose ins(%arg1 : tensor<16x3x3xf32>) outs(%{{.*}} : tensor<3x3x16xf32>) permutation = [1, 2, 0]
// NHWC: %[[BIAS:.*]] = linalg.transpose ins(%arg2 : tensor<1x16x5x5xf32>) outs(%{{.*}} : tensor<1x5x5x16xf32>) permutation = [0, 2, 3, 1]
// NHWC: %[[CONV:.*]] = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%[[IMAGE]], %[[FILTER]] : {{.*}}) outs(%[[BIAS]] : tensor<1x5x5x16xf32>)
// NHWC: linalg.transpose ins(%[[CONV]] : tensor<1x5x5x16xf32>) outs(%{{.*}} : tensor<1x16x5x5xf32>) permutation = [0, 3, 1, 2]
// NHWC-NOT: linalg.depthwise_conv_2d_nchw_chw

// VEC-LABEL: func.func @depthwise
// VEC-NOT: linalg.depthwise
// VEC: %[[ACC:.*]] = vector.transfer_read {{.*}} : tensor<1x1x5x16xf32>, vector<5x16xf32>
// VEC-NEXT: scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[ACC]]) -> (tensor<1x1x5x16xf32>, vector<5x16xf32>)
// VEC-COUNT-15: vector.fma %{{.*}} : vector<16xf32>
// VEC-NOT: linalg.depthwise

func.func @depthwise(%image: tensor<1x16x11x11xf32>, %filter: tensor<16x3x3xf32>, %bias: tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32> {
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
    ins(%image, %filter : tensor<1x16x11x11xf32>, tensor<16x3x3xf32>) outs(%bias : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  return %r : tensor<1x16x5x5xf32>
}

// -----

// With AVX-512, a depthwise convolution of 24 channels in register tiles of 16 channels and a
// tile of the 8 left: vectors of a power-of-two width. Tiles of 32 channels were one tile of
// 24, vectors of 24 floats that LLVM splits (a block of 24 channels on 112x112 at 1.85x the
// time of 16 and 8).
// WIDE-LABEL: func.func @depthwise_24
// WIDE-NOT: vector<{{[0-9x]*}}24xf32>
// WIDE: vector.transfer_read {{.*}} : tensor<1x1x8x16xf32>, vector<8x16xf32>
// WIDE-COUNT-3: vector.fma {{.*}} : vector<8x16xf32>
// WIDE-NOT: vector<{{[0-9x]*}}24xf32>
// WIDE: vector.transfer_read {{.*}} : tensor<1x1x8x8xf32>, vector<8x8xf32>
// WIDE-COUNT-3: vector.fma {{.*}} : vector<8x8xf32>
// WIDE-NOT: vector<{{[0-9x]*}}24xf32>

func.func @depthwise_24(%image: tensor<1x24x10x10xf32>, %filter: tensor<24x3x3xf32>, %init: tensor<1x24x8x8xf32>) -> tensor<1x24x8x8xf32> {
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%image, %filter : tensor<1x24x10x10xf32>, tensor<24x3x3xf32>) outs(%init : tensor<1x24x8x8xf32>) -> tensor<1x24x8x8xf32>
  return %r : tensor<1x24x8x8xf32>
}

// -----

// With AVX-512, a convolution to 24 output channels (mlirpipe-mark-elementwise marked it: 24
// modulo 32 is not a power of two) in register tiles of `conv-register-narrow` (8 x 16) and a
// tile of the 8 channels left, where tiles of 32 were one tile of 24 (a 1x1 convolution of 144
// to 24 channels on 56x56 took 2.85 ms a call, then 0.24 ms).
// WIDE-LABEL: func.func @conv_24
// WIDE-NOT: vector<1x24xf32>
// WIDE-DAG: vector.contract {{.*}} : vector<8x1xf32>, vector<1x16xf32> into vector<8x16xf32>
// WIDE-DAG: vector.contract {{.*}} : vector<8x1xf32>, vector<1x8xf32> into vector<8x8xf32>
// WIDE-NOT: vector<1x24xf32>
// WIDE: return

func.func @conv_24(%image: tensor<1x16x10x10xf32>, %filter: tensor<24x16x1x1xf32>) -> tensor<1x24x10x10xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x24x10x10xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x24x10x10xf32>) -> tensor<1x24x10x10xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%image, %filter : tensor<1x16x10x10xf32>, tensor<24x16x1x1xf32>) outs(%init : tensor<1x24x10x10xf32>) -> tensor<1x24x10x10xf32>
  return %r : tensor<1x24x10x10xf32>
}

// -----

// Only f32 convolutions of static shapes change layout; this one is left to linalg-to-loops.
// NHWC-LABEL: func.func @f64_conv
// NHWC-NOT: linalg.transpose
// NHWC: linalg.conv_2d_nchw_fchw
// NHWC-NOT: linalg.transpose
// VEC-LABEL: func.func @f64_conv
// VEC: linalg.conv_2d_nchw_fchw
// WIDE-LABEL: func.func @f64_conv
// WIDE: linalg.conv_2d_nchw_fchw

func.func @f64_conv(%image: tensor<1x2x5x5xf64>, %filter: tensor<3x2x3x3xf64>, %init: tensor<1x3x3x3xf64>) -> tensor<1x3x3x3xf64> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%image, %filter : tensor<1x2x5x5xf64>, tensor<3x2x3x3xf64>) outs(%init : tensor<1x3x3x3xf64>) -> tensor<1x3x3x3xf64>
  return %r : tensor<1x3x3x3xf64>
}

// -----

// A convolution without strides or dilations (both 1 by default) changes layout too.
// NHWC-LABEL: func.func @default_strides
// NHWC: linalg.conv_2d_nhwc_hwcf ins(%{{.*}}, %{{.*}} : tensor<1x7x7x2xf32>, tensor<3x3x2x16xf32>) outs(%{{.*}} : tensor<1x5x5x16xf32>)
// VEC-LABEL: func.func @default_strides
// VEC-NOT: linalg.conv
// WIDE-LABEL: func.func @default_strides
// LLVM-LABEL: llvm.func @default_strides

func.func @default_strides(%image: tensor<1x2x7x7xf32>, %filter: tensor<16x2x3x3xf32>, %init: tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32> {
  %r = linalg.conv_2d_nchw_fchw
    ins(%image, %filter : tensor<1x2x7x7xf32>, tensor<16x2x3x3xf32>) outs(%init : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  return %r : tensor<1x16x5x5xf32>
}

// -----

// A convolution with no output channels (a tensor of no elements) is left as it is: tiling it
// would crash.
// NHWC-LABEL: func.func @no_channels
// NHWC-NOT: linalg.transpose
// NHWC: linalg.conv_2d_nchw_fchw
// VEC-LABEL: func.func @no_channels
// WIDE-LABEL: func.func @no_channels
// LLVM-LABEL: llvm.func @no_channels

func.func @no_channels(%image: tensor<1x2x7x7xf32>, %filter: tensor<0x2x3x3xf32>, %init: tensor<1x0x5x5xf32>) -> tensor<1x0x5x5xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%image, %filter : tensor<1x2x7x7xf32>, tensor<0x2x3x3xf32>) outs(%init : tensor<1x0x5x5xf32>) -> tensor<1x0x5x5xf32>
  return %r : tensor<1x0x5x5xf32>
}
