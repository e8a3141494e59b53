// mlirpipe-scalarize-extracted-loads: a 1-D vector.load, or an in-bounds unmasked
// vector.transfer_read of a memref, used only by vector.extracts of one element, becomes a
// memref.load of each element extracted (once each). Other reads stay vectors.
// RUN: mlirpipe-opt %s --pass-pipeline 'builtin.module(mlirpipe-scalarize-extracted-loads)' | filecheck %s

// CHECK-LABEL: func.func @reads
// CHECK-SAME: (%[[M:.*]]: memref<4x6xf32>, %[[I:.*]]: index, %[[J:.*]]: index, %[[MASK:.*]]: vector<6xi1>)
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[J2:.*]] = arith.addi %[[J]], %[[C2]] : index
// CHECK: %[[X2:.*]] = memref.load %[[M]][%[[I]], %[[J2]]] : memref<4x6xf32>
// CHECK: %[[X0:.*]] = memref.load %[[M]][%[[I]], %[[J]]] : memref<4x6xf32>
// CHECK-NOT: vector.load
// CHECK: %[[C5:.*]] = arith.constant 5 : index
// CHECK: %[[J5:.*]] = arith.addi %[[J]], %[[C5]] : index
// CHECK: %[[Y5:.*]] = memref.load %[[M]][%[[I]], %[[J5]]] : memref<4x6xf32>
// CHECK: %[[WHOLE:.*]] = vector.load %[[M]][%[[I]], %[[J]]] : memref<4x6xf32>, vector<6xf32>
// CHECK: %[[MASKED:.*]] = vector.transfer_read %[[M]][%[[I]], %[[J]]], %{{.*}}, %[[MASK]]
// CHECK: %[[M2:.*]] = vector.extract %[[MASKED]][1]
// CHECK: %[[OUT:.*]] = vector.transfer_read %[[M]][%[[I]], %[[J]]], %{{.*}} : memref<4x6xf32>, vector<6xf32>
// CHECK: %[[O2:.*]] = vector.extract %[[OUT]][1]
// CHECK: %[[COLUMN:.*]] = vector.transfer_read %[[M]][%[[I]], %[[J]]], %{{.*}} {in_bounds = [true], permutation_map = #{{.*}}}
// CHECK: %[[K2:.*]] = vector.extract %[[COLUMN]][1]
// CHECK: return %[[X2]], %[[X0]], %[[X2]], %[[Y5]], %[[WHOLE]], %[[M2]], %[[O2]], %[[K2]]
func.func @reads(%m: memref<4x6xf32>, %i: index, %j: index, %mask: vector<6xi1>)
    -> (f32, f32, f32, f32, vector<6xf32>, f32, f32, f32) {
  %pad = arith.constant 0.0 : f32
  // Two elements extracted (one twice): two scalar loads.
  %v = vector.load %m[%i, %j] : memref<4x6xf32>, vector<6xf32>
  %a = vector.extract %v[2] : f32 from vector<6xf32>
  %b = vector.extract %v[0] : f32 from vector<6xf32>
  %c = vector.extract %v[2] : f32 from vector<6xf32>
  // An in-bounds transfer_read: the same.
  %t = vector.transfer_read %m[%i, %j], %pad {in_bounds = [true]} : memref<4x6xf32>, vector<6xf32>
  %d = vector.extract %t[5] : f32 from vector<6xf32>
  // Used whole: stays.
  %w = vector.load %m[%i, %j] : memref<4x6xf32>, vector<6xf32>
  // Masked, possibly out of bounds, or a column: stay.
  %mk = vector.transfer_read %m[%i, %j], %pad, %mask {in_bounds = [true]} : memref<4x6xf32>, vector<6xf32>
  %e = vector.extract %mk[1] : f32 from vector<6xf32>
  %ob = vector.transfer_read %m[%i, %j], %pad : memref<4x6xf32>, vector<6xf32>
  %f = vector.extract %ob[1] : f32 from vector<6xf32>
  %col = vector.transfer_read %m[%i, %j], %pad {in_bounds = [true], permutation_map = affine_map<(d0, d1) -> (d0)>} : memref<4x6xf32>, vector<4xf32>
  %g = vector.extract %col[1] : f32 from vector<4xf32>
  return %a, %b, %c, %d, %w, %e, %f, %g : f32, f32, f32, f32, vector<6xf32>, f32, f32, f32
}

// A poison position (-1), or a memref of vectors: the reads stay.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: memref.load
// CHECK: vector.load %arg0
// CHECK: vector.load %arg1
// CHECK-NOT: memref.load
func.func @kept(%m: memref<4x6xf32>, %v: memref<4xvector<6xf32>>, %i: index, %j: index) -> (f32, f32) {
  %a = vector.load %m[%i, %j] : memref<4x6xf32>, vector<6xf32>
  %x = vector.extract %a[-1] : f32 from vector<6xf32>
  %b = vector.load %v[%i] : memref<4xvector<6xf32>>, vector<6xf32>
  %y = vector.extract %b[2] : f32 from vector<6xf32>
  return %x, %y : f32, f32
}
