// The transposes around convolutions through refbackend-vectorized. After conv-to-nhwc: a
// constant filter (a model's weight) is a new constant in HWCF (HWC for a depthwise one),
// transposed once at compile time: no transpose of it is left (the weights of this example
// 1, 2, 3, 4 are stored 1, 3, 2, 4, little-endian f32 after the blob's 4 bytes of alignment).
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after conv-to-nhwc | filecheck %s --check-prefix=NHWC

// NHWC-LABEL: func.func @constant_filter
// NHWC: %[[FILTER:.*]] = arith.constant dense_resource<[[BLOB:mlirpipe_filter[_0-9]*]]> : tensor<1x1x2x2xf32>
// NHWC-NOT: linalg.transpose ins(%{{.*}} : tensor<2x2x1x1xf32>)
// NHWC: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.*}}, %[[FILTER]] : tensor<1x3x3x2xf32>, tensor<1x1x2x2xf32>)
// NHWC: [[BLOB]]: "0x040000000000803F000040400000004000008040"

func.func @constant_filter(%image: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %filter = arith.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%image, %filter : tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) outs(%f : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %r : tensor<1x2x3x3xf32>
}

// -----

// NHWC-LABEL: func.func @constant_depthwise_filter
// NHWC: %[[FILTER:.*]] = arith.constant dense_resource<[[BLOB:mlirpipe_filter[_0-9]*]]> : tensor<1x2x2xf32>
// NHWC-NOT: linalg.transpose ins(%{{.*}} : tensor<2x1x2xf32>)
// NHWC: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%{{.*}}, %[[FILTER]] : tensor<1x3x4x2xf32>, tensor<1x2x2xf32>)
// NHWC: [[BLOB]]: "0x040000000000803F000040400000004000008040"

func.func @constant_depthwise_filter(%image: tensor<1x2x3x4xf32>) -> tensor<1x2x3x3xf32> {
  %filter = arith.constant dense<[[[1.0, 2.0]], [[3.0, 4.0]]]> : tensor<2x1x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%image, %filter : tensor<1x2x3x4xf32>, tensor<2x1x2xf32>) outs(%f : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %r : tensor<1x2x3x3xf32>
}

// -----

// After sink-transposes (the filters, not constants here, are transposed as before): the first convolution's result, transposed back to NCHW, moves below
// the scaling (its channels' scale, broadcast along H and W, now read along the last dimension as
// a vector of C: not as C x 1 x 1, which the vectorizer would read element by element),
// the ReLU and the padding (an insertion into a filled NHWC tensor), then meets the second
// convolution's transpose of its image to NHWC, and both are gone. The residual add reads the
// block's input (NCHW) through a permuted map; one transpose is left, of the final result.
// The block's input is transposed to NHWC before its padding, not after: the padding is an
// insertion of the transposed input into a filled NHWC tensor. After write-into-paddings the
// transpose writes into that tensor's interior (its destination an extract_slice of the fill),
// and so does the ReLU into the second convolution's padding: no copy of either is left.
// SINK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// SINK-DAG: #[[CHANNEL:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// SINK-DAG: #[[NCHW:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
// SINK-LABEL: func.func @block
// SINK: %[[IN:.*]] = linalg.transpose ins(%arg0 : tensor<1x4x6x6xf32>) outs(%{{.*}} : tensor<1x6x6x4xf32>) permutation = [0, 2, 3, 1]
// SINK: %[[PADDING:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x8x8x4xf32>)
// SINK-NEXT: tensor.insert_slice %[[IN]] into %[[PADDING]][0, 1, 1, 0] [1, 6, 6, 4] [1, 1, 1, 1] : tensor<1x6x6x4xf32> into tensor<1x8x8x4xf32>
// SINK-NOT: linalg.transpose ins(%{{.*}} : tensor<1x4x8x8xf32>)
// SINK: %[[C1:.*]] = linalg.conv_2d_nhwc_hwcf
// SINK-NOT: linalg.transpose ins(%{{.*}} : tensor<1x
// SINK: %[[SCALE:.*]] = tensor.collapse_shape %arg2 {{\[}}[0, 1, 2]] : tensor<4x1x1xf32> into tensor<4xf32>
// SINK: %[[SCALED:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[CHANNEL]], #[[ID]]], {{.*}}} ins(%[[C1]], %[[SCALE]] : tensor<1x6x6x4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<1x6x6x4xf32>)
// SINK-NOT: linalg.transpose ins(%{{.*}} : tensor<1x
// SINK: %[[RELU:.*]] = linalg.generic {{.*}} ins(%[[SCALED]] : tensor<1x6x6x4xf32>) outs(%{{.*}} : tensor<1x6x6x4xf32>)
// SINK-NOT: linalg.transpose ins(%{{.*}} : tensor<1x
// SINK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x8x8x4xf32>)
// SINK-NEXT: %[[PADDED:.*]] = tensor.insert_slice %[[RELU]] into %[[FILL]][0, 1, 1, 0] [1, 6, 6, 4] [1, 1, 1, 1] : tensor<1x6x6x4xf32> into tensor<1x8x8x4xf32>
// SINK-NOT: linalg.transpose ins(%{{.*}} : tensor<1x
// SINK: %[[C2:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[PADDED]], %{{.*}} : tensor<1x8x8x4xf32>, tensor<3x3x4x4xf32>)
// SINK-NOT: linalg.transpose ins(%{{.*}} : tensor<1x
// SINK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[NCHW]], #[[ID]]], {{.*}}} ins(%[[C2]], %arg0 : tensor<1x6x6x4xf32>, tensor<1x4x6x6xf32>) outs(%{{.*}} : tensor<1x6x6x4xf32>)
// SINK-NEXT: ^bb0
// SINK-NEXT: arith.addf
// SINK: %[[OUT:.*]] = linalg.transpose ins(%[[SUM]] : tensor<1x6x6x4xf32>) outs(%{{.*}} : tensor<1x4x6x6xf32>) permutation = [0, 3, 1, 2]
// SINK-NEXT: return %[[OUT]]
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after sink-transposes | filecheck %s --check-prefix=SINK
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after write-into-paddings | filecheck %s --check-prefix=INTO
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after lower-vectors | filecheck %s --check-prefix=NOCOPY
// INTO-LABEL: func.func @block
// INTO: %[[PADDING:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x8x8x4xf32>)
// INTO-NEXT: %[[INTERIOR:.*]] = tensor.extract_slice %[[PADDING]][0, 1, 1, 0] [1, 6, 6, 4] [1, 1, 1, 1]
// INTO-NEXT: %[[IN:.*]] = linalg.transpose ins(%arg0 : tensor<1x4x6x6xf32>) outs(%[[INTERIOR]] : tensor<1x6x6x4xf32>)
// INTO-NEXT: tensor.insert_slice %[[IN]] into %[[PADDING]][0, 1, 1, 0]
// NOCOPY-LABEL: func.func @block
// NOCOPY-NOT: memref.copy
// NOCOPY: return

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @block(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x3x3xf32>, %scale: tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x6x6xf32> to tensor<1x4x8x8xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%xp, %w : tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) outs(%f : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #channel, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%c1, %scale : tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) outs(%e : tensor<1x4x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x4x6x6xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%scaled : tensor<1x4x6x6xf32>) outs(%e : tensor<1x4x6x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x6x6xf32>
  %rp = tensor.pad %relu low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x6x6xf32> to tensor<1x4x8x8xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%rp, %w : tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) outs(%f : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%c2, %x : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) outs(%e : tensor<1x4x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x4x6x6xf32>
  return %sum : tensor<1x4x6x6xf32>
}

// -----

// Two convolutions added: the add reads both results in NHWC (each a transpose by the same
// permutation), and its own result is transposed once.
// SINK-LABEL: func.func @two_convolutions
// SINK: %[[A:.*]] = linalg.conv_2d_nhwc_hwcf
// SINK: %[[B:.*]] = linalg.conv_2d_nhwc_hwcf
// SINK-NOT: linalg.transpose ins(%{{.*}} : tensor<1x
// SINK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[B]] : tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>) outs(%{{.*}} : tensor<1x3x3x2xf32>)
// SINK: linalg.transpose ins(%[[SUM]] : tensor<1x3x3x2xf32>) outs(%{{.*}} : tensor<1x2x3x3xf32>) permutation = [0, 3, 1, 2]
// SINK-NOT: linalg.transpose ins(%{{.*}} : tensor<1x

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @two_convolutions(%x: tensor<1x2x3x3xf32>, %v: tensor<2x2x1x1xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %v : tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) outs(%f : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %b = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) outs(%f : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%a, %b : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) outs(%e : tensor<1x2x3x3xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.addf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<1x2x3x3xf32>
  return %sum : tensor<1x2x3x3xf32>
}

// -----

// An elementwise op that reads its loop indices (the upper triangle of each channel's image by
// channel <= row) moves below the transpose with them renumbered: the channel is dimension 3 of
// the NHWC image and the row dimension 1, not 1 and 2 as in NCHW.
// SINK-LABEL: func.func @index_after_conv
// SINK: %[[C:.*]] = linalg.conv_2d_nhwc_hwcf
// SINK: linalg.generic {{.*}} ins(%[[C]] : tensor<1x3x3x2xf32>)
// SINK-NEXT: ^bb0
// SINK-NEXT: %[[CH:.*]] = linalg.index 3 : index
// SINK-NEXT: %[[ROW:.*]] = linalg.index 1 : index
// SINK-NEXT: arith.cmpi sle, %[[CH]], %[[ROW]] : index

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @index_after_conv(%x: tensor<1x2x3x3xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) outs(%f : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x2x3x3xf32>) outs(%e : tensor<1x2x3x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %ch = linalg.index 1 : index
    %row = linalg.index 2 : index
    %keep = arith.cmpi sle, %ch, %row : index
    %r = arith.select %keep, %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x2x3x3xf32>
  return %t : tensor<1x2x3x3xf32>
}

// -----

// A transpose other than NHWC to NCHW (not a convolution's result) stays where it is, above the
// elementwise op that reads it.
// SINK-LABEL: func.func @other_transpose
// SINK: %[[T:.*]] = linalg.transpose ins(%arg0 : tensor<2x3x4x5xf32>) outs(%{{.*}} : tensor<2x4x5x3xf32>) permutation = [0, 2, 3, 1]
// SINK-NEXT: linalg.generic {{.*}} ins(%[[T]] : tensor<2x4x5x3xf32>)

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @other_transpose(%x: tensor<2x3x4x5xf32>) -> tensor<2x4x5x3xf32> {
  %e = tensor.empty() : tensor<2x4x5x3xf32>
  %t = linalg.transpose ins(%x : tensor<2x3x4x5xf32>) outs(%e : tensor<2x4x5x3xf32>) permutation = [0, 2, 3, 1]
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%t : tensor<2x4x5x3xf32>) outs(%e : tensor<2x4x5x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<2x4x5x3xf32>
  return %r : tensor<2x4x5x3xf32>
}

// -----

// A depthwise filter as torch-mlir gives it: the constant C x 1 x KH x KW seen as C x KH x KW
// (a collapse_shape of a dense_resource, which nothing folds). Its values are read through that
// view and transposed once likewise.
// SINK-LABEL: func.func @collapsed_depthwise_filter
// NHWC-LABEL: func.func @collapsed_depthwise_filter
// NHWC: %[[FILTER:.*]] = arith.constant dense_resource<[[BLOB:mlirpipe_filter[_0-9]*]]> : tensor<1x2x2xf32>
// NHWC-NOT: linalg.transpose ins(%{{.*}} : tensor<2x1x2xf32>)
// NHWC: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%{{.*}}, %[[FILTER]] : tensor<1x3x4x2xf32>, tensor<1x2x2xf32>)
// NHWC: [[BLOB]]: "0x040000000000803F000040400000004000008040"

func.func @collapsed_depthwise_filter(%image: tensor<1x2x3x4xf32>) -> tensor<1x2x3x3xf32> {
  %weight = arith.constant dense_resource<weight> : tensor<2x1x1x2xf32>
  %filter = tensor.collapse_shape %weight [[0, 1], [2], [3]] : tensor<2x1x1x2xf32> into tensor<2x1x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%image, %filter : tensor<1x2x3x4xf32>, tensor<2x1x2xf32>) outs(%f : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %r : tensor<1x2x3x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weight: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
