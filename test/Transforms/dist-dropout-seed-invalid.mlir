// RUN: dist-opt %s --dist-dropout-seed -split-input-file -verify-diagnostics

func.func @no_twin(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{recompute_of names "attn", which is no forward dropout of this function}}
  %r = dist.dropout %x prob = 0.5 {recompute_of = "attn"} : tensor<16xf32> -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

func.func @seed_differs(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %s = dist.seed 1 : tensor<1xi32>
  %t = dist.seed 1 : tensor<1xi32>
  // expected-note @+1 {{forward dropout "attn" is here}}
  %d = dist.dropout %x seed(%s : tensor<1xi32>) prob = 0.5 {id = "attn"} : tensor<16xf32> -> tensor<16xf32>
  // Two seed ops of the same value are still two draws when the value is 0,
  // so only the same SSA value guarantees the same mask.
  // expected-error @+1 {{recomputed dropout's seed is not its twin's seed value}}
  %r = dist.dropout %x seed(%t : tensor<1xi32>) prob = 0.5 {recompute_of = "attn"} : tensor<16xf32> -> tensor<16xf32>
  return %d, %r : tensor<16xf32>, tensor<16xf32>
}

// -----

func.func @fix_seed_differs(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  // expected-note @+1 {{forward dropout "attn" is here}}
  %d = dist.dropout %x prob = 0.5 {fix_seed = 7 : i32, id = "attn"} : tensor<16xf32> -> tensor<16xf32>
  // expected-error @+1 {{recomputed dropout has fix_seed = 8 but its twin "attn" draws from seed 7}}
  %r = dist.dropout %x prob = 0.5 {fix_seed = 8 : i32, recompute_of = "attn"} : tensor<16xf32> -> tensor<16xf32>
  return %d, %r : tensor<16xf32>, tensor<16xf32>
}

// -----

func.func @prob_differs(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  // expected-note @+1 {{forward dropout "attn" is here}}
  %d = dist.dropout %x prob = 0.5 {id = "attn"} : tensor<16xf32> -> tensor<16xf32>
  // expected-error @+1 {{recomputed dropout has prob 2.500000e-01 but its twin "attn" has 5.000000e-01}}
  %r = dist.dropout %x prob = 0.25 {recompute_of = "attn"} : tensor<16xf32> -> tensor<16xf32>
  return %d, %r : tensor<16xf32>, tensor<16xf32>
}

// -----

func.func @duplicate_id(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  // expected-note @+1 {{first dropout "attn" is here}}
  %d = dist.dropout %x prob = 0.5 {id = "attn"} : tensor<16xf32> -> tensor<16xf32>
  // expected-error @+1 {{two forward dropouts are named "attn"}}
  %e = dist.dropout %x prob = 0.5 {id = "attn"} : tensor<16xf32> -> tensor<16xf32>
  return %d, %e : tensor<16xf32>, tensor<16xf32>
}

// -----

func.func @twin_does_not_dominate(%x: tensor<16xf32>, %c: i1) -> tensor<16xf32> {
  %r = scf.if %c -> tensor<16xf32> {
    // expected-note @+1 {{forward dropout "attn" is here}}
    %d = dist.dropout %x prob = 0.5 {id = "attn"} : tensor<16xf32> -> tensor<16xf32>
    scf.yield %d : tensor<16xf32>
  } else {
    scf.yield %x : tensor<16xf32>
  }
  // expected-error @+1 {{the seed of its twin "attn" does not dominate this recomputed dropout}}
  %b = dist.dropout %r prob = 0.5 {recompute_of = "attn"} : tensor<16xf32> -> tensor<16xf32>
  return %b : tensor<16xf32>
}
