// RUN: dist-opt %s --dist-complete -split-input-file -verify-diagnostics | FileCheck %s
// Completion: arguments and written encodings are the constraints; every
// unencoded tensor of a function marked {dist.complete} gets what the rules
// give it, and conflicts become dist.reshard ops with a remark.

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// Column- then row-parallel: the hidden activation is split, the row-parallel
// product stays partial (a later reshard can be a reduce-scatter), and the
// result declared replicated gets a reshard after its matmul.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: -> (tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>>, tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1]>>)
// CHECK-NOT: dist.complete
// CHECK-NEXT: %[[H:.*]] = dist.matmul %arg0, %arg1 : {{.*}} -> tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
// CHECK-NEXT: %[[A:.*]] = math.tanh %[[H]] : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
// CHECK-NEXT: %[[Y:.*]] = dist.matmul %[[A]], %arg2 : {{.*}} -> tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>>
// CHECK-NEXT: %[[Z:.*]] = dist.matmul %[[A]], %arg2 : {{.*}} -> tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>>
// CHECK-NEXT: %[[R:.*]] = dist.reshard %[[Z]] : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>> -> tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-NEXT: return %[[Y]], %[[R]]
func.func @mlp(%x: tensor<8x16xf32>,
               %w1: tensor<16x16xf32, #dist.tensor<#mesh, [-1, 0]>>,
               %w2: tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>>)
    -> (tensor<8x16xf32>, tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>) attributes {dist.complete} {
  %h = dist.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x16xf32, #dist.tensor<#mesh, [-1, 0]>> -> tensor<8x16xf32>
  %a = math.tanh %h : tensor<8x16xf32>
  %y = dist.matmul %a, %w2 : tensor<8x16xf32>, tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x16xf32>
  // expected-remark @+1 {{completion: reshard of result #0 from [-1, -1] partial [0 : sum], which the rule of 'dist.matmul' computes, to replicated: result #0 of 'dist.matmul' is declared replicated}}
  %z = dist.matmul %a, %w2 : tensor<8x16xf32>, tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
  return %y, %z : tensor<8x16xf32>, tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// A nonlinear op of a partial value: the operand is completed first, and
// what comes out replicated stays unencoded.
// CHECK-LABEL: func.func @tanh_after_row
// CHECK-SAME: -> tensor<8x16xf32> {
// CHECK-NEXT: %[[Y:.*]] = dist.matmul %arg0, %arg1 : {{.*}} -> tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>>
// CHECK-NEXT: %[[R:.*]] = dist.reshard %[[Y]] : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>> -> tensor<8x16xf32>
// CHECK-NEXT: %[[A:.*]] = math.tanh %[[R]] : tensor<8x16xf32>
// CHECK-NEXT: return %[[A]] : tensor<8x16xf32>
func.func @tanh_after_row(%x: tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>,
                          %w: tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<8x16xf32> attributes {dist.complete} {
  %y = dist.matmul %x, %w : tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x16xf32>
  // expected-remark @+1 {{completion: reshard of operand #0 from [-1, -1] partial [0 : sum] to replicated: 'dist.matmul' at}}
  %a = math.tanh %y : tensor<8x16xf32>
  return %a : tensor<8x16xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// Backward from the loops: the init of a linalg.matmul (a fill of an empty
// tensor) takes the distribution of the output's loops.
// CHECK-LABEL: func.func @linalg_init
// CHECK-SAME: -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>) -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
// CHECK-NEXT: linalg.matmul ins(%arg0, %arg1 : {{.*}}) outs(%[[F]] : tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>) -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
func.func @linalg_init(%x: tensor<8x16xf32>, %w: tensor<16x8xf32, #dist.tensor<#mesh, [-1, 0]>>) -> tensor<8x8xf32> attributes {dist.complete} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x8xf32, #dist.tensor<#mesh, [-1, 0]>>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// Through a loop: the init, the iteration argument, the yield and the
// result carry one distribution.
// CHECK-LABEL: func.func @loop
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>)
// CHECK: math.tanh %{{.*}} : tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
// CHECK: scf.yield %{{.*}} : tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
// CHECK: math.exp %{{.*}} : tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
func.func @loop(%x: tensor<8x16xf32>, %w: tensor<16x8xf32, #dist.tensor<#mesh, [-1, 0]>>, %n: index) -> tensor<8x8xf32> attributes {dist.complete} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h = dist.matmul %x, %w : tensor<8x16xf32>, tensor<16x8xf32, #dist.tensor<#mesh, [-1, 0]>> -> tensor<8x8xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %h) -> (tensor<8x8xf32>) {
    %t = math.tanh %acc : tensor<8x8xf32>
    scf.yield %t : tensor<8x8xf32>
  }
  %e = math.exp %r : tensor<8x8xf32>
  return %e : tensor<8x8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// Through a call: the callee's result, completed from its body, is the
// call's; a cast keeps its operand's distribution.
// CHECK-LABEL: func.func private @callee
// CHECK-SAME: -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
// CHECK: tensor.cast %{{.*}} : tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>> to tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
// CHECK: tensor.empty() : tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
// CHECK: linalg.add {{.*}} -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
// CHECK-LABEL: func.func @caller
// CHECK-NEXT: %[[R:.*]] = call @callee(%arg0) : (tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>) -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
// CHECK-NEXT: math.exp %[[R]] : tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
func.func private @callee(%a: tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>) -> tensor<8x8xf32> attributes {dist.complete} {
  %t = math.tanh %a : tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>
  %u = tensor.cast %t : tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>> to tensor<8x8xf32>
  %b = math.exp %a : tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>
  %e = tensor.empty() : tensor<8x8xf32>
  %s = linalg.add ins(%b, %b : tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}
func.func @caller(%x: tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>) -> tensor<8x8xf32> attributes {dist.complete} {
  %r = func.call @callee(%x) : (tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>) -> tensor<8x8xf32>
  %e = math.exp %r : tensor<8x8xf32>
  return %e : tensor<8x8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// A fully annotated function (no marker): its unencoded tensors are
// replicated and completion changes nothing.
// CHECK-LABEL: func.func @complete_already
// CHECK-NEXT: %[[P:.*]] = dist.matmul %arg0, %arg1 : {{.*}} -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>>
// CHECK-NEXT: %[[R:.*]] = dist.allreduce %[[P]] {{.*}} -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-NEXT: %[[C:.*]] = tensor.cast %[[R]] : tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1]>> to tensor<8x8xf32>
// CHECK-NEXT: %[[E:.*]] = math.exp %[[C]] : tensor<8x8xf32>
// CHECK-NEXT: return %[[E]] : tensor<8x8xf32>
func.func @complete_already(%x: tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>, %w: tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<8x8xf32> {
  %p = dist.matmul %x, %w : tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  %c = tensor.cast %r : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>> to tensor<8x8xf32>
  %e = math.exp %c : tensor<8x8xf32>
  return %e : tensor<8x8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "mp"]>
// Two branches yield one global tensor split over different axes: the
// first yield decides the result, the second gets a reshard; the block
// argument of a cf branch takes what flows into it.
// CHECK-LABEL: func.func @branches
// CHECK-SAME: -> tensor<4x8xf32, #dist.tensor<#{{.*}}, [0, -1]>>
// CHECK: scf.if %arg0 -> (tensor<4x8xf32, #dist.tensor<#{{.*}}, [0, -1]>>)
// CHECK: scf.yield %{{.*}} : tensor<4x8xf32, #dist.tensor<#{{.*}}, [0, -1]>>
// CHECK: } else {
// CHECK: %[[C:.*]] = tensor.cast %{{.*}} : tensor<4x8xf32, #dist.tensor<#{{.*}}, [1, -1]>> to tensor<4x8xf32, #dist.tensor<#{{.*}}, [1, -1]>>
// CHECK-NEXT: %[[R:.*]] = dist.reshard %[[C]] : tensor<4x8xf32, #dist.tensor<#{{.*}}, [1, -1]>> -> tensor<4x8xf32, #dist.tensor<#{{.*}}, [0, -1]>>
// CHECK-NEXT: scf.yield %[[R]]
// CHECK: ^bb1(%{{.*}}: tensor<4x8xf32, #dist.tensor<#{{.*}}, [0, -1]>>):
// CHECK-NEXT: math.tanh %{{.*}} : tensor<4x8xf32, #dist.tensor<#{{.*}}, [0, -1]>>
// A declaration has nothing to complete: the marker goes.
// CHECK: func.func private @ext(tensor<8x8xf32>) -> tensor<8x8xf32>{{$}}
func.func @branches(%c: i1, %x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>, %y: tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>>) -> tensor<4x8xf32> attributes {dist.complete} {
  %r = scf.if %c -> tensor<4x8xf32> {
    %a = math.exp %x : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
    %ac = tensor.cast %a : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<4x8xf32>
    scf.yield %ac : tensor<4x8xf32>
  } else {
    %b = math.exp %y : tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>>
    %bc = tensor.cast %b : tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>> to tensor<4x8xf32>
    // expected-remark @+1 {{completion: reshard of operand #0 from [1, -1] to [0, -1], where it goes: 'tensor.cast' at}}
    scf.yield %bc : tensor<4x8xf32>
  }
  cf.br ^bb1(%r : tensor<4x8xf32>)
^bb1(%v: tensor<4x8xf32>):
  %t = math.tanh %v : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
func.func private @ext(tensor<8x8xf32>) -> tensor<8x8xf32> attributes {dist.complete}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// Independence from op order: one zero-filled init for two adds whose
// operands are split differently. Each consumer gets its own copy of a
// fresh tensor, so which one comes first does not matter; copies decided
// alike are merged back.
// CHECK-LABEL: func.func @ab
// CHECK-SAME: -> (tensor<8x8xf32, #dist.tensor<#{{.*}}, [0, -1]>>, tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>)
// CHECK-LABEL: func.func @ba
// CHECK-SAME: -> (tensor<8x8xf32, #dist.tensor<#{{.*}}, [0, -1]>>, tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>)
// CHECK-LABEL: func.func @alike
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT: tensor.empty
// CHECK: return
func.func @ab(%x: tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>, %y: tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>) -> (tensor<8x8xf32>, tensor<8x8xf32>) attributes {dist.complete} {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %z = linalg.fill ins(%c : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = linalg.add ins(%x, %x : tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = linalg.add ins(%y, %y : tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %a, %b : tensor<8x8xf32>, tensor<8x8xf32>
}
func.func @ba(%x: tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>, %y: tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>) -> (tensor<8x8xf32>, tensor<8x8xf32>) attributes {dist.complete} {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %z = linalg.fill ins(%c : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = linalg.add ins(%y, %y : tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = linalg.add ins(%x, %x : tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %a, %b : tensor<8x8xf32>, tensor<8x8xf32>
}
func.func @alike(%x: tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> (tensor<8x8xf32>, tensor<8x8xf32>) attributes {dist.complete} {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %z = linalg.fill ins(%c : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = linalg.add ins(%x, %x : tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = linalg.mul ins(%x, %x : tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %a, %b : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// A non-splat constant takes its consumer's split (each process adds it to
// its shard, as the program says); a zero constant on one branch of a cf
// diamond takes the other branch's; scf.while carries one distribution
// around; a recursive call terminates; f16 with dynamic dims and bf16 pass.
// CHECK-LABEL: func.func @constant
// CHECK: arith.constant dense<[1, 2, 3, 4]> : tensor<4xi64, #dist.tensor<#{{.*}}, [0]>>
// CHECK-LABEL: func.func @diamond
// CHECK: arith.constant dense<0.000000e+00> : tensor<4xf32, #dist.tensor<#{{.*}}, [0]>>
// CHECK: ^bb3(%{{.*}}: tensor<4xf32, #dist.tensor<#{{.*}}, [0]>>):
// CHECK-LABEL: func.func @rec
// CHECK-SAME: -> tensor<4xf32> {
// CHECK-LABEL: func.func @while
// CHECK: scf.while (%{{.*}} = %{{.*}}) : (tensor<4xf32, #dist.tensor<#{{.*}}, [0]>>) -> tensor<4xf32, #dist.tensor<#{{.*}}, [0]>>
// CHECK-LABEL: func.func @dyn
// CHECK: dist.reshard %{{.*}} : tensor<?x16xf16, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>> -> tensor<?x16xf16>
func.func @constant(%x: tensor<4xi64, #dist.tensor<#mesh, [0]>>) -> tensor<4xi64> attributes {dist.complete} {
  %c = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %e = tensor.empty() : tensor<4xi64>
  %a = linalg.add ins(%x, %c : tensor<4xi64, #dist.tensor<#mesh, [0]>>, tensor<4xi64>) outs(%e : tensor<4xi64>) -> tensor<4xi64>
  return %a : tensor<4xi64>
}
func.func @diamond(%c: i1, %x: tensor<4xf32, #dist.tensor<#mesh, [0]>>) -> tensor<4xf32> attributes {dist.complete} {
  cf.cond_br %c, ^a, ^b
^a:
  %e = math.exp %x : tensor<4xf32, #dist.tensor<#mesh, [0]>>
  %ec = tensor.cast %e : tensor<4xf32, #dist.tensor<#mesh, [0]>> to tensor<4xf32>
  cf.br ^c(%ec : tensor<4xf32>)
^b:
  %z = arith.constant dense<0.0> : tensor<4xf32>
  cf.br ^c(%z : tensor<4xf32>)
^c(%v: tensor<4xf32>):
  return %v : tensor<4xf32>
}
func.func @rec(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dist.complete} {
  %r = func.call @rec(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @while(%x: tensor<4xf32, #dist.tensor<#mesh, [0]>>, %n: i1) -> tensor<4xf32> attributes {dist.complete} {
  %xc = tensor.cast %x : tensor<4xf32, #dist.tensor<#mesh, [0]>> to tensor<4xf32>
  %r = scf.while (%a = %xc) : (tensor<4xf32>) -> tensor<4xf32> {
    scf.condition(%n) %a : tensor<4xf32>
  } do {
  ^bb0(%b: tensor<4xf32>):
    %e = math.exp %b : tensor<4xf32>
    scf.yield %e : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
func.func @dyn(%x: tensor<?x16xf16, #dist.tensor<#mesh, [-1, 0]>>, %w: tensor<16x16xf16, #dist.tensor<#mesh, [0, -1]>>, %r: tensor<?x16xf16>, %b: tensor<4xbf16, #dist.tensor<#mesh, [0]>>) -> tensor<?x16xf16> attributes {dist.complete} {
  %y = dist.matmul %x, %w : tensor<?x16xf16, #dist.tensor<#mesh, [-1, 0]>>, tensor<16x16xf16, #dist.tensor<#mesh, [0, -1]>> -> tensor<?x16xf16>
  // expected-remark @+1 {{completion: reshard of operand #0}}
  %s = arith.addf %y, %r : tensor<?x16xf16>
  %e = math.exp %b : tensor<4xbf16, #dist.tensor<#mesh, [0]>>
  return %s : tensor<?x16xf16>
}

// -----

#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "mp"]>
// Collectives written without encodings: each makes of its operand's
// distribution what it does; the written local shapes say where a
// reduce-scatter, slice or all-to-all puts its split.
// CHECK-LABEL: func.func @collectives
// CHECK: dist.allreduce %{{.*}} on #{{.*}} axes = [1] reduce = sum : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [1 : sum]>> -> tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK: dist.reduce_scatter %{{.*}} on #{{.*}} axes = [1] reduce = sum : tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [1 : sum]>> -> tensor<4x16xf32, #dist.tensor<#{{.*}}, [1, -1]>>
// CHECK: dist.all_gather %arg2 on #{{.*}} axes = [0] : tensor<4x16xf32, #dist.tensor<#{{.*}}, [0, -1]>> -> tensor<8x16xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK: dist.all_to_all %{{.*}} on #{{.*}} axes = [0] : tensor<4x16xf32, #dist.tensor<#{{.*}}, [0, -1]>> -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, 0]>>
func.func @collectives(%x: tensor<8x16xf32, #dist.tensor<#mesh, [-1, 1]>>, %w: tensor<16x16xf32, #dist.tensor<#mesh, [1, -1]>>, %s: tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>)
    -> (tensor<8x16xf32>, tensor<4x16xf32>, tensor<8x16xf32>, tensor<8x8xf32>) attributes {dist.complete} {
  %y = dist.matmul %x, %w : tensor<8x16xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<16x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<8x16xf32>
  %r = dist.allreduce %y on #mesh axes = [1] reduce = sum : tensor<8x16xf32> -> tensor<8x16xf32>
  %t = math.tanh %r : tensor<8x16xf32>
  %z = dist.matmul %x, %w : tensor<8x16xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<16x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<8x16xf32>
  %rs = dist.reduce_scatter %z on #mesh axes = [1] reduce = sum : tensor<8x16xf32> -> tensor<4x16xf32>
  %g = dist.all_gather %s on #mesh axes = [0] : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x16xf32>
  %sc = tensor.cast %s : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<4x16xf32>
  %a = dist.all_to_all %sc on #mesh axes = [0] : tensor<4x16xf32> -> tensor<8x8xf32>
  return %t, %rs, %g, %a : tensor<8x16xf32>, tensor<4x16xf32>, tensor<8x16xf32>, tensor<8x8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "tp"]>
// A reshard between undecided types (sequence parallelism's meeting points):
// its written local shapes say what it does. The sequence split over tp is
// gathered where the local sequence doubles; the row-parallel product's
// pending sum is completed and its sequence split over the freed axis where
// the local sequence halves (a reduce-scatter); dp's split stays.
// CHECK-LABEL: func.func @sequence_parallel
// CHECK-SAME: -> tensor<2x4x8xf32, #dist.tensor<#{{.*}}, [0, 1, -1]>>
// CHECK-NEXT: %[[G:.*]] = dist.reshard %arg0 : tensor<2x4x8xf32, #dist.tensor<#{{.*}}, [0, 1, -1]>> -> tensor<2x8x8xf32, #dist.tensor<#{{.*}}, [0, -1, -1]>>
// CHECK-NEXT: %[[H:.*]] = dist.matmul %[[G]], %arg1 : {{.*}} -> tensor<2x8x4xf32, #dist.tensor<#{{.*}}, [0, -1, 1]>>
// CHECK-NEXT: %[[Y:.*]] = dist.matmul %[[H]], %arg2 : {{.*}} -> tensor<2x8x8xf32, #dist.tensor<#{{.*}}, [0, -1, -1], partial = [1 : sum]>>
// CHECK-NEXT: %[[S:.*]] = dist.reshard %[[Y]] : {{.*}} -> tensor<2x4x8xf32, #dist.tensor<#{{.*}}, [0, 1, -1]>>
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[S]], %[[S]] : tensor<2x4x8xf32, #dist.tensor<#{{.*}}, [0, 1, -1]>>
// CHECK-NEXT: return %[[R]]
func.func @sequence_parallel(%x: tensor<2x4x8xf32, #dist.tensor<#mesh, [0, 1, -1]>>,
                             %w1: tensor<8x4xf32, #dist.tensor<#mesh, [-1, 1]>>,
                             %w2: tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>>)
    -> tensor<2x4x8xf32> attributes {dist.complete} {
  %g = dist.reshard %x : tensor<2x4x8xf32, #dist.tensor<#mesh, [0, 1, -1]>> -> tensor<2x8x8xf32>
  %h = dist.matmul %g, %w1 : tensor<2x8x8xf32>, tensor<8x4xf32, #dist.tensor<#mesh, [-1, 1]>> -> tensor<2x8x4xf32>
  %y = dist.matmul %h, %w2 : tensor<2x8x4xf32>, tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<2x8x8xf32>
  %s = dist.reshard %y : tensor<2x8x8xf32> -> tensor<2x4x8xf32>
  %r = arith.addf %s, %s : tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["tp"]>
// An op around which everything known is replicated (unencoded) decides
// what it leaves open replicated, in program order: the linalg.map's init,
// so %dy is replicated before the addition with a partial sum can pull it
// partial (which made it a partial sum completed again for the exp).
// CHECK-LABEL: func.func @replicated_first
// CHECK: %[[M:.*]] = linalg.map { arith.negf } ins(%{{.*}} : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT: math.exp %[[M]] : tensor<4x8xf32>
// CHECK-NEXT: %[[P:.*]] = dist.matmul
// CHECK-NEXT: %[[R:.*]] = dist.reshard %[[P]] : {{.*}} partial = [0 : sum]>> -> tensor<4x8xf32>
// CHECK-NEXT: arith.addf %[[M]], %[[R]] : tensor<4x8xf32>
func.func @replicated_first(%x: tensor<4x8xf32, #dist.tensor<#mesh, [-1, 0]>>,
                            %w: tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) attributes {dist.complete} {
  %y0 = dist.matmul %x, %w : tensor<4x8xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4x8xf32>
  // expected-remark @+1 {{completion: reshard of operand #0}}
  %y = math.tanh %y0 : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %dy = linalg.map { arith.negf } ins(%y : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>)
  %d1 = math.exp %dy : tensor<4x8xf32>
  %p = dist.matmul %x, %w : tensor<4x8xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4x8xf32>
  // expected-remark @+1 {{completion: reshard of operand #1}}
  %s = arith.addf %dy, %p : tensor<4x8xf32>
  return %d1, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["tp"]>
// A partial sum with several uses is completed once, where it is made: left
// partial, it would flow through the negation (linear) and be completed on
// both branches, for the tanh and for the exp.
// CHECK-LABEL: func.func @fan_out
// CHECK-NEXT: %[[Y:.*]] = dist.matmul {{.*}} -> tensor<4x8xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>>
// CHECK-NEXT: %[[R:.*]] = dist.reshard %[[Y]] : {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: math.tanh %[[R]] : tensor<4x8xf32>
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[R]] : tensor<4x8xf32>
// CHECK-NEXT: math.exp %[[N]] : tensor<4x8xf32>
// CHECK-NOT: dist.reshard
func.func @fan_out(%x: tensor<4x8xf32, #dist.tensor<#mesh, [-1, 0]>>,
                   %w: tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) attributes {dist.complete} {
  // expected-remark @+1 {{completion: reshard of result #0 from [-1, -1] partial [0 : sum] to replicated where it is made: its 2 uses take the complete sum}}
  %y = dist.matmul %x, %w : tensor<4x8xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4x8xf32>
  %a = math.tanh %y : tensor<4x8xf32>
  %n = arith.negf %y : tensor<4x8xf32>
  %c = math.exp %n : tensor<4x8xf32>
  return %a, %c : tensor<4x8xf32>, tensor<4x8xf32>
}
