// RUN: dist-opt %s --dist-auto-parallel -split-input-file | FileCheck %s
// A completed program is the serial program: the gradient of a lookup over
// data-parallel ids sums every replica's rows. Completion leaves the
// logical gradient partial over dp and completes it with a sum; nothing
// averages it (Paddle's 1/size scale is for programs that declare the
// gradient whole, rules.mlir).

#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "tp"]>
// CHECK-LABEL: func.func @row_split
// CHECK: %[[C:.*]] = dist.process_coord #mesh axis = 1
// CHECK: %[[START:.*]] = arith.muli %[[C]]
// CHECK: %[[G:.*]] = dist.c_identity %arg2 on #mesh axes = [1]
// CHECK: %[[P:.*]] = dist.c_embedding_grad %arg0, %arg1, %[[G]] start = %[[START]] : {{.*}} -> tensor<8x16xf32, #dist.tensor<#mesh, [1, -1], partial = [0 : sum]>>
// CHECK-NEXT: %[[S:.*]] = dist.allreduce %[[P]] on #mesh axes = [0] reduce = sum : {{.*}} -> tensor<8x16xf32, #dist.tensor<#mesh, [1, -1]>>
// CHECK-NOT: dist.scale
// CHECK-NEXT: return %[[S]]
func.func @row_split(%ids: tensor<2x4xi64, #dist.tensor<#mesh, [0, -1]>>,
    %w: tensor<8x16xf32, #dist.tensor<#mesh, [1, -1]>> {dist.param = "w"},
    %g: tensor<2x4x16xf32, #dist.tensor<#mesh, [0, -1, -1]>>)
    -> (tensor<8x16xf32, #dist.tensor<#mesh, [1, -1]>> {dist.grad = "w"}) attributes {dist.complete} {
  %dw = dist.embedding_grad %ids, %w, %g : tensor<2x4xi64, #dist.tensor<#mesh, [0, -1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [1, -1]>>, tensor<2x4x16xf32, #dist.tensor<#mesh, [0, -1, -1]>> -> tensor<8x16xf32>
  %r = dist.constraint %dw : tensor<8x16xf32> -> tensor<8x16xf32, #dist.tensor<#mesh, [1, -1]>>
  return %r : tensor<8x16xf32, #dist.tensor<#mesh, [1, -1]>>
}

// -----

// A replicated table (data parallelism alone): the lookup stays logical and
// its rows are summed over dp.
#mesh = #dist.mesh<shape = [2], names = ["dp"]>
// CHECK-LABEL: func.func @replicated_table
// CHECK-NEXT: %[[P:.*]] = dist.embedding_grad %arg0, %arg1, %arg2 : {{.*}} -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
// CHECK-NEXT: %[[S:.*]] = dist.allreduce %[[P]] on #mesh axes = [0] reduce = sum : {{.*}} -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
// CHECK-NEXT: return %[[S]]
func.func @replicated_table(%ids: tensor<2x4xi64, #dist.tensor<#mesh, [0, -1]>>,
    %w: tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>> {dist.param = "w"},
    %g: tensor<2x4x16xf32, #dist.tensor<#mesh, [0, -1, -1]>>)
    -> (tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>> {dist.grad = "w"}) attributes {dist.complete} {
  %dw = dist.embedding_grad %ids, %w, %g : tensor<2x4xi64, #dist.tensor<#mesh, [0, -1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<2x4x16xf32, #dist.tensor<#mesh, [0, -1, -1]>> -> tensor<8x16xf32>
  %r = dist.constraint %dw : tensor<8x16xf32> -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
  return %r : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
}

// -----

// The forward lookup of a tp-split table is replicated: completion leaves it
// unencoded, and the check of values that differ by process knows that the
// processes splitting the rows agree on it (the pass adds their allreduce).
#mesh = #dist.mesh<shape = [2], names = ["tp"]>
#map = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @lookup_then_add
// CHECK: dist.c_embedding
// CHECK-NEXT: dist.allreduce {{.*}} on #mesh axes = [0] reduce = sum
// CHECK: linalg.generic
func.func @lookup_then_add(%ids: tensor<4xi64, #dist.tensor<#mesh, [-1]>>,
    %w: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>> {dist.param = "w"},
    %b: tensor<16xf32, #dist.tensor<#mesh, [-1]>> {dist.param = "b"})
    -> tensor<4x16xf32, #dist.tensor<#mesh, [-1, -1]>> attributes {dist.complete} {
  %e = dist.embedding %ids, %w : tensor<4xi64, #dist.tensor<#mesh, [-1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4x16xf32>
  %o = tensor.empty() : tensor<4x16xf32>
  %s = linalg.generic {indexing_maps = [#map, #col, #map], iterator_types = ["parallel", "parallel"]}
      ins(%e, %b : tensor<4x16xf32>, tensor<16xf32, #dist.tensor<#mesh, [-1]>>) outs(%o : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %r = dist.constraint %s : tensor<4x16xf32> -> tensor<4x16xf32, #dist.tensor<#mesh, [-1, -1]>>
  return %r : tensor<4x16xf32, #dist.tensor<#mesh, [-1, -1]>>
}

// -----

// A reshard from the unencoded (replicated) lookup to a sequence block:
// completion takes the operand as replicated on the signature's mesh and
// the result as split over tp; the pipeline then makes the lookup's
// allreduce and the block's slice one reduce-scatter.
#mesh = #dist.mesh<shape = [2], names = ["tp"]>
// CHECK-LABEL: func.func @lookup_then_block
// CHECK: %[[P:.*]] = dist.c_embedding %arg0, %arg1 start = %{{.*}} : {{.*}} -> tensor<4x8x16xf32, #dist.tensor<#mesh, [-1, -1, -1], partial = [0 : sum]>>
// CHECK-NEXT: %[[S:.*]] = dist.reduce_scatter %[[P]] on #mesh axes = [0] reduce = sum : {{.*}} -> tensor<4x4x16xf32, #dist.tensor<#mesh, [-1, 0, -1]>>
// CHECK-NOT: dist.allreduce
// CHECK-NOT: dist.all_slice
// CHECK: return %[[S]]
func.func @lookup_then_block(%ids: tensor<4x8xi64, #dist.tensor<#mesh, [-1, -1]>>,
    %w: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>> {dist.param = "w"})
    -> tensor<4x4x16xf32, #dist.tensor<#mesh, [-1, 0, -1]>> attributes {dist.complete} {
  %e = dist.embedding %ids, %w : tensor<4x8xi64, #dist.tensor<#mesh, [-1, -1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4x8x16xf32>
  %b = dist.reshard %e : tensor<4x8x16xf32> -> tensor<4x4x16xf32>
  %r = dist.constraint %b : tensor<4x4x16xf32> -> tensor<4x4x16xf32, #dist.tensor<#mesh, [-1, 0, -1]>>
  return %r : tensor<4x4x16xf32, #dist.tensor<#mesh, [-1, 0, -1]>>
}
