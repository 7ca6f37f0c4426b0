// RUN: dist-opt %s --dist-complete -split-input-file -verify-diagnostics

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// An op with no rule on a distributed tensor: an error, not a replication.
func.func @no_rule(%x: tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<8x8xi32> attributes {dist.complete} {
  // expected-error @+1 {{'tensor.bitcast' op has no distribution rule, so completion cannot tell what it computes on distributed tensors}}
  %b = tensor.bitcast %x : tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<8x8xi32>
  return %b : tensor<8x8xi32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// Two constraints no reshard of a partial operand reconciles: the
// contracted dim is split in one operand only.
func.func @no_distribution(%x: tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> attributes {dist.complete} {
  // expected-error @+1 {{'dist.matmul' op has no correct distribution}}
  %y = dist.matmul %x, %w : tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// The marker is for functions.
// expected-error @+1 {{'dist.complete' marks a function}}
module attributes {dist.complete} {
}


// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// Local shapes are written: branches that hold different global tensors
// (8x16 and 16x8) are not one value in two distributions.
func.func @different_globals(%c: i1, %x: tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>, %y: tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>) -> tensor<8x8xf32> attributes {dist.complete} {
  %r = scf.if %c -> tensor<8x8xf32> {
    %a = tensor.cast %x : tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<8x8xf32>
    scf.yield %a : tensor<8x8xf32>
  } else {
    %b = tensor.cast %y : tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>> to tensor<8x8xf32>
    // expected-error @+1 {{completion: cannot reshard [-1, 0] to [0, -1]: with the local shapes written the global shapes differ, [8, 16] and [16, 8]}}
    scf.yield %b : tensor<8x8xf32>
  }
  return %r : tensor<8x8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// A collective is checked once completion has decided its operand: an
// all-to-all of a replicated tensor has no split to move.
func.func @collective(%x: tensor<8x8xf32>) -> tensor<8x4xf32> attributes {dist.complete} {
  %e = math.exp %x : tensor<8x8xf32>
  // expected-error @+1 {{'dist.all_to_all' op needs a #dist.tensor encoding on its operand and its result: they say what it redistributes}}
  %a = dist.all_to_all %e on #mesh axes = [0] : tensor<8x8xf32> -> tensor<8x4xf32>
  return %a : tensor<8x4xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// Its mesh axes are checked at once: completion reads them.
func.func @collective_axes(%x: tensor<8x8xf32>) -> tensor<8x8xf32> attributes {dist.complete} {
  // expected-error @+1 {{'dist.allreduce' op mesh axis 3 is out of range for a mesh of rank 1}}
  %a = dist.allreduce %x on #mesh axes = [3] reduce = sum : tensor<8x8xf32> -> tensor<8x8xf32>
  return %a : tensor<8x8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// Two constraints on one value that hold different global tensors with the
// local shape written: an error, not a reshard.
func.func @two_pins(%x: tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<4x16xf32> attributes {dist.complete} {
  %c = tensor.cast %x : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<4x16xf32>
  %p = dist.constraint %c : tensor<4x16xf32> -> tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>
  // expected-error @+1 {{completion: cannot reshard [0, -1] to [-1, 0]: with the local shapes written the global shapes differ, [8, 16] and [4, 32]}}
  %q = dist.constraint %c : tensor<4x16xf32> -> tensor<4x16xf32, #dist.tensor<#mesh, [-1, 0]>>
  %b = tensor.cast %q : tensor<4x16xf32, #dist.tensor<#mesh, [-1, 0]>> to tensor<4x16xf32>
  return %b : tensor<4x16xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["tp"]>
// A reshard between undecided types must keep the global tensor: no axis
// of the mesh splits 8 rows into 3.
func.func @reshard_no_axis(%x: tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>) -> tensor<3x8xf32> attributes {dist.complete} {
  %c = arith.negf %x : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  // expected-error @+1 {{completion: no distribution of the operand's global tensor, replicated, has the local shape of the result 'tensor<3x8xf32>'}}
  %r = dist.reshard %c : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<3x8xf32>
  return %r : tensor<3x8xf32>
}
