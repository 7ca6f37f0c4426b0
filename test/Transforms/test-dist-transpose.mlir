// RUN: dist-opt --allow-unregistered-dialect --test-dist-transpose %s --split-input-file | FileCheck %s
// The transpose of each redistribution (Redistribution.h): the cotangent of
// the result, held as its type says, becomes the cotangent of the operand.

#mesh = #dist.mesh<shape = [2, 4]>
// CHECK-LABEL: func @all_gather_of_partial_sum
// CHECK-NEXT:  %[[Y:.*]] = dist.all_gather %arg0 on #mesh axes = [1]
// CHECK-NEXT:  %[[T:.*]] = dist.reduce_scatter %arg1 on #mesh axes = [1] reduce = sum
// CHECK-SAME:    -> tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>
// CHECK-NEXT:  return %[[Y]], %[[T]]
func.func @all_gather_of_partial_sum(
    %x: tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>,
    %g: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>)
    -> (tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
        tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>) {
  %y = dist.all_gather %x on #mesh axes = [1]
      : tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>
      -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
  %t = "test.transpose"(%y, %g)
      : (tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
         tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>)
      -> tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>
  return %y, %t : tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
                  tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>
}

// -----

// A replicated cotangent of an all-gather: each process keeps its block.
#mesh = #dist.mesh<shape = [2, 4]>
// CHECK-LABEL: func @all_gather_of_replicated
// CHECK:       dist.all_gather
// CHECK-NEXT:  %[[T:.*]] = dist.all_slice %arg1 on #mesh axes = [1]
// CHECK-SAME:    -> tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>
// CHECK-NEXT:  return
func.func @all_gather_of_replicated(
    %x: tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>,
    %g: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>)
    -> tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>> {
  %y = dist.all_gather %x on #mesh axes = [1]
      : tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>
      -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
  %t = "test.transpose"(%y, %g)
      : (tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
         tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>)
      -> tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>
  return %t : tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// CHECK-LABEL: func @reduce_scatter
// CHECK:       dist.reduce_scatter
// CHECK-NEXT:  %[[T:.*]] = dist.all_gather %arg1 on #mesh axes = [1]
// CHECK-SAME:    -> tensor<16x4xf32, #dist.tensor<#mesh, [-1, 0]>>
// CHECK-NEXT:  return
func.func @reduce_scatter(
    %x: tensor<16x4xf32, #dist.tensor<#mesh, [-1, 0], partial = [1 : sum]>>,
    %g: tensor<4x4xf32, #dist.tensor<#mesh, [1, 0]>>)
    -> tensor<16x4xf32, #dist.tensor<#mesh, [-1, 0]>> {
  %y = dist.reduce_scatter %x on #mesh axes = [1] reduce = sum
      : tensor<16x4xf32, #dist.tensor<#mesh, [-1, 0], partial = [1 : sum]>>
      -> tensor<4x4xf32, #dist.tensor<#mesh, [1, 0]>>
  %t = "test.transpose"(%y, %g)
      : (tensor<4x4xf32, #dist.tensor<#mesh, [1, 0]>>,
         tensor<4x4xf32, #dist.tensor<#mesh, [1, 0]>>)
      -> tensor<16x4xf32, #dist.tensor<#mesh, [-1, 0]>>
  return %t : tensor<16x4xf32, #dist.tensor<#mesh, [-1, 0]>>
}

// -----

// Megatron's g: an allreduce forward, the identity backward; a cotangent
// that is still partial stays so (its reduction is the consumer's to plan).
#mesh = #dist.mesh<shape = [2, 4]>
// CHECK-LABEL: func @allreduce
// CHECK:       dist.allreduce
// CHECK-NEXT:  return %arg1, %arg2
func.func @allreduce(
    %x: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>,
    %g: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
    %h: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>)
    -> (tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
        tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>) {
  %y = dist.allreduce %x on #mesh axes = [1] reduce = sum
      : tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
      -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
  %t = "test.transpose"(%y, %g)
      : (tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
         tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>)
      -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
  %u = "test.transpose"(%y, %h)
      : (tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
         tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>)
      -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
  return %t, %u : tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
                  tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
}

// -----

// An asynchronous all-to-all, seen through its wait: the reverse move.
#mesh = #dist.mesh<shape = [2, 4]>
// CHECK-LABEL: func @all_to_all
// CHECK:       dist.wait
// CHECK-NEXT:  %[[T:.*]] = dist.all_to_all %arg1 on #mesh axes = [1]
// CHECK-SAME:    : tensor<16x4xf32, #dist.tensor<#mesh, [-1, 1]>> -> tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
// CHECK-NEXT:  return
func.func @all_to_all(
    %x: tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>,
    %g: tensor<16x4xf32, #dist.tensor<#mesh, [-1, 1]>>)
    -> tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>> {
  %f = dist.all_to_all %x on #mesh axes = [1] stream = mp
      : tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
      -> !dist.future<tensor<16x4xf32, #dist.tensor<#mesh, [-1, 1]>>>
  %y = dist.wait %f : !dist.future<tensor<16x4xf32, #dist.tensor<#mesh, [-1, 1]>>>
  %t = "test.transpose"(%y, %g)
      : (tensor<16x4xf32, #dist.tensor<#mesh, [-1, 1]>>,
         tensor<16x4xf32, #dist.tensor<#mesh, [-1, 1]>>)
      -> tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
  return %t : tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// CHECK-LABEL: func @all_slice
// CHECK:       dist.all_slice
// CHECK-NEXT:  %[[T:.*]] = dist.all_gather %arg1 on #mesh axes = [0]
// CHECK-SAME:    -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
// CHECK-NEXT:  return
func.func @all_slice(
    %x: tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>,
    %g: tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>)
    -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>> {
  %y = dist.all_slice %x on #mesh axes = [0]
      : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
      -> tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>
  %t = "test.transpose"(%y, %g)
      : (tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>,
         tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>)
      -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
  return %t : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
}

// -----

// A make_partial's cotangent is the operand's; the untouched axis 0 keeps
// the cotangent's split.
#mesh = #dist.mesh<shape = [2, 4]>
// CHECK-LABEL: func @make_partial
// CHECK:       dist.make_partial
// CHECK-NEXT:  return %arg1
func.func @make_partial(
    %x: tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>,
    %g: tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>)
    -> tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>> {
  %y = dist.make_partial %x on #mesh axes = [1] reduce = sum
      : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>
      -> tensor<4x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
  %t = "test.transpose"(%y, %g)
      : (tensor<4x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>,
         tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>)
      -> tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>
  return %t : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>
}

// -----

// A reshard acts on every axis: [0, 1] -> [1, 0] transposes to the reverse
// swap, through a half-gathered tensor (2x16 of 8x16), never the whole one.
#mesh = #dist.mesh<shape = [2, 4]>
// CHECK-LABEL: func @reshard
// CHECK:       dist.reshard
// CHECK-NEXT:  %[[A:.*]] = dist.all_gather %arg1 on #mesh axes = [0] : {{.*}} -> tensor<2x16xf32, #dist.tensor<#mesh, [1, -1]>>
// CHECK-NEXT:  %[[B:.*]] = dist.all_to_all %[[A]] on #mesh axes = [1] : {{.*}} -> tensor<8x4xf32, #dist.tensor<#mesh, [-1, 1]>>
// CHECK-NEXT:  %[[C:.*]] = dist.all_slice %[[B]] on #mesh axes = [0] : {{.*}} -> tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>
// CHECK-NEXT:  return %[[C]]
func.func @reshard(
    %x: tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>,
    %g: tensor<2x8xf32, #dist.tensor<#mesh, [1, 0]>>)
    -> tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>> {
  %y = dist.reshard %x
      : tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>
      -> tensor<2x8xf32, #dist.tensor<#mesh, [1, 0]>>
  %t = "test.transpose"(%y, %g)
      : (tensor<2x8xf32, #dist.tensor<#mesh, [1, 0]>>,
         tensor<2x8xf32, #dist.tensor<#mesh, [1, 0]>>)
      -> tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>
  return %t : tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>
}
