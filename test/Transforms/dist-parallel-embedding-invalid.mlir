// RUN: dist-opt %s --dist-parallel-embedding -split-input-file -verify-diagnostics

// What the pass refuses, on programs whose distributions are right.

#mesh = #dist.mesh<shape = [2, 4]>
func.func @rows_and_batch_same_axis(%ids: tensor<4xi64, #dist.tensor<#mesh, [1]>>, %w: tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>, %g: tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>) -> tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>> {
  // The gradient's rule refuses it before the pass sees it.
  // expected-error @+1 {{'dist.embedding_grad' op has no correct distribution: mesh axis 1 splits both the table's rows and the ids}}
  %dw = dist.embedding_grad %ids, %w, %g : tensor<4xi64, #dist.tensor<#mesh, [1]>>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>, tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>
  return %dw : tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @forward_same_axis(%ids: tensor<4xi64, #dist.tensor<#mesh, [1]>>, %w: tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>) -> tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>> {
  // expected-error @+1 {{ids batch dim is split over mesh axis 1, which also splits the weight rows}}
  %e = dist.embedding %ids, %w : tensor<4xi64, #dist.tensor<#mesh, [1]>>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
  return %e : tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @dynamic_rows(%ids: tensor<4xi64>, %w: tensor<?x16xf32, #dist.tensor<#mesh, [1, -1]>>) -> tensor<4x16xf32> {
  // expected-error @+1 {{weight has a dynamic row count; start_index needs the local row count}}
  %e = dist.embedding %ids, %w : tensor<4xi64>, tensor<?x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x16xf32>
  return %e : tensor<4x16xf32>
}

// -----

// Bad input the verifier rejects before the pass runs: non-integer ids, a
// mesh axis out of range, and distributions no lookup computes.
func.func @float_ids(%ids: tensor<4xf32>, %w: tensor<100x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dist.embedding' op operand #0 must be ranked tensor of integer values}}
  %e = dist.embedding %ids, %w : tensor<4xf32>, tensor<100x16xf32> -> tensor<4x16xf32>
  return %e : tensor<4x16xf32>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// expected-error @+1 {{dims_mapping entry 2 of dim 0 must be -1 or a mesh axis in [0, 2)}}
func.func @axis_out_of_range(%ids: tensor<4xi64>, %w: tensor<100x16xf32, #dist.tensor<#mesh, [2, -1]>>) {
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @out_grad_split_on_row_axis(%ids: tensor<4xi64>, %w: tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>, %g: tensor<4x16xf32, #dist.tensor<#mesh, [-1, 1]>>) -> tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>> {
  // expected-error @+1 {{'dist.embedding_grad' op has no correct distribution: out_grad's dims mapping [-1, 1] differs from the looked-up rows' [-1, -1]}}
  %dw = dist.embedding_grad %ids, %w, %g : tensor<4xi64>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>, tensor<4x16xf32, #dist.tensor<#mesh, [-1, 1]>> -> tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>
  return %dw : tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
#other = #dist.mesh<shape = [8]>
func.func @meshes_differ(%ids: tensor<4xi64, #dist.tensor<#other, [0]>>, %w: tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dist.embedding' op has no correct distribution: its tensors are distributed on different meshes}}
  %e = dist.embedding %ids, %w : tensor<4xi64, #dist.tensor<#other, [0]>>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x16xf32>
  return %e : tensor<4x16xf32>
}

// -----

// The startup function must be one the pass can extend.
#mesh = #dist.mesh<shape = [2, 2]>
// expected-error @+1 {{the 'dist.startup' function @init is a declaration; the parameters' broadcasts go into its body}}
func.func private @init(tensor<8x4xf32, #dist.tensor<#mesh, [1, -1]>> {dist.param = "w"}) -> (tensor<8x4xf32, #dist.tensor<#mesh, [1, -1]>> {dist.param = "w"}) attributes {dist.startup}
func.func @external_startup(%ids: tensor<4xi64>, %w: tensor<8x4xf32, #dist.tensor<#mesh, [1, -1]>> {dist.param = "w"}) -> tensor<4x4xf32> {
  %e = dist.embedding %ids, %w : tensor<4xi64>, tensor<8x4xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x4xf32>
  return %e : tensor<4x4xf32>
}

// -----

#mesh = #dist.mesh<shape = [2, 2]>
// expected-error @+1 {{the 'dist.startup' function @init must be one block ending in func.return, where the parameters' broadcasts go}}
func.func @init(%w: tensor<8x4xf32, #dist.tensor<#mesh, [1, -1]>> {dist.param = "w"}) -> (tensor<8x4xf32, #dist.tensor<#mesh, [1, -1]>> {dist.param = "w"}) attributes {dist.startup} {
  cf.br ^bb1
^bb1:
  return %w : tensor<8x4xf32, #dist.tensor<#mesh, [1, -1]>>
}
func.func @branching_startup(%ids: tensor<4xi64>, %w: tensor<8x4xf32, #dist.tensor<#mesh, [1, -1]>> {dist.param = "w"}) -> tensor<4x4xf32> {
  %e = dist.embedding %ids, %w : tensor<4xi64>, tensor<8x4xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x4xf32>
  return %e : tensor<4x4xf32>
}

// -----

#mesh = #dist.mesh<shape = [2, 2]>
// expected-note @+1 {{the other one}}
func.func @init1() attributes {dist.startup} {
  return
}
// expected-error @+1 {{more than one function is marked 'dist.startup'}}
func.func @init2() attributes {dist.startup} {
  return
}
func.func @two_startups(%ids: tensor<4xi64>, %w: tensor<8x4xf32, #dist.tensor<#mesh, [1, -1]>> {dist.param = "w"}) -> tensor<4x4xf32> {
  %e = dist.embedding %ids, %w : tensor<4xi64>, tensor<8x4xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x4xf32>
  return %e : tensor<4x4xf32>
}
