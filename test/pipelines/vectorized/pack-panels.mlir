// mlirpipe-pack-matmul-rhs: B of an f32 matmul of static shapes whose N is a multiple of the
// panel width becomes panels (N/W x K x W), whatever B's and A's layout; the matmul a
// linalg.contract writing C seen in panels. Other matmuls are left as they are.
// RUN: mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-pack-matmul-rhs)' | filecheck %s
// RUN: mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-pack-matmul-rhs{width=8})' | filecheck %s --check-prefix=W8
// RUN: not mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-pack-matmul-rhs{width=0})' 2>&1 | filecheck %s --check-prefix=ERR

// ERR: error: mlirpipe-pack-matmul-rhs: width='0' is not a positive integer
// ERR-NEXT: hint: give the panel width in columns, e.g. mlirpipe-pack-matmul-rhs{width=16}

// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2)>
// CHECK-LABEL: func.func @plain
// CHECK: %[[P:.*]] = linalg.pack %arg1 outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [16] into %{{.*}} : tensor<8x32xf32> -> tensor<2x8x16xf32>
// CHECK: %[[C3:.*]] = tensor.expand_shape %arg2 {{\[\[}}0], [1, 2]] output_shape [4, 2, 16] : tensor<4x32xf32> into tensor<4x2x16xf32>
// CHECK: %[[R:.*]] = linalg.contract indexing_maps = [#[[A]], #[[B]], #[[C]]] ins(%arg0, %[[P]] : tensor<4x8xf32>, tensor<2x8x16xf32>) outs(%[[C3]] : tensor<4x2x16xf32>)
// CHECK: %[[R2:.*]] = tensor.collapse_shape %[[R]] {{\[\[}}0], [1, 2]] : tensor<4x2x16xf32> into tensor<4x32xf32>
// CHECK: return %[[R2]]
// W8-LABEL: func.func @plain
// W8: linalg.pack %arg1 outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [8] into %{{.*}} : tensor<8x32xf32> -> tensor<4x8x8xf32>
func.func @plain(%a: tensor<4x8xf32>, %b: tensor<8x32xf32>, %c: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x32xf32>) outs(%c : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}

// -----

// B stored (n, k), as a linear layer's weight: its rows are already panels' columns.
// CHECK-DAG: #[[AT:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d1)>
// CHECK-LABEL: func.func @transposed
// CHECK: %[[P:.*]] = linalg.pack %arg1 inner_dims_pos = [0] inner_tiles = [16] into %{{.*}} : tensor<32x8xf32> -> tensor<2x8x16xf32>
// CHECK: linalg.contract indexing_maps = [#[[AT]], {{.*}}] ins(%arg0, %[[P]] : tensor<8x4xf32>, tensor<2x8x16xf32>)
// CHECK-NOT: linalg.matmul
func.func @transposed(%a: tensor<8x4xf32>, %b: tensor<32x8xf32>, %c: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : tensor<8x4xf32>, tensor<32x8xf32>) outs(%c : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}

// -----

// Left as they are: N not a multiple of 16, f64, a dynamic shape.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: linalg.pack
// CHECK-COUNT-3: linalg.matmul
// CHECK-NOT: linalg.contract
func.func @kept(%a: tensor<4x8xf32>, %b: tensor<8x37xf32>, %c: tensor<4x37xf32>,
                %x: tensor<4x8xf64>, %y: tensor<8x32xf64>, %z: tensor<4x32xf64>,
                %d: tensor<?x8xf32>, %e: tensor<8x32xf32>, %f: tensor<?x32xf32>) -> (tensor<4x37xf32>, tensor<4x32xf64>, tensor<?x32xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x37xf32>) outs(%c : tensor<4x37xf32>) -> tensor<4x37xf32>
  %s = linalg.matmul ins(%x, %y : tensor<4x8xf64>, tensor<8x32xf64>) outs(%z : tensor<4x32xf64>) -> tensor<4x32xf64>
  %t = linalg.matmul ins(%d, %e : tensor<?x8xf32>, tensor<8x32xf32>) outs(%f : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %r, %s, %t : tensor<4x37xf32>, tensor<4x32xf64>, tensor<?x32xf32>
}
