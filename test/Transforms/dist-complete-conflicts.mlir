// RUN: dist-opt %s --dist-complete -split-input-file -verify-diagnostics | FileCheck %s
// RUN: dist-opt %s --dist-complete --dist-lower-reshard -split-input-file 2>/dev/null | FileCheck %s --check-prefix=LOWERED
// Where completion puts a reshard when two constraints disagree, and the
// remark that says which two.

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// Megatron's residual: a row-parallel product (partial) plus the replicated
// residual. A partial addend would be counted once per process, so the
// product is completed right before the addition: an allreduce.
// CHECK-LABEL: func.func @residual
// CHECK-NEXT: %[[Y:.*]] = dist.matmul
// CHECK-NEXT: %[[R:.*]] = dist.reshard %[[Y]] : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>> -> tensor<8x16xf32>
// CHECK-NEXT: arith.addf %[[R]], %arg2 : tensor<8x16xf32>
// LOWERED-LABEL: func.func @residual
// LOWERED: dist.allreduce %{{.*}} on #{{.*}} axes = [0] reduce = sum
// LOWERED: arith.addf
func.func @residual(%x: tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>, %w: tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>>, %r: tensor<8x16xf32>) -> tensor<8x16xf32> attributes {dist.complete} {
  %y = dist.matmul %x, %w : tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x16xf32>
  // expected-remark @+1 {{completion: reshard of operand #0 from [-1, -1] partial [0 : sum] to replicated: 'dist.matmul' at}}
  %s = arith.addf %y, %r : tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// Two partial sums added stay partial: no reshard, one allreduce later if
// ever.
// CHECK-LABEL: func.func @partial_sum
// CHECK-NOT: dist.reshard
// CHECK: arith.addf {{.*}} : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>>
func.func @partial_sum(%x: tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>, %w: tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<8x16xf32> attributes {dist.complete} {
  %y = dist.matmul %x, %w : tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x16xf32>
  %z = dist.matmul %x, %w : tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x16xf32>
  %s = arith.addf %y, %z : tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

// -----

#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "mp"]>
// A result declared split over another axis than its rule computes (the
// same global tensor): the op keeps what it computes, and a reshard after
// it gives its users the declared distribution.
// CHECK-LABEL: func.func @declared_axis
// CHECK-NEXT: %[[Y:.*]] = dist.matmul %arg0, %arg1 : {{.*}} -> tensor<4x8xf32, #dist.tensor<#{{.*}}, [0, -1]>>
// CHECK-NEXT: %[[R:.*]] = dist.reshard %[[Y]] : tensor<4x8xf32, #dist.tensor<#{{.*}}, [0, -1]>> -> tensor<4x8xf32, #dist.tensor<#{{.*}}, [1, -1]>>
// CHECK-NEXT: math.exp %[[R]]
func.func @declared_axis(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>, %w: tensor<8x8xf32>) -> tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>> attributes {dist.complete} {
  // expected-remark @+1 {{completion: reshard of result #0 from [0, -1], which the rule of 'dist.matmul' computes, to [1, -1]: result #0 of 'dist.matmul' is declared [1, -1]}}
  %y = dist.matmul %x, %w : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<8x8xf32> -> tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>>
  %e = math.exp %y : tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>>
  return %e : tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// A call whose callee takes its argument replicated: the caller's split
// value is gathered right before the call, not where it was made.
// CHECK-LABEL: func.func @caller
// CHECK-NEXT: %[[E:.*]] = math.exp %arg0 : tensor<4x8xf32, #dist.tensor<#{{.*}}, [0, -1]>>
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[E]] : tensor<4x8xf32, #dist.tensor<#{{.*}}, [0, -1]>>
// CHECK-NEXT: %[[R:.*]] = dist.reshard %[[E]] : tensor<4x8xf32, #dist.tensor<#{{.*}}, [0, -1]>> -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-NEXT: call @callee(%[[R]])
func.func private @callee(%a: tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>) -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>> {
  return %a : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
}
func.func @caller(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> (tensor<4x8xf32>, tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>) attributes {dist.complete} {
  %e = math.exp %x : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
  %t = math.tanh %e : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
  %g = dist.reshard %e : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  %c = func.call @callee(%g) : (tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>) -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  %u = tensor.cast %t : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<4x8xf32>
  return %u, %c : tensor<4x8xf32>, tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// A destination-style op whose result is partial (a contraction over the
// split dim) into an init that another constraint made replicated: the
// init is resharded to the result's type (a local make_partial).
// CHECK-LABEL: func.func @init_conflict
// CHECK: %[[I:.*]] = dist.reshard %arg2 : tensor<8x8xf32> -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>>
// CHECK-NEXT: linalg.matmul ins(%arg0, %arg1 : {{.*}}) outs(%[[I]] : tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>>)
// LOWERED-LABEL: func.func @init_conflict
// LOWERED: dist.make_partial
func.func @init_conflict(%x: tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>, %w: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>, %z: tensor<8x8xf32>) -> tensor<8x8xf32> attributes {dist.complete} {
  // expected-remark @+1 {{completion: reshard of init #2 from replicated to [-1, -1] partial [0 : sum]}}
  %m = linalg.matmul ins(%x, %w : tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// The partial sum a nonlinear op needs complete is completed where the
// tensor is smallest on the way back through ops that pass the sum on,
// the earliest on a tie: right after the row-parallel product here (the
// scale takes the complete value), and after the slice below (a quarter of
// the bytes).
// CHECK-LABEL: func.func @hoisted
// CHECK-NEXT: %[[Y:.*]] = dist.matmul
// CHECK-NEXT: %[[R:.*]] = dist.reshard %[[Y]] : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>> -> tensor<8x16xf32>
// CHECK-NEXT: %[[S:.*]] = dist.scale %[[R]] by 5.000000e-01 : tensor<8x16xf32>
// CHECK-NEXT: math.tanh %[[S]] : tensor<8x16xf32>
// CHECK-NEXT: %[[Z:.*]] = dist.matmul
// CHECK-NEXT: %[[T:.*]] = dist.scale %[[Z]] by 5.000000e-01 : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>>
// CHECK-NEXT: %[[C:.*]] = tensor.extract_slice %[[T]][0, 0] [8, 4] [1, 1] : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>> to tensor<8x4xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>>
// CHECK-NEXT: %[[Q:.*]] = dist.reshard %[[C]]
// CHECK-NEXT: math.tanh %[[Q]] : tensor<8x4xf32>
func.func @hoisted(%x: tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>, %w: tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>>) -> (tensor<8x16xf32>, tensor<8x4xf32>) attributes {dist.complete} {
  %y = dist.matmul %x, %w : tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x16xf32>
  %s = dist.scale %y by 0.5 : tensor<8x16xf32>
  // expected-remark @+1 {{completion: reshard of operand #0 from [-1, -1] partial [0 : sum] to replicated: 'dist.scale' at}}
  %t = math.tanh %s : tensor<8x16xf32>
  %z = dist.matmul %x, %w : tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x16xf32>
  %u = dist.scale %z by 0.5 : tensor<8x16xf32>
  %c = tensor.extract_slice %u[0, 0] [8, 4] [1, 1] : tensor<8x16xf32> to tensor<8x4xf32>
  // expected-remark @+1 {{completion: reshard of operand #0 from [-1, -1] partial [0 : sum] to replicated: 'tensor.extract_slice' at}}
  %v = math.tanh %c : tensor<8x4xf32>
  return %t, %v : tensor<8x16xf32>, tensor<8x4xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// A result pinned replicated where the rule computes a partial sum: before
// the op or after it, whichever the cost model prices cheaper. A large
// product of thin factors gathers the factors and computes the product
// replicated; a small product of wide factors is allreduced after.
// CHECK-LABEL: func.func @gather_before
// CHECK-NEXT: %[[X:.*]] = dist.reshard %arg0 : tensor<4096x128xf32, #dist.tensor<#{{.*}}, [-1, 0]>> -> tensor<4096x256xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-NEXT: %[[W:.*]] = dist.reshard %arg1 : tensor<128x4096xf32, #dist.tensor<#{{.*}}, [0, -1]>> -> tensor<256x4096xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-NEXT: %[[Y:.*]] = dist.matmul %[[X]], %[[W]] : {{.*}} -> tensor<4096x4096xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-NEXT: math.exp %[[Y]]
// CHECK-LABEL: func.func @reduce_after
// CHECK-NEXT: %[[Y:.*]] = dist.matmul %arg0, %arg1 : {{.*}} -> tensor<64x64xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>>
// CHECK-NEXT: dist.reshard %[[Y]] : tensor<64x64xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>> -> tensor<64x64xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-LABEL: func.func @linalg_before
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4096x4096xf32>
// CHECK-NEXT: %[[X:.*]] = dist.reshard %arg0 {{.*}} -> tensor<4096x256xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-NEXT: %[[W:.*]] = dist.reshard %arg1 {{.*}} -> tensor<256x4096xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-NEXT: %[[I:.*]] = dist.reshard %[[E]] : tensor<4096x4096xf32> -> tensor<4096x4096xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-NEXT: linalg.matmul ins(%[[X]], %[[W]] : {{.*}}) outs(%[[I]] : tensor<4096x4096xf32, #dist.tensor<#{{.*}}, [-1, -1]>>)
// CHECK-NOT: dist.reshard
// CHECK: return
// LOWERED-LABEL: func.func @gather_before
// LOWERED-COUNT-2: dist.all_gather
// LOWERED-NOT: dist.allreduce
// LOWERED-LABEL: func.func @reduce_after
// LOWERED: dist.allreduce
func.func @gather_before(%x: tensor<4096x128xf32, #dist.tensor<#mesh, [-1, 0]>>, %w: tensor<128x4096xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<4096x4096xf32> attributes {dist.complete} {
  // expected-remark @+2 {{completion: reshard of operand #0 from [-1, 0] to replicated before 'dist.matmul', which then computes result #0 as replicated ('dist.constraint' at}}
  // expected-remark @+1 {{completion: reshard of operand #1 from [0, -1] to replicated before 'dist.matmul'}}
  %y = dist.matmul %x, %w : tensor<4096x128xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<128x4096xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4096x4096xf32>
  %c = dist.constraint %y : tensor<4096x4096xf32> -> tensor<4096x4096xf32, #dist.tensor<#mesh, [-1, -1]>>
  %e = math.exp %c : tensor<4096x4096xf32, #dist.tensor<#mesh, [-1, -1]>>
  %u = tensor.cast %e : tensor<4096x4096xf32, #dist.tensor<#mesh, [-1, -1]>> to tensor<4096x4096xf32>
  return %u : tensor<4096x4096xf32>
}
func.func @reduce_after(%x: tensor<64x2048xf32, #dist.tensor<#mesh, [-1, 0]>>, %w: tensor<2048x64xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<64x64xf32> attributes {dist.complete} {
  // expected-remark-re @+1 {{completion: reshard of result #0 from [-1, -1] partial [0 : sum], which the rule of 'dist.matmul' computes, to replicated: 'dist.constraint' at {{.*}} pins replicated ({{[0-9.]+}} us by the cost model, against {{[0-9.]+}} us with reshards of operands before it)}}
  %y = dist.matmul %x, %w : tensor<64x2048xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<2048x64xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<64x64xf32>
  %c = dist.constraint %y : tensor<64x64xf32> -> tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>
  %u = tensor.cast %c : tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>> to tensor<64x64xf32>
  return %u : tensor<64x64xf32>
}
func.func @linalg_before(%x: tensor<4096x128xf32, #dist.tensor<#mesh, [-1, 0]>>, %w: tensor<128x4096xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<4096x4096xf32> attributes {dist.complete} {
  %z = tensor.empty() : tensor<4096x4096xf32>
  // expected-remark @+2 {{completion: reshard of operand #0 from [-1, 0] to replicated before 'linalg.matmul'}}
  // expected-remark @+1 {{completion: reshard of operand #1 from [0, -1] to replicated before 'linalg.matmul'}}
  %y = linalg.matmul ins(%x, %w : tensor<4096x128xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<128x4096xf32, #dist.tensor<#mesh, [0, -1]>>) outs(%z : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %c = dist.constraint %y : tensor<4096x4096xf32> -> tensor<4096x4096xf32, #dist.tensor<#mesh, [-1, -1]>>
  %u = tensor.cast %c : tensor<4096x4096xf32, #dist.tensor<#mesh, [-1, -1]>> to tensor<4096x4096xf32>
  return %u : tensor<4096x4096xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// A cast whose result is declared replicated, of a partial sum completion
// decided: the sum is completed before the cast (the check refuses a cast
// that changes the distribution). A pinned value's other users see the
// pin too.
// CHECK-LABEL: func.func @cast
// CHECK-NEXT: %[[Y:.*]] = dist.matmul
// CHECK-NEXT: %[[R:.*]] = dist.reshard %[[Y]] : tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>> -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-NEXT: tensor.cast %[[R]] : tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1]>> to tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-LABEL: func.func @pin_shared
// CHECK-NEXT: %[[E:.*]] = tensor.cast %arg0 : tensor<4x16xf32, #dist.tensor<#{{.*}}, [0, -1]>> to tensor<4x16xf32, #dist.tensor<#{{.*}}, [0, -1]>>
// CHECK-NEXT: math.tanh %[[E]] : tensor<4x16xf32, #dist.tensor<#{{.*}}, [0, -1]>>
// CHECK-NOT: dist.constraint
// LOWERED-LABEL: func.func @cast
// LOWERED: dist.allreduce
func.func @cast(%x: tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>, %w: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>> attributes {dist.complete} {
  %y = dist.matmul %x, %w : tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x8xf32>
  // expected-remark @+1 {{completion: reshard of operand #0 from [-1, -1] partial [0 : sum] to replicated: 'dist.matmul' at}}
  %c = tensor.cast %y : tensor<8x8xf32> to tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  return %c : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
}
func.func @pin_shared(%x: tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>) -> (tensor<4x16xf32>, tensor<4x16xf32>) attributes {dist.complete} {
  %e = tensor.cast %x : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<4x16xf32>
  %t = math.tanh %e : tensor<4x16xf32>
  %p = dist.constraint %e : tensor<4x16xf32> -> tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>
  %a = tensor.cast %p : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<4x16xf32>
  return %a, %t : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "mp"]>
// A constraint on an argument declared otherwise reshards it where the
// constraint is (the same local shape: the other axis of one size).
// CHECK-LABEL: func.func @pin_arg
// CHECK-NEXT: %[[S:.*]] = dist.reshard %arg0 : tensor<4x16xf32, #dist.tensor<#{{.*}}, [0, -1]>> -> tensor<4x16xf32, #dist.tensor<#{{.*}}, [1, -1]>>
// CHECK-NEXT: math.exp %[[S]] : tensor<4x16xf32, #dist.tensor<#{{.*}}, [1, -1]>>
// LOWERED-LABEL: func.func @pin_arg
// LOWERED-NOT: dist.reshard
// LOWERED: dist.all_to_all
// LOWERED-NOT: dist.reshard
// LOWERED: math.exp
func.func @pin_arg(%x: tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<4x16xf32> attributes {dist.complete} {
  // expected-remark @+1 {{completion: reshard of operand #0 from [0, -1] to [1, -1]: 'dist.constraint' at}}
  %c = dist.constraint %x : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
  %y = math.exp %c : tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
  %u = tensor.cast %y : tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>> to tensor<4x16xf32>
  return %u : tensor<4x16xf32>
}
