// mlirpipe-conv-to-nhwc{panels=W}: a constant filter of at least panel-bytes bytes whose output
// channels F are a multiple of W (more than W) is cut into F / W filters of W output channels,
// each a constant of its own (HWCF, contiguous), and the convolution into F / W convolutions,
// each into its own fill (or its share of the bias) inserted into the NHWC result at its
// channels. Below panel-bytes (1 MiB by default), with F not a multiple of W, F = W, or a filter
// that is not a constant, the convolution stays one.
// RUN: mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-conv-to-nhwc{panels=2 panel-bytes=0})' | filecheck %s
// RUN: mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-conv-to-nhwc{panels=2})' | filecheck %s --check-prefix=SMALL
// RUN: mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-conv-to-nhwc{panels=3 panel-bytes=0})' | filecheck %s --check-prefix=SMALL
// RUN: mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-conv-to-nhwc{panels=4 panel-bytes=0})' | filecheck %s --check-prefix=SMALL
// RUN: not mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-conv-to-nhwc{panels=two})' 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-conv-to-nhwc{panel-bytes=-1})' 2>&1 | filecheck %s --check-prefix=ERR-BYTES
// RUN: not mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-conv-to-nhwc{panels=²})' 2>&1 | filecheck %s --check-prefix=ERR-DIGIT

// ERR: error: mlirpipe-conv-to-nhwc: panels='two' is not an integer of 0 or more
// ERR-NEXT: hint: give the output channels of a filter panel (0: no panels) and the bytes a filter has at least to be cut, e.g. mlirpipe-conv-to-nhwc{panels=32 panel-bytes=1048576}
// ERR-BYTES: error: mlirpipe-conv-to-nhwc: panel-bytes='-1' is not an integer of 0 or more
// ERR-DIGIT: error: mlirpipe-conv-to-nhwc: panels='²' is not an integer of 0 or more

// CHECK-LABEL: func.func @zero_fill
// CHECK: %[[IMAGE:.*]] = linalg.transpose ins(%arg0 : tensor<1x2x6x6xf32>) outs(%{{.*}} : tensor<1x6x6x2xf32>) permutation = [0, 2, 3, 1]
// CHECK: %[[ALL:.*]] = tensor.empty() : tensor<1x4x4x4xf32>
// CHECK: %[[F0:.*]] = arith.constant dense_resource<mlirpipe_filter{{.*}}> : tensor<3x3x2x2xf32>
// CHECK: %[[Z0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x4x2xf32>)
// CHECK: %[[C0:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}}ins(%[[IMAGE]], %[[F0]] : tensor<1x6x6x2xf32>, tensor<3x3x2x2xf32>) outs(%[[Z0]] : tensor<1x4x4x2xf32>)
// CHECK: %[[P0:.*]] = tensor.insert_slice %[[C0]] into %[[ALL]][0, 0, 0, 0] [1, 4, 4, 2] [1, 1, 1, 1]
// CHECK: %[[F1:.*]] = arith.constant dense_resource<mlirpipe_filter{{.*}}> : tensor<3x3x2x2xf32>
// CHECK: %[[Z1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x4x2xf32>)
// CHECK: %[[C1:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}}ins(%[[IMAGE]], %[[F1]] : tensor<1x6x6x2xf32>, tensor<3x3x2x2xf32>) outs(%[[Z1]] : tensor<1x4x4x2xf32>)
// CHECK: %[[P1:.*]] = tensor.insert_slice %[[C1]] into %[[P0]][0, 0, 0, 2] [1, 4, 4, 2] [1, 1, 1, 1]
// CHECK: linalg.transpose ins(%[[P1]] : tensor<1x4x4x4xf32>) outs(%{{.*}} : tensor<1x4x4x4xf32>) permutation = [0, 3, 1, 2]
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// SMALL-LABEL: func.func @zero_fill
// SMALL-COUNT-1: linalg.conv_2d_nhwc_hwcf
// SMALL-NOT: linalg.conv_2d_nhwc_hwcf
// SMALL-NOT: tensor.insert_slice
// SMALL: return
func.func @zero_fill(%arg0: tensor<1x2x6x6xf32>) -> tensor<1x4x4x4xf32> {
  %w = arith.constant dense<"0xe4cfc23f0f7292bf7f38933f846fe4bff18045bfe273823f28176dbf92dcd4be16d880bd6e64033ffb6d92be350efe3ff8caa63fa94798bb3276963fe93eac3feeee2fbe17751ac06b88cbbdcbc47abf2e53713f62ede73e713e093fef3dfd3e1132f93fe485543e866bd2bfbcca0abfc8cfc4bed85bd2be0148723f42a67a3f5bdb35bf45c0563fca59aebf2c2043bfeaf8f6be4609b03eb68c34bf691dcbbe33829abf5bb52abf8449b53d9e76933d0c1a7a3ed3ac92bd9e7d63be3c0bba3f8a3056c00b3fa5bf49a304c0cf3397bf736aa93f4ebbe23e75958e3f8df4d5be8480b13fe15c3dbee79998be45cac53fcf4bf63cbf9b34be5f16743ec714bbbf3e92673f4dfbc53f5aa9803ef0db1bbfd23e113f834808bf52716b3b30545a3f"> : tensor<4x2x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw ins(%arg0, %w : tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>)
    outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %r : tensor<1x4x4x4xf32>
}

// -----

// A bias (torch-mlir's nn.Conv2d with bias): each panel broadcasts its share of it.
// CHECK-LABEL: func.func @bias
// CHECK: %[[B0:.*]] = tensor.extract_slice %arg1[0] [2] [1] : tensor<4xf32> to tensor<2xf32>
// CHECK: %[[I0:.*]] = linalg.broadcast ins(%[[B0]] : tensor<2xf32>) outs(%{{.*}} : tensor<1x4x4x2xf32>) dimensions = [0, 1, 2]
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}}outs(%[[I0]] : tensor<1x4x4x2xf32>)
// CHECK: %[[B1:.*]] = tensor.extract_slice %arg1[2] [2] [1] : tensor<4xf32> to tensor<2xf32>
// CHECK: %[[I1:.*]] = linalg.broadcast ins(%[[B1]] : tensor<2xf32>) outs(%{{.*}} : tensor<1x4x4x2xf32>) dimensions = [0, 1, 2]
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}}outs(%[[I1]] : tensor<1x4x4x2xf32>)
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// CHECK: return
func.func @bias(%arg0: tensor<1x2x6x6xf32>, %arg1: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %w = arith.constant dense<"0xe4cfc23f0f7292bf7f38933f846fe4bff18045bfe273823f28176dbf92dcd4be16d880bd6e64033ffb6d92be350efe3ff8caa63fa94798bb3276963fe93eac3feeee2fbe17751ac06b88cbbdcbc47abf2e53713f62ede73e713e093fef3dfd3e1132f93fe485543e866bd2bfbcca0abfc8cfc4bed85bd2be0148723f42a67a3f5bdb35bf45c0563fca59aebf2c2043bfeaf8f6be4609b03eb68c34bf691dcbbe33829abf5bb52abf8449b53d9e76933d0c1a7a3ed3ac92bd9e7d63be3c0bba3f8a3056c00b3fa5bf49a304c0cf3397bf736aa93f4ebbe23e75958e3f8df4d5be8480b13fe15c3dbee79998be45cac53fcf4bf63cbf9b34be5f16743ec714bbbf3e92673f4dfbc53f5aa9803ef0db1bbfd23e113f834808bf52716b3b30545a3f"> : tensor<4x2x3x3xf32>
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %b = linalg.broadcast ins(%arg1 : tensor<4xf32>) outs(%e : tensor<1x4x4x4xf32>) dimensions = [0, 2, 3]
  %r = linalg.conv_2d_nchw_fchw ins(%arg0, %w : tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>)
    outs(%b : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %r : tensor<1x4x4x4xf32>
}

// -----

// A filter that is not a constant: one convolution, its filter transposed at every call.
// CHECK-LABEL: func.func @filter_argument
// CHECK: linalg.transpose ins(%arg1 : tensor<4x2x3x3xf32>)
// CHECK-COUNT-1: linalg.conv_2d_nhwc_hwcf
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// CHECK: return
func.func @filter_argument(%arg0: tensor<1x2x6x6xf32>, %arg1: tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw ins(%arg0, %arg1 : tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>)
    outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %r : tensor<1x4x4x4xf32>
}
