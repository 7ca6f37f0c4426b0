// RUN: dist-opt %s --dist-overlap-report -verify-diagnostics -o /dev/null
// A reshard the planner cannot plan (index elements have no size to move,
// a dynamic shape) is not priced: a warning at it, not an error, since
// the report is an estimate and --dist-lower-reshard reports the error.

#mesh = #dist.mesh<shape = [2, 2]>
func.func @f(%x: tensor<4xindex, #dist.tensor<#mesh, [0]>>, %d: tensor<?xf32, #dist.tensor<#mesh, [0]>>) -> (tensor<8xindex>, tensor<?xf32>) {
  // expected-warning @+1 {{this reshard is not priced: it cannot be planned: element type index has no size to move}}
  %a = dist.reshard %x : tensor<4xindex, #dist.tensor<#mesh, [0]>> -> tensor<8xindex>
  // expected-warning @+1 {{this reshard is not priced: it cannot be planned: its shapes are not static}}
  %c = dist.reshard %d : tensor<?xf32, #dist.tensor<#mesh, [0]>> -> tensor<?xf32>
  return %a, %c : tensor<8xindex>, tensor<?xf32>
}
