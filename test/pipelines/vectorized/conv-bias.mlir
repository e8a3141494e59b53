// A convolution with bias, as torch-mlir imports nn.Conv2d(bias=True): its initial result a
// linalg.broadcast of the bias along N, H and W of the NCHW result. After conv-to-nhwc the bias
// is broadcast along N, H and W of the NHWC result (no NCHW tensor of it, no transpose of one:
// that broadcast was a scalar loop over the whole result and its transpose a pass over memory;
// a depthwise 3x3 + pointwise block of 32 channels at 56x56 on 8 images took 31x torch). After
// tile-and-vectorize the broadcast is fused into the convolution's blocks (a dense one and a
// depthwise one alike): each register tile's bias is written as vectors into the block, then
// read as the accumulator; no linalg.broadcast is left to become a loop.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after conv-to-nhwc | filecheck %s --check-prefix=NHWC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2,fma,avx512f mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC

// NHWC-LABEL: func.func @conv_bias
// NHWC-NOT: dimensions = [0, 2, 3]
// NHWC: %[[BIAS:.*]] = linalg.broadcast ins(%arg2 : tensor<32xf32>) outs(%{{.*}} : tensor<8x8x8x32xf32>) dimensions = [0, 1, 2]
// NHWC-NEXT: %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} outs(%[[BIAS]] : tensor<8x8x8x32xf32>)
// NHWC: linalg.transpose ins(%[[CONV]] : tensor<8x8x8x32xf32>) outs(%{{.*}} : tensor<8x32x8x8xf32>) permutation = [0, 3, 1, 2]
// VEC-LABEL: func.func @conv_bias
// VEC-NOT: linalg.broadcast
// VEC: scf.forall (%{{.*}}, %{{.*}}) in (8, 2)
// VEC: %[[B:.*]] = vector.transfer_read %arg2[%{{.*}}], %{{.*}} : tensor<32xf32>, vector<{{[0-9]+}}x{{16|32}}xf32>
// VEC-NEXT: vector.transfer_write %[[B]], %{{.*}} : vector<{{[0-9]+}}x{{16|32}}xf32>, tensor<1x4x8x32xf32>
// VEC: vector.contract
// VEC-NOT: linalg.broadcast
// VEC: return

func.func @conv_bias(%x: tensor<8x16x10x10xf32>, %f: tensor<32x16x3x3xf32>, %b: tensor<32xf32>) -> tensor<8x32x8x8xf32> {
  %e = tensor.empty() : tensor<8x32x8x8xf32>
  %init = linalg.broadcast ins(%b : tensor<32xf32>) outs(%e : tensor<8x32x8x8xf32>) dimensions = [0, 2, 3]
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %f : tensor<8x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%init : tensor<8x32x8x8xf32>) -> tensor<8x32x8x8xf32>
  return %r : tensor<8x32x8x8xf32>
}

// -----

// NHWC-LABEL: func.func @depthwise_bias
// NHWC-NOT: dimensions = [0, 2, 3]
// NHWC: %[[BIAS:.*]] = linalg.broadcast ins(%arg2 : tensor<32xf32>) outs(%{{.*}} : tensor<8x14x14x32xf32>) dimensions = [0, 1, 2]
// NHWC-NEXT: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} outs(%[[BIAS]] : tensor<8x14x14x32xf32>)
// VEC-LABEL: func.func @depthwise_bias
// VEC-NOT: linalg.broadcast
// VEC: scf.forall (%{{.*}}, %{{.*}}) in (8, 4)
// VEC: %[[B:.*]] = vector.transfer_read %arg2[%{{.*}}], %{{.*}} : tensor<32xf32>, vector<{{[0-9]+}}x{{16|32}}xf32>
// VEC-NEXT: vector.transfer_write %[[B]], %{{.*}} : vector<{{[0-9]+}}x{{16|32}}xf32>, tensor<1x?x14x32xf32>
// VEC: vector.fma
// VEC-NOT: linalg.broadcast
// VEC: return

func.func @depthwise_bias(%x: tensor<8x32x16x16xf32>, %f: tensor<32x3x3xf32>, %b: tensor<32xf32>) -> tensor<8x32x14x14xf32> {
  %e = tensor.empty() : tensor<8x32x14x14xf32>
  %init = linalg.broadcast ins(%b : tensor<32xf32>) outs(%e : tensor<8x32x14x14xf32>) dimensions = [0, 2, 3]
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %f : tensor<8x32x16x16xf32>, tensor<32x3x3xf32>) outs(%init : tensor<8x32x14x14xf32>) -> tensor<8x32x14x14xf32>
  return %r : tensor<8x32x14x14xf32>
}
