// RUN: dist-opt %s --dist-lower-reshard="remarks=true cost-model=%S/Inputs/redistribution-costs.json" -split-input-file -verify-diagnostics | FileCheck %s
// Plans priced with measured links (Inputs/redistribution-costs.json, groups
// of 4: allreduce 20 us + 1 B/us, all-gather 7 us + 2 B/us, reduce-scatter
// 3 us + 4 B/us, no all-to-all measured): each step costs its own kind's
// latency + bytes / bandwidth, on the bytes the cost model prices (the
// gathered result, the reduced operand), and an unmeasured all-to-all is
// scaled from the allreduce by the ratio of their ring factors (1/2).

#mesh = #dist.mesh<shape = [4]>
// 7 + 512 / 2 = 263 us.
// CHECK-LABEL: func @gather
// CHECK-NEXT: dist.all_gather
func.func @gather(%a: tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>> {
  // expected-remark @+1 {{1 step, 384 bytes per process, 263.000 us, at most 512 bytes held: all_gather(axis 0, 384 B) -> [-1, -1];}}
  %0 = dist.reshard %a : tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
  return %0 : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [4]>
// 3 + 512 / 4 = 131 us.
// CHECK-LABEL: func @scatter
// CHECK-NEXT: dist.reduce_scatter
func.func @scatter(%a: tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>) -> tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>> {
  // expected-remark @+1 {{1 step, 384 bytes per process, 131.000 us, at most 512 bytes held: reduce_scatter(axis 0, sum, 384 B) -> [0, -1];}}
  %0 = dist.reshard %a : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>>
  return %0 : tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [4]>
// 20 + 128 / 2 = 84 us.
// CHECK-LABEL: func @all_to_all
// CHECK-NEXT: dist.all_to_all
func.func @all_to_all(%a: tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>> {
  // expected-remark @+1 {{1 step, 96 bytes per process, 84.000 us, at most 128 bytes held: all_to_all(axis 0, 96 B) -> [-1, 0];}}
  %0 = dist.reshard %a : tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>
  return %0 : tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>
}

// -----

// This machine's allreduce (20 + 512 = 532 us) is slower than its
// reduce-scatter and all-gather together (131 + 263 = 394 us): the plan
// follows the measurement, not the textbook.
#mesh = #dist.mesh<shape = [4]>
// CHECK-LABEL: func @complete
// CHECK-NEXT: dist.reduce_scatter
// CHECK-NEXT: dist.all_gather
// CHECK-NEXT: return
func.func @complete(%a: tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>) -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>> {
  // expected-remark @+1 {{2 steps, 768 bytes per process, 394.000 us, at most 512 bytes held:}}
  %0 = dist.reshard %a : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
  return %0 : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
}
