// RUN: dist-opt %s --dist-dropout-seed --dist-verify-distributions | FileCheck %s
// Idempotent:
// RUN: dist-opt %s --dist-dropout-seed | dist-opt --dist-dropout-seed | FileCheck %s

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>

// fix_seed set: the seed op carries its value, replicated on the dropout's
// mesh, right before the dropout; fix_seed is dropped. The recomputed twin
// in the backward part uses the same seed value.
// CHECK-LABEL: func @fixed_and_recomputed
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32, {{.*}}>, %[[G:.*]]: tensor<4x8xf32, {{.*}}>)
// CHECK-NEXT: %[[A:.*]] = dist.scale %[[X]]
// CHECK-NEXT: %[[S:.*]] = dist.seed 42 : tensor<1xi32, #dist.tensor<#mesh, [-1]>>
// CHECK-NEXT: %[[D:.*]] = dist.dropout %[[A]] seed(%[[S]] : tensor<1xi32, #dist.tensor<#mesh, [-1]>>) prob = 1.000000e-01 {id = "attn"} :
// CHECK-NEXT: %[[B:.*]] = dist.scale %[[G]]
// CHECK-NEXT: %[[R:.*]] = dist.dropout %[[B]] seed(%[[S]] : tensor<1xi32, #dist.tensor<#mesh, [-1]>>) prob = 1.000000e-01 {recompute_of = "attn"} :
// CHECK-NEXT: return %[[D]], %[[R]]
// CHECK-NOT: fix_seed
func.func @fixed_and_recomputed(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>,
    %g: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>)
    -> (tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
  %a = dist.scale %x by 2.0 : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
  %d = dist.dropout %a prob = 0.1 {fix_seed = 42 : i32, id = "attn"}
      : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
  %b = dist.scale %g by 3.0 : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
  %r = dist.dropout %b prob = 0.1 {fix_seed = 42 : i32, recompute_of = "attn"}
      : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
  return %d, %r : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
}

// No fix_seed: seed 0 ("random at run time"); the twin still shares it, so
// the run-time seed is drawn once for both. Unannotated tensors give an
// unannotated seed.
// CHECK-LABEL: func @random
// CHECK-NEXT: %[[S:.*]] = dist.seed 0 : tensor<1xi32>
// CHECK-NEXT: %[[D:.*]] = dist.dropout %arg0 seed(%[[S]] : tensor<1xi32>) prob = 5.000000e-01 {id = "ffn"}
// CHECK-NEXT: %[[R:.*]] = dist.dropout %arg0 seed(%[[S]] : tensor<1xi32>) prob = 5.000000e-01 {recompute_of = "ffn"}
func.func @random(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %d = dist.dropout %x prob = 0.5 {id = "ffn"} : tensor<16xf32> -> tensor<16xf32>
  %r = dist.dropout %x prob = 0.5 {recompute_of = "ffn"} : tensor<16xf32> -> tensor<16xf32>
  return %d, %r : tensor<16xf32>, tensor<16xf32>
}

// A dropout that already has a seed, and the existing seed op, are left
// alone; each unseeded forward dropout gets its own seed op.
// CHECK-LABEL: func @preseeded
// CHECK-NEXT: %[[S:.*]] = dist.seed 9 : tensor<1xi32>
// CHECK-NEXT: dist.dropout %arg0 seed(%[[S]] : tensor<1xi32>) prob = 2.000000e-01 :
// CHECK-NEXT: %[[S1:.*]] = dist.seed 0 : tensor<1xi32>
// CHECK-NEXT: dist.dropout %arg0 seed(%[[S1]] : tensor<1xi32>) prob = 3.000000e-01 :
// CHECK-NEXT: %[[S2:.*]] = dist.seed 0 : tensor<1xi32>
// CHECK-NEXT: dist.dropout %arg0 seed(%[[S2]] : tensor<1xi32>) prob = 3.000000e-01 :
// CHECK-NEXT: return
func.func @preseeded(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %s = dist.seed 9 : tensor<1xi32>
  %a = dist.dropout %x seed(%s : tensor<1xi32>) prob = 0.2 : tensor<16xf32> -> tensor<16xf32>
  %b = dist.dropout %x prob = 0.3 : tensor<16xf32> -> tensor<16xf32>
  %c = dist.dropout %x prob = 0.3 : tensor<16xf32> -> tensor<16xf32>
  return %a, %b, %c : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// The twin of a pre-seeded forward dropout takes the same seed value.
// CHECK-LABEL: func @preseeded_twin
// CHECK-NEXT: %[[S:.*]] = dist.seed 9
// CHECK-NEXT: dist.dropout %arg0 seed(%[[S]]
// CHECK-NEXT: dist.dropout %arg0 seed(%[[S]] : tensor<1xi32>) prob = 2.000000e-01 {recompute_of = "p"}
func.func @preseeded_twin(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %s = dist.seed 9 : tensor<1xi32>
  %a = dist.dropout %x seed(%s : tensor<1xi32>) prob = 0.2 {id = "p"} : tensor<16xf32> -> tensor<16xf32>
  %b = dist.dropout %x prob = 0.2 {recompute_of = "p"} : tensor<16xf32> -> tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}

// Dropouts in nested regions are seeded where they are.
// CHECK-LABEL: func @nested
// CHECK: scf.execute_region
// CHECK-NEXT: %[[S:.*]] = dist.seed 3
// CHECK-NEXT: dist.dropout %arg0 seed(%[[S]]
func.func @nested(%x: tensor<16xf32>) -> tensor<16xf32> {
  %r = scf.execute_region -> tensor<16xf32> {
    %d = dist.dropout %x prob = 0.2 {fix_seed = 3 : i32} : tensor<16xf32> -> tensor<16xf32>
    scf.yield %d : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}
