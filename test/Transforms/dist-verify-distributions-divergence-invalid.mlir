// RUN: dist-opt %s --dist-verify-distributions -split-input-file -verify-diagnostics
// Each way a program could reach a collective on only some processes of its
// group, or pass a value that differs by process for a replicated one, with
// its diagnostic.

// The issue's case: only process 0 calls a function that issues an allreduce.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @sync(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1]>> {
  // expected-note @+1 {{@sync issues 'dist.allreduce' here}}
  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  return %r : tensor<4xf32, #dist.tensor<#mesh, [-1]>>
}
func.func @f(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %c, %c0 : index
  // expected-note @+1 {{the 'scf.if' is here}}
  scf.if %first {
    // expected-error @+1 {{'func.call' op calls a function that issues collectives over mesh axes [0], under a condition that differs along mesh axis 0 (mp) between the processes of its group: those that do not take this 'scf.if' would not make the call, and the group would deadlock}}
    %r = func.call @sync(%p) : (tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  }
  return
}

// -----

// Through two calls: the chain is shown down to the collective.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func private @sync(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1]>> {
  // expected-note @+1 {{@sync issues 'dist.allreduce' here}}
  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  return %r : tensor<4xf32, #dist.tensor<#mesh, [-1]>>
}
func.func private @mid(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-note @+1 {{@mid calls a function here}}
  %r = func.call @sync(%p) : (tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  return
}
func.func @f(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %c, %c0 : index
  // expected-note @+1 {{the 'scf.if' is here}}
  scf.if %first {
    // expected-error @+1 {{'func.call' op calls a function that issues collectives over mesh axes [0], under a condition that differs along mesh axis 0 (mp) between the processes of its group: those that do not take this 'scf.if' would not make the call, and the group would deadlock}}
    func.call @mid(%p) : (tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) -> ()
  }
  return
}

// -----

// Recursion: each level's call is under a condition on the coordinate.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @rec(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>, %n: index) {
  // expected-note @+1 {{@rec issues 'dist.allreduce' here}}
  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  %go = arith.cmpi ult, %c, %n : index
  // expected-note @+1 {{the 'scf.if' is here}}
  scf.if %go {
    %c1 = arith.constant 1 : index
    %m = arith.subi %n, %c1 : index
    // expected-error @+1 {{'func.call' op calls a function that issues collectives over mesh axes [0], under a condition that differs along mesh axis 0 (mp) between the processes of its group: those that do not take this 'scf.if' would not make the call, and the group would deadlock}}
    func.call @rec(%p, %m) : (tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>, index) -> ()
  }
  return
}

// -----

// A partial sum cast to a plain tensor and back to replicated: the
// allreduce is missing.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// expected-note @+1 {{it differs along mesh axis 0 (mp) from an argument of this function}}
func.func @launder(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1]>> {
  // expected-note @+1 {{the encoding was cast away here}}
  %plain = tensor.cast %p : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> to tensor<4xf32>
  // expected-error @+2 {{'tensor.cast' op gives the encoding #dist.tensor<#dist.mesh<shape = [2], names = ["mp"]>, [-1]> to a value whose distribution #dist.tensor<#dist.mesh<shape = [2], names = ["mp"]>, [-1], partial = [0 : sum]> was cast away: that changes the distribution without communication (cast back to the same encoding, or redistribute with a collective)}}
  // expected-error @+1 {{'tensor.cast' op result #0 differs between processes along mesh axis 0 (mp) but is declared #dist.tensor<#dist.mesh<shape = [2], names = ["mp"]>, [-1]>, the same on every process along it}}
  %r = tensor.cast %plain : tensor<4xf32> to tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  return %r : tensor<4xf32, #dist.tensor<#mesh, [-1]>>
}

// -----

// A shard cast away and back as a partial sum.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @launder_split(%x: tensor<4xf32, #dist.tensor<#mesh, [0]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> {
  // expected-note @+1 {{the encoding was cast away here}}
  %plain = tensor.cast %x : tensor<4xf32, #dist.tensor<#mesh, [0]>> to tensor<4xf32>
  // expected-error @+1 {{'tensor.cast' op gives the encoding #dist.tensor<#dist.mesh<shape = [2], names = ["mp"]>, [-1], partial = [0 : sum]> to a value whose distribution #dist.tensor<#dist.mesh<shape = [2], names = ["mp"]>, [0]> was cast away: that changes the distribution without communication (cast back to the same encoding, or redistribute with a collective)}}
  %r = tensor.cast %plain : tensor<4xf32> to tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
  return %r : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
}

// -----

// Laundering through a call: the plain value comes back from a function.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func private @strip(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) -> tensor<4xf32> {
  // expected-note @+1 {{the encoding was cast away here}}
  %plain = tensor.cast %p : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> to tensor<4xf32>
  return %plain : tensor<4xf32>
}
func.func @launder_call(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : max]>> {
  %plain = func.call @strip(%p) : (tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) -> tensor<4xf32>
  // expected-error @+1 {{'tensor.cast' op gives the encoding #dist.tensor<#dist.mesh<shape = [2], names = ["mp"]>, [-1], partial = [0 : max]> to a value whose distribution #dist.tensor<#dist.mesh<shape = [2], names = ["mp"]>, [-1], partial = [0 : sum]> was cast away: that changes the distribution without communication (cast back to the same encoding, or redistribute with a collective)}}
  %r = tensor.cast %plain : tensor<4xf32> to tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : max]>>
  return %r : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : max]>>
}

// -----

// cf: the allreduce's block is reached only by process 0.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @cf_branch(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %c, %c0 : index
  // expected-note @+1 {{the 'cf.cond_br' is here}}
  cf.cond_br %first, ^sync, ^done
^sync:
  // expected-error @+1 {{'dist.allreduce' op is issued under a condition that differs along mesh axis 0 (mp) between the processes of its group: those that do not take this 'cf.cond_br' would not issue it, and the group would deadlock}}
  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  cf.br ^done
^done:
  return
}

// -----

// A flag chosen by a process-dependent branch and merged at a join through
// plain cf.br's of constants: process 0 alone would issue the allreduce.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @cf_join(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %c, %c0 : index
  %true = arith.constant true
  %false = arith.constant false
  cf.cond_br %first, ^a, ^b
^a:
  cf.br ^join(%true : i1)
^b:
  cf.br ^join(%false : i1)
^join(%flag: i1):
  // expected-note @+1 {{the 'cf.cond_br' is here}}
  cf.cond_br %flag, ^sync, ^done
^sync:
  // expected-error @+1 {{'dist.allreduce' op is issued under a condition that differs along mesh axis 0 (mp) between the processes of its group: those that do not take this 'cf.cond_br' would not issue it, and the group would deadlock}}
  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  cf.br ^done
^done:
  return
}

// -----

// The same join reached through a longer path on one side, its flag passed
// on through one more block: it still depends on the side taken.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @cf_join_deep(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %c, %c0 : index
  %true = arith.constant true
  %false = arith.constant false
  cf.cond_br %first, ^a, ^b
^a:
  cf.br ^a2
^a2:
  cf.br ^join(%true : i1)
^b:
  cf.br ^join(%false : i1)
^join(%flag: i1):
  cf.br ^test(%flag : i1)
^test(%f: i1):
  // expected-note @+1 {{the 'cf.cond_br' is here}}
  cf.cond_br %f, ^sync, ^done
^sync:
  // expected-error @+1 {{'dist.allreduce' op is issued under a condition that differs along mesh axis 0 (mp)}}
  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  cf.br ^done
^done:
  return
}

// -----

// cf loop: the trip count is the coordinate.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @cf_loop(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  cf.br ^head(%c0 : index)
^head(%i: index):
  %more = arith.cmpi ult, %i, %c : index
  // expected-note @+1 {{the 'cf.cond_br' is here}}
  cf.cond_br %more, ^body, ^done
^body:
  // expected-error @+1 {{'dist.allreduce' op is issued under a condition that differs along mesh axis 0 (mp) between the processes of its group: those that do not take this 'cf.cond_br' would not issue it, and the group would deadlock}}
  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  %next = arith.addi %i, %c1 : index
  cf.br ^head(%next : index)
^done:
  return
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
#set = affine_set<(d0) : (d0 == 0)>
func.func @affine_if(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  // expected-note @+1 {{the 'affine.if' is here}}
  affine.if #set(%c) {
    // expected-error @+1 {{'dist.allreduce' op is issued under a condition that differs along mesh axis 0 (mp) between the processes of its group: those that do not take this 'affine.if' would not issue it, and the group would deadlock}}
    %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  }
  return
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @affine_for(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  // expected-note @+1 {{the 'affine.for' is here}}
  affine.for %i = 0 to %c {
    // expected-error @+1 {{'dist.allreduce' op is issued under a condition that differs along mesh axis 0 (mp) between the processes of its group: those that do not take this 'affine.for' would not issue it, and the group would deadlock}}
    %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  }
  return
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @while(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-note @+1 {{the 'scf.while' is here}}
  %n = scf.while (%i = %c0) : (index) -> index {
    %more = arith.cmpi ult, %i, %c : index
    scf.condition(%more) %i : index
  } do {
  ^bb0(%i: index):
    // expected-error @+1 {{'dist.allreduce' op is issued under a condition that differs along mesh axis 0 (mp) between the processes of its group: those that do not take this 'scf.while' would not issue it, and the group would deadlock}}
    %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
    %next = arith.addi %i, %c1 : index
    scf.yield %next : index
  }
  return
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @index_switch(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  // expected-note @+1 {{the 'scf.index_switch' is here}}
  scf.index_switch %c
  case 0 {
    // expected-error @+1 {{'dist.allreduce' op is issued under a condition that differs along mesh axis 0 (mp) between the processes of its group: those that do not take this 'scf.index_switch' would not issue it, and the group would deadlock}}
    %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
    scf.yield
  }
  default {
  }
  return
}

// -----

// An op of a dialect dist has no special handling for.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @unknown_region(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-note @+1 {{the 'omp.parallel' is here}}
  omp.parallel {
    // expected-error @+1 {{'dist.allreduce' op is issued inside 'omp.parallel', which dist cannot tell runs once on every process: the processes of a group might issue different collectives and deadlock}}
    %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
    omp.terminator
  }
  return
}

// -----

// A coordinate splat into a tensor declared replicated.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @splat(%x: tensor<4xindex, #dist.tensor<#mesh, [-1]>>) -> tensor<4xindex, #dist.tensor<#mesh, [-1]>> {
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  // expected-error @+1 {{'tensor.splat' op result #0 differs between processes along mesh axis 0 (mp) but is declared #dist.tensor<#dist.mesh<shape = [2], names = ["mp"]>, [-1]>, the same on every process along it}}
  %s = tensor.splat %c : tensor<4xindex, #dist.tensor<#mesh, [-1]>>
  return %s : tensor<4xindex, #dist.tensor<#mesh, [-1]>>
}

// -----

// Ids that differ by process, taken as the same on every process by the
// embedding.
#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "mp"]>
func.func @plain_operand(%w: tensor<8x4xf32, #dist.tensor<#mesh, [1, -1]>>, %start: index) -> tensor<2xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>> {
  // expected-note @+1 {{it differs along mesh axis 0 (dp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  %i = arith.index_cast %c : index to i64
  %ids = tensor.splat %i : tensor<2xi64>
  // expected-error @+1 {{'dist.c_embedding' op operand #0 has no distribution encoding, so its rule takes it as replicated, but it differs between processes along mesh axis 0 (dp): declare its distribution (tensor.cast to a #dist.tensor type)}}
  %e = dist.c_embedding %ids, %w start = %start : tensor<2xi64>, tensor<8x4xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<2x4xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>
  %z = arith.constant dense<0.0> : tensor<2xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  return %z : tensor<2xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
}

// -----

// An element of a shard decides: each process reads its own.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// expected-note @+1 {{it differs along mesh axis 0 (mp) from an argument of this function}}
func.func @extract_condition(%x: tensor<4xi1, #dist.tensor<#mesh, [0]>>, %p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  %c0 = arith.constant 0 : index
  %plain = tensor.cast %x : tensor<4xi1, #dist.tensor<#mesh, [0]>> to tensor<4xi1>
  %b = tensor.extract %plain[%c0] : tensor<4xi1>
  // expected-note @+1 {{the 'scf.if' is here}}
  scf.if %b {
    // expected-error @+1 {{'dist.allreduce' op is issued under a condition that differs along mesh axis 0 (mp) between the processes of its group: those that do not take this 'scf.if' would not issue it, and the group would deadlock}}
    %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  }
  return
}

// -----

// The coordinate reaches the condition through a loop-carried value.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @loop_carried(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %c0) -> index {
    %n = arith.addi %a, %c : index
    scf.yield %n : index
  }
  %big = arith.cmpi ugt, %acc, %c1 : index
  // expected-note @+1 {{the 'scf.if' is here}}
  scf.if %big {
    // expected-error @+1 {{'dist.allreduce' op is issued under a condition that differs along mesh axis 0 (mp) between the processes of its group: those that do not take this 'scf.if' would not issue it, and the group would deadlock}}
    %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  }
  return
}

// -----

// The condition differs along one of the two axes of the group.
#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "mp"]>
func.func @two_axes(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum, 1 : sum]>>) {
  // expected-note @+1 {{it differs along mesh axis 1 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 1
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %c, %c0 : index
  // expected-note @+1 {{the 'scf.if' is here}}
  scf.if %first {
    // expected-error @+1 {{'dist.allreduce' op is issued under a condition that differs along mesh axis 1 (mp) between the processes of its group: those that do not take this 'scf.if' would not issue it, and the group would deadlock}}
    %r = dist.allreduce %p on #mesh axes = [0, 1] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum, 1 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  }
  return
}

// -----

// The condition differs along an axis of another mesh.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
#other = #dist.mesh<shape = [2], names = ["pp"]>
func.func @other_mesh(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-note @+1 {{it differs along mesh axis 0 (pp) from this process's coordinate here}}
  %c = dist.process_coord #other axis = 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %c, %c0 : index
  // expected-note @+1 {{the 'scf.if' is here}}
  scf.if %first {
    // expected-error @+1 {{'dist.allreduce' op is issued under a condition that differs along mesh axis 0 (pp) between the processes of its group: those that do not take this 'scf.if' would not issue it, and the group would deadlock}}
    %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  }
  return
}

// -----

// A value computed in a block placed before the block that defines what it
// uses.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @block_order(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  cf.br ^def
^use(%first: i1):
  // expected-note @+1 {{the 'cf.cond_br' is here}}
  cf.cond_br %first, ^sync, ^done
^sync:
  // expected-error @+1 {{'dist.allreduce' op is issued under a condition that differs along mesh axis 0 (mp) between the processes of its group: those that do not take this 'cf.cond_br' would not issue it, and the group would deadlock}}
  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  cf.br ^done
^done:
  return
^def:
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %b = arith.cmpi eq, %c, %c0 : index
  cf.br ^use(%b : i1)
}

// -----

// An upstream op's rule takes a scalar operand as the same everywhere: a
// select on this process's coordinate...
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @select_on_coordinate(%a: tensor<4xf32, #dist.tensor<#mesh, [-1]>>, %b: tensor<4xf32, #dist.tensor<#mesh, [-1]>>) {
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  %z = arith.constant 0 : index
  %first = arith.cmpi eq, %c, %z : index
  // expected-error @+1 {{'arith.select' op operand #0 is a scalar that differs between processes along mesh axis 0 (mp), which its rule takes as the same on every process: make it a tensor with its distribution}}
  %r = arith.select %first, %a, %b : tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  return
}

// -----

// ...and a fill with it.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @fill_with_coordinate(%e: tensor<4xf32, #dist.tensor<#mesh, [-1]>>) {
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  %ci = arith.index_cast %c : index to i32
  %cf = arith.sitofp %ci : i32 to f32
  // expected-error @+1 {{'linalg.fill' op operand #0 is a scalar that differs between processes along mesh axis 0 (mp)}}
  %f = linalg.fill ins(%cf : f32) outs(%e : tensor<4xf32, #dist.tensor<#mesh, [-1]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  return
}

// -----

// A shard cast away, viewed with another rank and cast back as replicated:
// only replicated to replicated passes a reshape.
#mesh = #dist.mesh<shape = [2], names = ["tp"]>
// expected-note @+1 {{it differs along mesh axis 0 (tp) from an argument of this function}}
func.func @split_through_reshape(%x: tensor<4x4xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<2x2x4xf32, #dist.tensor<#mesh, [-1, -1, -1]>> {
  // expected-note @+1 {{the encoding was cast away here}}
  %plain = tensor.cast %x : tensor<4x4xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<4x4xf32>
  %v = tensor.expand_shape %plain [[0, 1], [2]] output_shape [2, 2, 4] : tensor<4x4xf32> into tensor<2x2x4xf32>
  // expected-error @+2 {{'tensor.cast' op gives the encoding #dist.tensor<#dist.mesh<shape = [2], names = ["tp"]>, [-1, -1, -1]> to a value whose distribution #dist.tensor<#dist.mesh<shape = [2], names = ["tp"]>, [0, -1]> was cast away}}
  // expected-error @+1 {{differs between processes}}
  %r = tensor.cast %v : tensor<2x2x4xf32> to tensor<2x2x4xf32, #dist.tensor<#mesh, [-1, -1, -1]>>
  return %r : tensor<2x2x4xf32, #dist.tensor<#mesh, [-1, -1, -1]>>
}
