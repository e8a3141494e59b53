// mlirpipe-pack-matmul: B of an f32 matmul of static shapes whose N is a multiple of the
// panel width becomes panels (N/W x K x W), whatever B's and A's layout; the matmul a
// linalg.contract writing C seen in panels. With rows=R and M of at least R, A becomes
// strips (M/R x K x R) too, and C is seen in strips and panels; the M mod R rows left over are
// a second contract on a strip of their own. Other matmuls are left as they are.
// RUN: mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-pack-matmul)' | filecheck %s
// RUN: mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-pack-matmul{width=8})' | filecheck %s --check-prefix=W8
// RUN: mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-pack-matmul{rows=4})' | filecheck %s --check-prefix=R4
// RUN: not mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-pack-matmul{width=0})' 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not mlirpipe-opt %s --split-input-file --pass-pipeline 'builtin.module(mlirpipe-pack-matmul{rows=four})' 2>&1 | filecheck %s --check-prefix=ERR-ROWS

// ERR: error: mlirpipe-pack-matmul: width='0' is not a positive integer
// ERR-NEXT: hint: give the panel width in columns and the strip height in rows (0: A is not packed), e.g. mlirpipe-pack-matmul{width=16 rows=4}
// ERR-ROWS: error: mlirpipe-pack-matmul: rows='four' is not an integer of 0 or more

// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2)>
// CHECK-LABEL: func.func @plain
// CHECK-SAME: -> tensor<4x32xf32>
// CHECK: %[[P:.*]] = linalg.pack %arg1 outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [16] into %{{.*}} : tensor<8x32xf32> -> tensor<2x8x16xf32>
// CHECK: %[[C3:.*]] = tensor.expand_shape %arg2 {{\[\[}}0], [1, 2]] output_shape [4, 2, 16] : tensor<4x32xf32> into tensor<4x2x16xf32>
// CHECK: %[[R:.*]] = linalg.contract indexing_maps = [#[[A]], #[[B]], #[[C]]] {mlirpipe.packed = "rhs"} ins(%arg0, %[[P]] : tensor<4x8xf32>, tensor<2x8x16xf32>) outs(%[[C3]] : tensor<4x2x16xf32>)
// CHECK: %[[R2:.*]] = tensor.collapse_shape %[[R]] {{\[\[}}0], [1, 2]] : tensor<4x2x16xf32> into tensor<4x32xf32>
// CHECK: return %[[R2]]
// R4-DAG: #[[RA:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d2)>
// R4-DAG: #[[RB:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d3)>
// R4-DAG: #[[RC:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d0, d3)>
// R4-LABEL: func.func @plain
// R4: %[[P:.*]] = linalg.pack %arg1 outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [16] into %{{.*}} : tensor<8x32xf32> -> tensor<2x8x16xf32>
// R4: %[[S:.*]] = linalg.pack %arg0 inner_dims_pos = [0] inner_tiles = [4] into %{{.*}} : tensor<4x8xf32> -> tensor<1x8x4xf32>
// R4: %[[C4:.*]] = tensor.expand_shape %arg2 {{\[\[}}0, 1], [2, 3]] output_shape [1, 4, 2, 16] : tensor<4x32xf32> into tensor<1x4x2x16xf32>
// R4: %[[R:.*]] = linalg.contract indexing_maps = [#[[RA]], #[[RB]], #[[RC]]] {mlirpipe.packed = "both"} ins(%[[S]], %[[P]] : tensor<1x8x4xf32>, tensor<2x8x16xf32>) outs(%[[C4]] : tensor<1x4x2x16xf32>)
// R4: tensor.collapse_shape %[[R]] {{\[\[}}0, 1], [2, 3]] : tensor<1x4x2x16xf32> into tensor<4x32xf32>
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
// CHECK: linalg.contract indexing_maps = [#[[AT]], {{.*}}] {mlirpipe.packed = "rhs"} ins(%arg0, %[[P]] : tensor<8x4xf32>, tensor<2x8x16xf32>)
// CHECK-NOT: linalg.matmul
// A stored (k, m) too: its columns are strips' rows.
// R4-LABEL: func.func @transposed
// R4: linalg.pack %arg1 inner_dims_pos = [0] inner_tiles = [16] into %{{.*}} : tensor<32x8xf32> -> tensor<2x8x16xf32>
// R4: linalg.pack %arg0 outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [4] into %{{.*}} : tensor<8x4xf32> -> tensor<1x8x4xf32>
// R4: linalg.contract {{.*}} {mlirpipe.packed = "both"}
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

// -----

// With rows=4, an M that is not a multiple of 4: its first 4 rows in a strip of 4, the 2
// left a strip of 2, each contract writing its rows of C in place.
// CHECK-LABEL: func.func @rows_split
// R4-LABEL: func.func @rows_split
// R4: %[[P:.*]] = linalg.pack %arg1 outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [16]
// R4: %[[A4:.*]] = tensor.extract_slice %arg0[0, 0] [4, 8] [1, 1] : tensor<6x8xf32> to tensor<4x8xf32>
// R4: %[[C4:.*]] = tensor.extract_slice %arg2[0, 0] [4, 32] [1, 1] : tensor<6x32xf32> to tensor<4x32xf32>
// R4: %[[S4:.*]] = linalg.pack %[[A4]] inner_dims_pos = [0] inner_tiles = [4] into %{{.*}} : tensor<4x8xf32> -> tensor<1x8x4xf32>
// R4: %[[V4:.*]] = tensor.expand_shape %[[C4]]
// R4: %[[R4:.*]] = linalg.contract {{.*}} {mlirpipe.packed = "both"} ins(%[[S4]], %[[P]] : tensor<1x8x4xf32>, tensor<2x8x16xf32>) outs(%[[V4]] : tensor<1x4x2x16xf32>)
// R4: %[[D4:.*]] = tensor.collapse_shape %[[R4]]
// R4: %[[I4:.*]] = tensor.insert_slice %[[D4]] into %arg2[0, 0] [4, 32] [1, 1] : tensor<4x32xf32> into tensor<6x32xf32>
// R4: %[[A2:.*]] = tensor.extract_slice %arg0[4, 0] [2, 8] [1, 1] : tensor<6x8xf32> to tensor<2x8xf32>
// R4: %[[C2:.*]] = tensor.extract_slice %[[I4]][4, 0] [2, 32] [1, 1] : tensor<6x32xf32> to tensor<2x32xf32>
// R4: %[[S2:.*]] = linalg.pack %[[A2]] inner_dims_pos = [0] inner_tiles = [2] into %{{.*}} : tensor<2x8xf32> -> tensor<1x8x2xf32>
// R4: %[[V2:.*]] = tensor.expand_shape %[[C2]]
// R4: %[[R2:.*]] = linalg.contract {{.*}} {mlirpipe.packed = "both"} ins(%[[S2]], %[[P]] : tensor<1x8x2xf32>, tensor<2x8x16xf32>) outs(%[[V2]] : tensor<1x2x2x16xf32>)
// R4: %[[D2:.*]] = tensor.collapse_shape %[[R2]]
// R4: %[[I2:.*]] = tensor.insert_slice %[[D2]] into %[[I4]][4, 0] [2, 32] [1, 1] : tensor<2x32xf32> into tensor<6x32xf32>
// R4: return %[[I2]]
func.func @rows_split(%a: tensor<6x8xf32>, %b: tensor<8x32xf32>, %c: tensor<6x32xf32>) -> tensor<6x32xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<6x8xf32>, tensor<8x32xf32>) outs(%c : tensor<6x32xf32>) -> tensor<6x32xf32>
  return %r : tensor<6x32xf32>
}

// -----

// C filled with zeros (A stored (k, m)): each part fills its own rows, of the fill's tensor.empty;
// the fill of the whole C is gone.
// CHECK-LABEL: func.func @rows_split_filled
// R4-LABEL: func.func @rows_split_filled
// R4: %[[E:.*]] = tensor.empty() : tensor<6x32xf32>
// R4-NOT: linalg.fill {{.*}} -> tensor<6x32xf32>
// R4: tensor.extract_slice %arg0[0, 0] [8, 4] [1, 1] : tensor<8x6xf32> to tensor<8x4xf32>
// R4: %[[C4:.*]] = tensor.extract_slice %[[E]][0, 0] [4, 32] [1, 1]
// R4: linalg.fill ins(%{{.*}} : f32) outs(%[[C4]] : tensor<4x32xf32>)
// R4: %[[I4:.*]] = tensor.insert_slice %{{.*}} into %[[E]][0, 0] [4, 32] [1, 1]
// R4: tensor.extract_slice %arg0[0, 4] [8, 2] [1, 1] : tensor<8x6xf32> to tensor<8x2xf32>
// R4: %[[C2:.*]] = tensor.extract_slice %[[I4]][4, 0] [2, 32] [1, 1]
// R4: linalg.fill ins(%{{.*}} : f32) outs(%[[C2]] : tensor<2x32xf32>)
// R4-NOT: linalg.fill {{.*}} -> tensor<6x32xf32>
// R4: return
func.func @rows_split_filled(%a: tensor<8x6xf32>, %b: tensor<8x32xf32>) -> tensor<6x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<6x32xf32>) -> tensor<6x32xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : tensor<8x6xf32>, tensor<8x32xf32>) outs(%c : tensor<6x32xf32>) -> tensor<6x32xf32>
  return %r : tensor<6x32xf32>
}

// -----

// With rows=4, an M below 4 keeps A as it is (B is packed).
// CHECK-LABEL: func.func @rows_left
// R4-LABEL: func.func @rows_left
// R4-NOT: inner_tiles = [3]
// R4: linalg.pack %arg1 outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [16]
// R4-NOT: inner_tiles = [3]
// R4: linalg.contract {{.*}} {mlirpipe.packed = "rhs"} ins(%arg0,
func.func @rows_left(%a: tensor<3x8xf32>, %b: tensor<8x32xf32>, %c: tensor<3x32xf32>) -> tensor<3x32xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<3x8xf32>, tensor<8x32xf32>) outs(%c : tensor<3x32xf32>) -> tensor<3x32xf32>
  return %r : tensor<3x32xf32>
}

// -----

// A fill read as A too (CSE merges equal fills): it stays, each part reads and slices it.
// CHECK-LABEL: func.func @fill_read_twice
// R4-LABEL: func.func @fill_read_twice
// R4: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<7x16xf32>) -> tensor<7x16xf32>
// R4: tensor.extract_slice %[[F]][0, 0] [4, 16]
// R4: tensor.extract_slice %[[F]][0, 0] [4, 16]
// R4: tensor.extract_slice %[[F]][4, 0] [3, 16]
// R4: return
func.func @fill_read_twice(%b: tensor<16x16xf32>) -> tensor<7x16xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<7x16xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<7x16xf32>) -> tensor<7x16xf32>
  %r = linalg.matmul ins(%f, %b : tensor<7x16xf32>, tensor<16x16xf32>) outs(%f : tensor<7x16xf32>) -> tensor<7x16xf32>
  return %r : tensor<7x16xf32>
}

// -----

// A constant whose resource name is quoted (not a bare identifier) is read as well.
// CHECK-LABEL: func.func @quoted_name
// CHECK-NOT: linalg.pack
// CHECK: arith.constant dense_resource<[[Q:mlirpipe_panels_16[_0-9]*]]> : tensor<1x2x16xf32>
// CHECK-NOT: linalg.pack
// CHECK: [[Q]]: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
func.func @quoted_name(%a: tensor<1x2xf32>) -> tensor<1x16xf32> {
  %v = arith.constant dense_resource<"weight 0"> : tensor<2x16xf32>
  %c = tensor.empty() : tensor<1x16xf32>
  %s = linalg.matmul ins(%a, %v : tensor<1x2xf32>, tensor<2x16xf32>) outs(%c : tensor<1x16xf32>) -> tensor<1x16xf32>
  return %s : tensor<1x16xf32>
}

{-#
  dialect_resources: {
    builtin: {
      "weight 0": "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
    }
  }
#-}

// -----

// B a constant (a weight), or a transpose of one (a linear layer's): its panels are a new
// constant, computed once; no linalg.pack is left to copy B at every call.
// CHECK-LABEL: func.func @constant_weights
// CHECK-NOT: linalg.pack
// CHECK: %[[W:.*]] = arith.constant dense_resource<[[PW:mlirpipe_panels_16[_0-9]*]]> : tensor<2x2x16xf32>
// CHECK: linalg.contract {{.*}} {mlirpipe.packed = "rhs"} ins(%arg0, %[[W]] : tensor<1x2xf32>, tensor<2x2x16xf32>)
// CHECK: %[[V:.*]] = arith.constant dense_resource<[[PV:mlirpipe_panels_16[_0-9]*]]> : tensor<2x2x16xf32>
// CHECK: linalg.contract {{.*}} {mlirpipe.packed = "rhs"} ins(%arg0, %[[V]] : tensor<1x2xf32>, tensor<2x2x16xf32>)
// CHECK-NOT: linalg.pack
// CHECK: [[PW]]: "0x040000000000000000000040000080400000C0400000004100002041000040410000604100008041000090410000A0410000B0410000C0410000D0410000E0410000F0410000803F000040400000A0400000E0400000104100003041000050410000704100008841000098410000A8410000B8410000C8410000D8410000E8410000F841000000420000084200001042000018420000204200002842000030420000384200004042000048420000504200005842000060420000684200007042000078420000044200000C420000144200001C420000244200002C420000344200003C420000444200004C420000544200005C420000644200006C420000744200007C42"
// CHECK-NEXT: [[PV]]: "0x040000000000803F000000400000803F000000400000803F000000400000803F000000400000803F000000400000803F000000400000803F000000400000803F000000400000A0400000C0400000A0400000C0400000A0400000C0400000A0400000C0400000A0400000C0400000A0400000C0400000A0400000C0400000A0400000C040000040400000804000004040000080400000404000008040000040400000804000004040000080400000404000008040000040400000804000004040000080400000E040000000410000E040000000410000E040000000410000E040000000410000E040000000410000E040000000410000E040000000410000E04000000041"
func.func @constant_weights(%a: tensor<1x2xf32>) -> (tensor<1x32xf32>, tensor<1x32xf32>) {
  %w = arith.constant dense_resource<weight> : tensor<32x2xf32>
  %v = arith.constant dense<[[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 3.0, 4.0, 3.0, 4.0, 3.0, 4.0, 3.0, 4.0, 3.0, 4.0, 3.0, 4.0, 3.0, 4.0, 3.0, 4.0], [5.0, 6.0, 5.0, 6.0, 5.0, 6.0, 5.0, 6.0, 5.0, 6.0, 5.0, 6.0, 5.0, 6.0, 5.0, 6.0, 7.0, 8.0, 7.0, 8.0, 7.0, 8.0, 7.0, 8.0, 7.0, 8.0, 7.0, 8.0, 7.0, 8.0, 7.0, 8.0]]> : tensor<2x32xf32>
  %e = tensor.empty() : tensor<2x32xf32>
  %t = linalg.transpose ins(%w : tensor<32x2xf32>) outs(%e : tensor<2x32xf32>) permutation = [1, 0]
  %c = tensor.empty() : tensor<1x32xf32>
  %r = linalg.matmul ins(%a, %t : tensor<1x2xf32>, tensor<2x32xf32>) outs(%c : tensor<1x32xf32>) -> tensor<1x32xf32>
  %s = linalg.matmul ins(%a, %v : tensor<1x2xf32>, tensor<2x32xf32>) outs(%c : tensor<1x32xf32>) -> tensor<1x32xf32>
  return %r, %s : tensor<1x32xf32>, tensor<1x32xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weight: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B8410000C0410000C8410000D0410000D8410000E0410000E8410000F0410000F84100000042000004420000084200000C4200001042000014420000184200001C4200002042000024420000284200002C4200003042000034420000384200003C4200004042000044420000484200004C4200005042000054420000584200005C4200006042000064420000684200006C4200007042000074420000784200007C42"
    }
  }
#-}
