// RUN: dist-opt %s --dist-lower-reshard=forbid-materialization=true -split-input-file -verify-diagnostics
// RUN: not dist-opt %s --dist-lower-reshard=link-bandwidth-gbps=0 -split-input-file 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: error: cost model option link-bandwidth-gbps=0.000000e+00 must be positive and finite

#mesh = #dist.mesh<shape = [2, 4]>
func.func @dynamic(%a: tensor<?x16xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // expected-error @+1 {{'dist.reshard' op cannot be planned: its shapes are not static}}
  %0 = dist.reshard %a : tensor<?x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<?x4xf32, #dist.tensor<#mesh, [0, 1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// Two axes that swap their dims must free one of them first: the plan
// holds twice the shard, which forbid-materialization rejects.
func.func @swap(%c: tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>) {
  // expected-error @+1 {{'dist.reshard' op plan holds 128 bytes per process on the way, more than the operand (64) and the result (64), and forbid-materialization is set}}
  %0 = dist.reshard %c : tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>> -> tensor<2x8xf32, #dist.tensor<#mesh, [1, 0]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// Partial max then min over two axes: neither partial view survives the
// other's reduction, so no plan makes one from the complete value.
func.func @mixed_kinds(%x: tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>) {
  // expected-error-re @+1 {{'dist.reshard' op cannot be planned: no sequence of steps reaches {{.*}}partial = [0 : max, 1 : min]{{.*}}}}
  %0 = dist.reshard %x : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : max, 1 : min]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @index(%x: tensor<8x16xindex, #dist.tensor<#mesh, [-1, -1]>>) {
  // expected-error @+1 {{'dist.reshard' op cannot be planned: element type index has no size to move}}
  %0 = dist.reshard %x : tensor<8x16xindex, #dist.tensor<#mesh, [-1, -1]>> -> tensor<4x16xindex, #dist.tensor<#mesh, [0, -1]>>
  return
}

// -----

// A global tensor of 2^64 bytes: its sizes would wrap around, so it is not
// planned (no "0 bytes per process" remark).
#mesh = #dist.mesh<shape = [2]>
func.func @huge(%x: tensor<2305843009213693952x4xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // expected-error @+1 {{'dist.reshard' op cannot be planned: the global shape [4611686018427387904, 4] has more bytes than 64 bits count}}
  %0 = dist.reshard %x : tensor<2305843009213693952x4xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4611686018427387904x4xf32, #dist.tensor<#mesh, [-1, -1]>>
  return
}
