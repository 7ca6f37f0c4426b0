// RUN: dist-opt %s --dist-lower-reshard=remarks=true -split-input-file -verify-diagnostics | FileCheck %s
// The plans --dist-lower-reshard picks: one op per step, the bytes through
// each process's link, and never the whole tensor where a shard will do.

#mesh = #dist.mesh<shape = [2, 4]>
// Partial to split on one axis: one reduce-scatter, (p-1)/p of the operand
// (3/4 of 512 bytes): the lower bound.
// CHECK-LABEL: func @partial_to_split
// CHECK-NEXT: %[[R:.*]] = dist.reduce_scatter %arg0 on #{{.*}} axes = [1] reduce = sum : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [1 : sum]>> -> tensor<2x16xf32, #dist.tensor<#{{.*}}, [1, -1]>>
// CHECK-NEXT: return %[[R]]
func.func @partial_to_split(%a: tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>) -> tensor<2x16xf32, #dist.tensor<#mesh, [1, -1]>> {
  // expected-remark @+1 {{1 step, 384 bytes per process, 10.004 us, at most 512 bytes held: reduce_scatter(axis 1, sum, 384 B) -> [1, -1];}}
  %0 = dist.reshard %a : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>> -> tensor<2x16xf32, #dist.tensor<#mesh, [1, -1]>>
  return %0 : tensor<2x16xf32, #dist.tensor<#mesh, [1, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// A split that moves to another dim: one all-to-all of the shard.
// CHECK-LABEL: func @split_to_split
// CHECK-NEXT: dist.all_to_all %arg0 on #{{.*}} axes = [0] : tensor<4x16xf32, #dist.tensor<#{{.*}}, [0, -1]>> -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
// CHECK-NEXT: return
func.func @split_to_split(%b: tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>> {
  // expected-remark @+1 {{1 step, 128 bytes per process, 10.001 us, at most 256 bytes held: all_to_all(axis 0, 128 B) -> [-1, 0];}}
  %1 = dist.reshard %b : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>
  return %1 : tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// Two axes swap their dims: one axis is gathered (a quarter of the tensor
// per process, never all 512 bytes), the other moves, the first slices.
// CHECK-LABEL: func @swap_axes
// CHECK-NEXT: dist.all_gather %arg0 on #{{.*}} axes = [0] : tensor<4x4xf32, #dist.tensor<#{{.*}}, [0, 1]>> -> tensor<8x4xf32, #dist.tensor<#{{.*}}, [-1, 1]>>
// CHECK-NEXT: dist.all_to_all %{{.*}} on #{{.*}} axes = [1] : tensor<8x4xf32, #dist.tensor<#{{.*}}, [-1, 1]>> -> tensor<2x16xf32, #dist.tensor<#{{.*}}, [1, -1]>>
// CHECK-NEXT: dist.all_slice %{{.*}} on #{{.*}} axes = [0] : tensor<2x16xf32, #dist.tensor<#{{.*}}, [1, -1]>> -> tensor<2x8xf32, #dist.tensor<#{{.*}}, [1, 0]>>
// CHECK-NEXT: return
func.func @swap_axes(%c: tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>) -> tensor<2x8xf32, #dist.tensor<#mesh, [1, 0]>> {
  // expected-remark @+1 {{3 steps, 160 bytes per process, 20.002 us, at most 128 bytes held: all_gather(axis 0, 64 B) -> [-1, 1]; all_to_all(axis 1, 96 B) -> [1, -1]; all_slice(axis 0, 0 B) -> [1, 0];}}
  %2 = dist.reshard %c : tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>> -> tensor<2x8xf32, #dist.tensor<#mesh, [1, 0]>>
  return %2 : tensor<2x8xf32, #dist.tensor<#mesh, [1, 0]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// A split that moves to another axis of the same dim: slice first, so that
// the gather is of a quarter, never the whole tensor (256 bytes at most,
// the operand's size).
// CHECK-LABEL: func @move_axis
// CHECK-NEXT: dist.all_slice %arg0 on #{{.*}} axes = [1]
// CHECK-NEXT: dist.all_gather %{{.*}} on #{{.*}} axes = [0]
// CHECK-NEXT: dist.all_to_all %{{.*}} on #{{.*}} axes = [1]
// CHECK-NEXT: return
func.func @move_axis(%d: tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<2x16xf32, #dist.tensor<#mesh, [1, -1]>> {
  // expected-remark @+1 {{3 steps, 160 bytes per process, 20.002 us, at most 256 bytes held: all_slice(axis 1, 0 B) -> [0, 1]; all_gather(axis 0, 64 B) -> [-1, 1]; all_to_all(axis 1, 96 B) -> [1, -1];}}
  %3 = dist.reshard %d : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<2x16xf32, #dist.tensor<#mesh, [1, -1]>>
  return %3 : tensor<2x16xf32, #dist.tensor<#mesh, [1, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// A partial over one axis and a split over the other, to split over both:
// the reduction happens on the shard (256 bytes), not on a gathered tensor.
// CHECK-LABEL: func @reduce_while_split
// CHECK-NEXT: dist.reduce_scatter %arg0 on #{{.*}} axes = [1] reduce = sum : tensor<4x16xf32, #dist.tensor<#{{.*}}, [0, -1], partial = [1 : sum]>> -> tensor<4x4xf32, #dist.tensor<#{{.*}}, [0, 1]>>
// CHECK-NEXT: return
func.func @reduce_while_split(%e: tensor<4x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>) -> tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>> {
  // expected-remark @+1 {{1 step, 192 bytes per process}}
  %4 = dist.reshard %e : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>> -> tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>
  return %4 : tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// A change of partial kind goes through the complete value, here a shard
// of it (half the bytes of an allreduce); the shard becomes a partial sum
// locally (zeros around it on the other process).
// CHECK-LABEL: func @kinds
// CHECK-NEXT: %[[R:.*]] = dist.reduce_scatter %arg0 on #{{.*}} axes = [0] reduce = max : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : max]>> -> tensor<4x16xf32, #dist.tensor<#{{.*}}, [0, -1]>>
// CHECK-NEXT: dist.make_partial %[[R]] on #{{.*}} axes = [0] reduce = sum : tensor<4x16xf32, #dist.tensor<#{{.*}}, [0, -1]>> -> tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>>
// CHECK-NEXT: return
func.func @kinds(%f: tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : max]>>) -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> {
  // expected-remark @+1 {{2 steps, 256 bytes per process, 10.003 us, at most 512 bytes held: reduce_scatter(axis 0, max, 256 B) -> [0, -1]; make_partial(axis 0, sum, 0 B) -> [-1, -1] partial [0 : sum];}}
  %5 = dist.reshard %f : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : max]>> -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
  return %5 : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// An unencoded side is replicated: partial to unencoded is an allreduce
// whose result is unencoded, unencoded to split a local slice, and an
// explicitly replicated value to an unencoded one only a cast.
// CHECK-LABEL: func @unencoded
// CHECK-NEXT: %[[A:.*]] = dist.allreduce %arg0 on #{{.*}} axes = [1] reduce = sum : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [1 : sum]>> -> tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-NEXT: %[[R:.*]] = tensor.cast %[[A]] : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1]>> to tensor<8x16xf32>
// CHECK-NEXT: %[[X:.*]] = tensor.cast %[[R]] : tensor<8x16xf32> to tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-NEXT: %[[S:.*]] = dist.all_slice %[[X]] on #{{.*}} axes = [0] : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1]>> -> tensor<4x16xf32, #dist.tensor<#{{.*}}, [0, -1]>>
// CHECK-NEXT: %[[C:.*]] = tensor.cast %arg1 : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1]>> to tensor<8x16xf32>
// CHECK-NEXT: return %[[R]], %[[S]], %[[C]]
func.func @unencoded(%p: tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>, %r: tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>) -> (tensor<8x16xf32>, tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<8x16xf32>) {
  // expected-remark @+1 {{1 step}}
  %0 = dist.reshard %p : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>> -> tensor<8x16xf32>
  // expected-remark @+1 {{1 step}}
  %1 = dist.reshard %0 : tensor<8x16xf32> -> tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>
  // expected-remark @+1 {{0 steps}}
  %2 = dist.reshard %r : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<8x16xf32>
  return %0, %1, %2 : tensor<8x16xf32>, tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<8x16xf32>
}

// -----

#mesh = #dist.mesh<shape = [2]>
// Replicated to replicated is a cast, whatever the element type and the
// shapes: index has no size to price, a dynamic dim none to plan with.
// CHECK-LABEL: func @spelled
// CHECK-NEXT: %[[A:.*]] = tensor.cast %arg0 : tensor<8xindex> to tensor<8xindex, #dist.tensor<#{{.*}}, [-1]>>
// CHECK-NEXT: %[[B:.*]] = tensor.cast %arg1 : tensor<?x4xf16, #dist.tensor<#{{.*}}, [-1, -1]>> to tensor<?x4xf16>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @spelled(%x: tensor<8xindex>, %y: tensor<?x4xf16, #dist.tensor<#mesh, [-1, -1]>>) -> (tensor<8xindex, #dist.tensor<#mesh, [-1]>>, tensor<?x4xf16>) {
  // expected-remark @+1 {{0 steps}}
  %a = dist.reshard %x : tensor<8xindex> -> tensor<8xindex, #dist.tensor<#mesh, [-1]>>
  // expected-remark @+1 {{0 steps}}
  %b = dist.reshard %y : tensor<?x4xf16, #dist.tensor<#mesh, [-1, -1]>> -> tensor<?x4xf16>
  return %a, %b : tensor<8xindex, #dist.tensor<#mesh, [-1]>>, tensor<?x4xf16>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// A sum pending over both axes: one allreduce over the whole mesh (2 x 7/8
// of 512 bytes), not one per axis (1280 bytes, two starts).
// CHECK-LABEL: func @partial_over_both
// CHECK-NEXT: %[[R:.*]] = dist.allreduce %arg0 on #{{.*}} axes = [0, 1] reduce = sum : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum, 1 : sum]>> -> tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-NEXT: return %[[R]]
func.func @partial_over_both(%a: tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum, 1 : sum]>>) -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>> {
  // expected-remark @+1 {{1 step, 896 bytes per process, 10.009 us, at most 512 bytes held: allreduce(axes 0, 1, sum, 896 B) -> [-1, -1];}}
  %0 = dist.reshard %a : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum, 1 : sum]>> -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
  return %0 : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
}
