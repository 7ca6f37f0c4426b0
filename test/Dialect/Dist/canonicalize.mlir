// RUN: dist-opt %s -canonicalize -split-input-file | FileCheck %s

#mesh = #dist.mesh<shape = [2, 4]>
// A reshard to its own type is its operand.
// CHECK-LABEL: func @reshard_to_itself
// CHECK-NEXT: return %arg0
func.func @reshard_to_itself(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> {
  %r = dist.reshard %x : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
  return %r : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// Two reshards are one, from the first operand.
// CHECK-LABEL: func @compose
// CHECK-NEXT: %[[R:.*]] = dist.reshard %arg0 : tensor<4x8xf32, #dist.tensor<#{{.*}}, [0, -1]>> -> tensor<8x2xf32, #dist.tensor<#{{.*}}, [-1, 1]>>
// CHECK-NEXT: return %[[R]]
func.func @compose(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<8x2xf32, #dist.tensor<#mesh, [-1, 1]>> {
  %a = dist.reshard %x : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  %b = dist.reshard %a : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<8x2xf32, #dist.tensor<#mesh, [-1, 1]>>
  return %b : tensor<8x2xf32, #dist.tensor<#mesh, [-1, 1]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// There and back again is nothing.
// CHECK-LABEL: func @round_trip
// CHECK-NEXT: return %arg0
func.func @round_trip(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> {
  %a = dist.reshard %x : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x2xf32, #dist.tensor<#mesh, [-1, 1]>>
  %b = dist.reshard %a : tensor<8x2xf32, #dist.tensor<#mesh, [-1, 1]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
  return %b : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// The shard of a gather over the same axes is the shard; the gather is
// kept (collectives are never deleted: every process issues them).
// CHECK-LABEL: func @slice_of_gather
// CHECK-NEXT: dist.all_gather
// CHECK-NEXT: return %arg0
func.func @slice_of_gather(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> {
  %a = dist.all_gather %x on #mesh axes = [0] : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  %b = dist.all_slice %a on #mesh axes = [0] : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
  return %b : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// A slice along another dim than the gather's is kept.
// CHECK-LABEL: func @slice_of_gather_other_dim
// CHECK-NEXT: dist.all_gather
// CHECK-NEXT: dist.all_slice
func.func @slice_of_gather_other_dim(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>> {
  %a = dist.all_gather %x on #mesh axes = [0] : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  %b = dist.all_slice %a on #mesh axes = [0] : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>
  return %b : tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>
}
