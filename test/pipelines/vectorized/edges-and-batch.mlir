// Shapes the tiles do not divide (10x20 @ 20x37 against 4x16 register tiles) and a batched
// matmul: the register loops are peeled, full tiles are plain vector.contract, the edges
// masked ones of the same 4x16 size; no linalg op is left after tile-and-vectorize.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline refbackend-vectorized --stop-after lower-contractions | filecheck %s --check-prefix=FMA

// VEC-LABEL: func.func @forward
// VEC-NOT: linalg.
// VEC: %{{.*}} = vector.contract {{.*}} : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
// VEC: vector.mask %{{.*}} { vector.contract {{.*}} : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32> } : vector<4x16x1xi1>
// VEC: vector.mask %{{.*}} { vector.transfer_read %arg3{{.*}} : tensor<2x3x18xf32>, vector<1x1x16xf32> }
// VEC-NOT: linalg.

// FMA-NOT: vector.contract
// FMA: vector.fma
// FMA-NOT: vector.contract

func.func @forward(%a: tensor<10x20xf32>, %b: tensor<20x37xf32>, %x: tensor<2x5x3xf32>, %y: tensor<2x3x18xf32>) -> (tensor<10x37xf32>, tensor<2x5x18xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x37xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<10x37xf32>) -> tensor<10x37xf32>
  %r = linalg.matmul ins(%a, %b : tensor<10x20xf32>, tensor<20x37xf32>) outs(%f : tensor<10x37xf32>) -> tensor<10x37xf32>
  %e2 = tensor.empty() : tensor<2x5x18xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x5x18xf32>) -> tensor<2x5x18xf32>
  %r2 = linalg.batch_matmul ins(%x, %y : tensor<2x5x3xf32>, tensor<2x3x18xf32>) outs(%f2 : tensor<2x5x18xf32>) -> tensor<2x5x18xf32>
  return %r, %r2 : tensor<10x37xf32>, tensor<2x5x18xf32>
}
