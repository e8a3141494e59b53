// Tensors of i1 between linalg.generics through refbackend-vectorized (as with AVX2), as torch's
// softmax inside an attention (_safe_softmax) makes them: x == -inf element by element, all()
// of each row, a select of 0 for a row that is all -inf. After widen-bool-tensors each is a
// tensor of i8 (0 or 1): extended before the producer's yield, truncated at the start of a
// reader's body; all() combines the bytes with arith.andi (its init a fill of 1). After
// tile-and-vectorize no linalg.generic is left: the compare writes vectors of bytes, all() is
// split into lanes, the select reads a byte a row. A tensor of i1 a function returns stays i1.
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after widen-bool-tensors | filecheck %s --check-prefix=WIDE
// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --split-input-file --pipeline refbackend-vectorized --stop-after tile-and-vectorize | filecheck %s --check-prefix=VEC

// WIDE-LABEL: func.func @safe_softmax_mask
// WIDE: %[[E:.*]] = tensor.empty() : tensor<4x100xi8>
// WIDE: %[[NEG:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<4x100xi8>)
// WIDE-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: i8):
// WIDE-NEXT: %[[C:.*]] = arith.cmpf oeq, %[[X]], %{{.*}} : f32
// WIDE-NEXT: %[[B:.*]] = arith.extui %[[C]] : i1 to i8
// WIDE-NEXT: linalg.yield %[[B]] : i8
// WIDE: %[[ONE:.*]] = arith.extui %true : i1 to i8
// WIDE: %[[INIT:.*]] = linalg.fill ins(%[[ONE]] : i8) outs(%{{.*}} : tensor<4x1xi8>)
// WIDE: %[[ALL:.*]] = linalg.generic {{.*}} ins(%[[NEG]] : tensor<4x100xi8>) outs(%[[INIT]] : tensor<4x1xi8>)
// WIDE-NEXT: ^bb0(%[[IN:.*]]: i8, %[[ACC:.*]]: i8):
// WIDE-NEXT: %[[BIT:.*]] = arith.trunci %[[IN]] : i8 to i1
// WIDE-NEXT: %[[BYTE:.*]] = arith.extui %[[BIT]] : i1 to i8
// WIDE-NEXT: %[[AND:.*]] = arith.andi %[[BYTE]], %[[ACC]] : i8
// WIDE-NEXT: linalg.yield %[[AND]] : i8
// WIDE: linalg.generic {{.*}} ins(%[[ALL]], %{{.*}} : tensor<4x1xi8>, tensor<4x100xf32>)
// WIDE-NEXT: ^bb0(%[[R:.*]]: i8, %[[Y:.*]]: f32, %{{.*}}: f32):
// WIDE-NEXT: %[[RB:.*]] = arith.trunci %[[R]] : i8 to i1
// WIDE-NEXT: arith.select %[[RB]], %{{.*}}, %[[Y]] : f32
// VEC-LABEL: func.func @safe_softmax_mask
// VEC-NOT: linalg.generic
// VEC: arith.cmpf oeq, %{{.*}} : vector<64xf32>
// VEC: arith.extui %{{.*}} : vector<64xi1> to vector<64xi8>
// VEC: arith.andi %{{.*}} : vector<36xi8>
// VEC: vector.multi_reduction <and>, %{{.*}} [1] : vector<1x64xi8> to vector<1xi8>
// VEC: arith.select %{{.*}} : vector<64xi1>, vector<64xf32>
// VEC-NOT: linalg.generic

#id2 = affine_map<(i, j) -> (i, j)>
#kept = affine_map<(i, j) -> (i, 0)>
func.func @safe_softmax_mask(%x: tensor<4x100xf32>, %y: tensor<4x100xf32>) -> tensor<4x100xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %true = arith.constant true
  %eb = tensor.empty() : tensor<4x100xi1>
  %neg = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x100xf32>) outs(%eb : tensor<4x100xi1>) {
  ^bb0(%a: f32, %o: i1):
    %c = arith.cmpf oeq, %a, %ninf : f32
    linalg.yield %c : i1
  } -> tensor<4x100xi1>
  %er = tensor.empty() : tensor<4x1xi1>
  %fr = linalg.fill ins(%true : i1) outs(%er : tensor<4x1xi1>) -> tensor<4x1xi1>
  %all = linalg.generic {indexing_maps = [#id2, #kept], iterator_types = ["parallel", "reduction"]}
      ins(%neg : tensor<4x100xi1>) outs(%fr : tensor<4x1xi1>) {
  ^bb0(%b: i1, %acc: i1):
    %n = arith.andi %b, %acc : i1
    linalg.yield %n : i1
  } -> tensor<4x1xi1>
  %e = tensor.empty() : tensor<4x100xf32>
  %r = linalg.generic {indexing_maps = [#kept, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%all, %y : tensor<4x1xi1>, tensor<4x100xf32>) outs(%e : tensor<4x100xf32>) {
  ^bb0(%m: i1, %v: f32, %o: f32):
    %s = arith.select %m, %zero, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x100xf32>
  return %r : tensor<4x100xf32>
}

// -----

// WIDE-LABEL: func.func @returned
// WIDE: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x16xi1>)
// WIDE-NOT: i8
// VEC-LABEL: func.func @returned
// VEC: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x16xi1>)

#id2 = affine_map<(i, j) -> (i, j)>
func.func @returned(%x: tensor<4x16xf32>, %y: tensor<4x16xf32>) -> tensor<4x16xi1> {
  %e = tensor.empty() : tensor<4x16xi1>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xi1>) {
  ^bb0(%a: f32, %b: f32, %o: i1):
    %c = arith.cmpf ogt, %a, %b : f32
    linalg.yield %c : i1
  } -> tensor<4x16xi1>
  return %r : tensor<4x16xi1>
}
