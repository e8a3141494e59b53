// fill-borders: a padding's fill whose interior one op writes whole (here a transpose of an
// image to NHWC, and an elementwise op) becomes fills of the slabs around that interior only:
// along H the rows before and after it (whole along W and C), along W the columns before and
// after it within the interior's rows; an asymmetric padding gets only the slabs it has; a
// max pooling written into the interior from its own fill of -inf (a chain of ops, the first
// writing the whole interior) counts as a writer of all of it. Left
// as they are: a fill whose interior is written by an op that reads it (an accumulation), and a
// fill with another user, and a fill of a buffer. No copy is left after bufferization.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after fill-borders | filecheck %s --check-prefix=FILL
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after buffer-deallocation | filecheck %s --check-prefix=LOOPS

// FILL-LABEL: func.func @padded_image
// FILL-NOT: outs(%{{.*}} : tensor<1x6x6x8xf32>)
// FILL: %[[E:.*]] = tensor.empty() : tensor<1x6x6x8xf32>
// FILL: %[[S1:.*]] = tensor.extract_slice %[[E]][0, 0, 0, 0] [1, 1, 6, 8] [1, 1, 1, 1]
// FILL: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[S1]] : tensor<1x1x6x8xf32>)
// FILL: %[[T1:.*]] = tensor.insert_slice %[[F1]] into %[[E]][0, 0, 0, 0] [1, 1, 6, 8] [1, 1, 1, 1]
// FILL: %[[S2:.*]] = tensor.extract_slice %[[T1]][0, 5, 0, 0] [1, 1, 6, 8] [1, 1, 1, 1]
// FILL: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[S2]] : tensor<1x1x6x8xf32>)
// FILL: %[[T2:.*]] = tensor.insert_slice %[[F2]] into %[[T1]][0, 5, 0, 0] [1, 1, 6, 8] [1, 1, 1, 1]
// FILL: %[[S3:.*]] = tensor.extract_slice %[[T2]][0, 1, 0, 0] [1, 4, 1, 8] [1, 1, 1, 1]
// FILL: %[[F3:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[S3]] : tensor<1x4x1x8xf32>)
// FILL: %[[T3:.*]] = tensor.insert_slice %[[F3]] into %[[T2]][0, 1, 0, 0] [1, 4, 1, 8] [1, 1, 1, 1]
// FILL: %[[S4:.*]] = tensor.extract_slice %[[T3]][0, 1, 5, 0] [1, 4, 1, 8] [1, 1, 1, 1]
// FILL: %[[F4:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[S4]] : tensor<1x4x1x8xf32>)
// FILL: %[[T4:.*]] = tensor.insert_slice %[[F4]] into %[[T3]][0, 1, 5, 0] [1, 4, 1, 8] [1, 1, 1, 1]
// FILL-NOT: linalg.fill
// FILL: %[[IN:.*]] = tensor.extract_slice %[[T4]][0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1]
// FILL: %[[T:.*]] = linalg.transpose ins(%arg0 : tensor<1x8x4x4xf32>) outs(%[[IN]] : tensor<1x4x4x8xf32>) permutation = [0, 2, 3, 1]
// FILL: tensor.insert_slice %[[T]] into %[[T4]][0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1]
// LOOPS-LABEL: func.func @padded_image
// LOOPS-NOT: memref.copy
// LOOPS: return
func.func @padded_image(%image: tensor<1x8x4x4xf32>) -> tensor<1x6x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x6x6x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  %in = tensor.extract_slice %f[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x6x6x8xf32> to tensor<1x4x4x8xf32>
  %t = linalg.transpose ins(%image : tensor<1x8x4x4xf32>) outs(%in : tensor<1x4x4x8xf32>) permutation = [0, 2, 3, 1]
  %r = tensor.insert_slice %t into %f[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x8xf32> into tensor<1x6x6x8xf32>
  return %r : tensor<1x6x6x8xf32>
}

// -----

// FILL-LABEL: func.func @asymmetric
// FILL-NOT: outs(%{{.*}} : tensor<1x6x6x8xf32>)
// FILL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x6x8xf32>)
// FILL: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 1, 6, 8] [1, 1, 1, 1]
// FILL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x5x2x8xf32>)
// FILL: tensor.insert_slice %{{.*}} into %{{.*}}[0, 1, 0, 0] [1, 5, 2, 8] [1, 1, 1, 1]
// FILL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x5x1x8xf32>)
// FILL: tensor.insert_slice %{{.*}} into %{{.*}}[0, 1, 5, 0] [1, 5, 1, 8] [1, 1, 1, 1]
// FILL-NOT: linalg.fill
// FILL: linalg.generic
// FILL: return
#id4 = affine_map<(n, h, w, c) -> (n, h, w, c)>
func.func @asymmetric(%x: tensor<1x5x3x8xf32>) -> tensor<1x6x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x6x6x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  %in = tensor.extract_slice %f[0, 1, 2, 0] [1, 5, 3, 8] [1, 1, 1, 1] : tensor<1x6x6x8xf32> to tensor<1x5x3x8xf32>
  %relu = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x5x3x8xf32>) outs(%in : tensor<1x5x3x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x5x3x8xf32>
  %r = tensor.insert_slice %relu into %f[0, 1, 2, 0] [1, 5, 3, 8] [1, 1, 1, 1] : tensor<1x5x3x8xf32> into tensor<1x6x6x8xf32>
  return %r : tensor<1x6x6x8xf32>
}

// -----

// FILL-LABEL: func.func @pool_into_padding
// FILL-NOT: outs(%{{.*}} : tensor<1x6x6x8xf32>)
// FILL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x6x8xf32>)
// FILL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x6x8xf32>)
// FILL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x1x8xf32>)
// FILL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x1x8xf32>)
// FILL: %[[IN:.*]] = tensor.extract_slice %{{.*}}[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1]
// FILL: %[[LOW:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[IN]] : tensor<1x4x4x8xf32>)
// FILL: linalg.pooling_nhwc_max {{.*}} outs(%[[LOW]] : tensor<1x4x4x8xf32>)
func.func @pool_into_padding(%image: tensor<1x9x9x8xf32>) -> tensor<1x6x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x6x6x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  %in = tensor.extract_slice %f[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x6x6x8xf32> to tensor<1x4x4x8xf32>
  %low = linalg.fill ins(%ninf : f32) outs(%in : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %p = linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
    ins(%image, %window : tensor<1x9x9x8xf32>, tensor<3x3xf32>) outs(%low : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %r = tensor.insert_slice %p into %f[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x8xf32> into tensor<1x6x6x8xf32>
  return %r : tensor<1x6x6x8xf32>
}

// -----

// FILL-LABEL: func.func @reads_its_init
// FILL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x6x6x8xf32>)
// FILL-NOT: linalg.fill
// FILL: return
#id4 = affine_map<(n, h, w, c) -> (n, h, w, c)>
func.func @reads_its_init(%x: tensor<1x4x4x8xf32>) -> tensor<1x6x6x8xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x6x6x8xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  %in = tensor.extract_slice %f[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x6x6x8xf32> to tensor<1x4x4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x4x8xf32>) outs(%in : tensor<1x4x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x8xf32>
  %r = tensor.insert_slice %sum into %f[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x8xf32> into tensor<1x6x6x8xf32>
  return %r : tensor<1x6x6x8xf32>
}

// -----

// FILL-LABEL: func.func @other_user
// FILL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x6x6x8xf32>)
// FILL-NOT: linalg.fill
// FILL: return
func.func @other_user(%image: tensor<1x8x4x4xf32>) -> (tensor<1x6x6x8xf32>, tensor<1x6x6x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x6x6x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  %in = tensor.extract_slice %f[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x6x6x8xf32> to tensor<1x4x4x8xf32>
  %t = linalg.transpose ins(%image : tensor<1x8x4x4xf32>) outs(%in : tensor<1x4x4x8xf32>) permutation = [0, 2, 3, 1]
  %r = tensor.insert_slice %t into %f[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x8xf32> into tensor<1x6x6x8xf32>
  return %r, %f : tensor<1x6x6x8xf32>, tensor<1x6x6x8xf32>
}

// -----

// FILL-LABEL: func.func @fill_of_a_buffer
// FILL: linalg.fill ins(%{{.*}} : f32) outs(%arg0 : memref<4xf32>)
func.func @fill_of_a_buffer(%b: memref<4xf32>, %t: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%b : memref<4xf32>)
  return %t : tensor<4xf32>
}
