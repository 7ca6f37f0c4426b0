// RUN: dist-opt %s --dist-verify-distributions -split-input-file | FileCheck %s
// What the divergence and varying checks accept: control that the whole
// group of a collective agrees on, and the uses of values that differ by
// process that their encodings declare.

// The condition differs along dp only; the allreduce's groups are along mp,
// and every process of one group takes the same side.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// CHECK-LABEL: func @condition_off_group
func.func @condition_off_group(%p: tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) {
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %c, %c0 : index
  // CHECK: scf.if
  // CHECK-NEXT: dist.allreduce %{{.*}} on #{{.*}} axes = [1] reduce = sum
  scf.if %first {
    %r = dist.allreduce %p on #mesh axes = [1] reduce = sum : tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>> -> tensor<8xf32, #dist.tensor<#mesh, [-1]>>
  }
  return
}

// -----

// A function that issues collectives over mp, called under a condition on
// dp.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func private @sync(%p: tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) -> tensor<8xf32, #dist.tensor<#mesh, [-1]>> {
  %r = dist.allreduce %p on #mesh axes = [1] reduce = sum : tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>> -> tensor<8xf32, #dist.tensor<#mesh, [-1]>>
  return %r : tensor<8xf32, #dist.tensor<#mesh, [-1]>>
}
// CHECK-LABEL: func @call_off_group
func.func @call_off_group(%p: tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) {
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %c, %c0 : index
  // CHECK: scf.if
  // CHECK-NEXT: call @sync
  scf.if %first {
    %r = func.call @sync(%p) : (tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) -> tensor<8xf32, #dist.tensor<#mesh, [-1]>>
  }
  // Unconditional calls, and calls in loops every process runs alike.
  // CHECK: call @sync
  %r = func.call @sync(%p) : (tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) -> tensor<8xf32, #dist.tensor<#mesh, [-1]>>
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  // CHECK: scf.for
  // CHECK-NEXT: call @sync
  scf.for %i = %c0 to %c3 step %c1 {
    %s = func.call @sync(%p) : (tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) -> tensor<8xf32, #dist.tensor<#mesh, [-1]>>
  }
  return
}

// -----

// The embedding's start index is the legitimate use of a coordinate: it
// is a plain index, and what it computes is declared partial over mp.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// CHECK-LABEL: func @embedding_start
func.func @embedding_start(%ids: tensor<4x16xi64, #dist.tensor<#mesh, [0, -1]>>, %w: tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>) -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>> {
  %c = dist.process_coord #mesh axis = 1
  %rows = arith.constant 8000 : index
  %start = arith.muli %c, %rows : index
  // CHECK: dist.c_embedding %{{.*}}, %{{.*}} start = %{{.*}}
  %e = dist.c_embedding %ids, %w start = %start : tensor<4x16xi64, #dist.tensor<#mesh, [0, -1]>>, tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1], partial = [1 : sum]>>
  // CHECK-NEXT: dist.allreduce %{{.*}} on #{{.*}} axes = [1] reduce = sum
  %r = dist.allreduce %e on #mesh axes = [1] reduce = sum : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1], partial = [1 : sum]>> -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
  return %r : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
}

// -----

// A cast away and back to the same encoding, and a value that differs by
// process where its encoding says it does (a shard made from a coordinate).
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// CHECK-LABEL: func @casts
func.func @casts(%x: tensor<4xf32, #dist.tensor<#mesh, [0]>>) -> (tensor<4xf32, #dist.tensor<#mesh, [0]>>, tensor<2xindex, #dist.tensor<#mesh, [0]>>) {
  // CHECK: tensor.cast %{{.*}} : tensor<4xf32, #dist.tensor<#{{.*}}, [0]>> to tensor<4xf32>
  // CHECK-NEXT: tensor.cast %{{.*}} : tensor<4xf32> to tensor<4xf32, #dist.tensor<#{{.*}}, [0]>>
  %plain = tensor.cast %x : tensor<4xf32, #dist.tensor<#mesh, [0]>> to tensor<4xf32>
  %back = tensor.cast %plain : tensor<4xf32> to tensor<4xf32, #dist.tensor<#mesh, [0]>>
  %c = dist.process_coord #mesh axis = 0
  // CHECK: tensor.splat %{{.*}} : tensor<2xindex, #dist.tensor<#{{.*}}, [0]>>
  %s = tensor.splat %c : tensor<2xindex, #dist.tensor<#mesh, [0]>>
  return %back, %s : tensor<4xf32, #dist.tensor<#mesh, [0]>>, tensor<2xindex, #dist.tensor<#mesh, [0]>>
}

// -----

// A partial cast away and back as itself, then reduced: the allreduce's
// result is replicated, and casting that away and back again is no
// laundering (the cast-away of the partial is not carried past the reduce).
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// CHECK-LABEL: func @reduced_after_round_trip
func.func @reduced_after_round_trip(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1]>> {
  %u = tensor.cast %p : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> to tensor<4xf32>
  %t = tensor.cast %u : tensor<4xf32> to tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
  // CHECK: dist.allreduce
  // CHECK-NEXT: tensor.cast %{{.*}} : tensor<4xf32, #dist.tensor<#{{.*}}, [-1]>> to tensor<4xf32>
  // CHECK-NEXT: tensor.cast %{{.*}} : tensor<4xf32> to tensor<4xf32, #dist.tensor<#{{.*}}, [-1]>>
  %r = dist.allreduce %t on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  %v = tensor.cast %r : tensor<4xf32, #dist.tensor<#mesh, [-1]>> to tensor<4xf32>
  %w = tensor.cast %v : tensor<4xf32> to tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  return %w : tensor<4xf32, #dist.tensor<#mesh, [-1]>>
}

// -----

// After an allreduce the group agrees: its value may decide control.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// CHECK-LABEL: func @agreed_condition
func.func @agreed_condition(%p: tensor<4xi32, #dist.tensor<#mesh, [-1], partial = [0 : max]>>, %q: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  %r = dist.allreduce %p on #mesh axes = [0] reduce = max : tensor<4xi32, #dist.tensor<#mesh, [-1], partial = [0 : max]>> -> tensor<4xi32, #dist.tensor<#mesh, [-1]>>
  %plain = tensor.cast %r : tensor<4xi32, #dist.tensor<#mesh, [-1]>> to tensor<4xi32>
  %c0 = arith.constant 0 : index
  %e = tensor.extract %plain[%c0] : tensor<4xi32>
  %zero = arith.constant 0 : i32
  %go = arith.cmpi sgt, %e, %zero : i32
  // CHECK: scf.if
  // CHECK-NEXT: dist.allreduce
  scf.if %go {
    %s = dist.allreduce %q on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  }
  return
}

// -----

// Local shapes are the same on every process: a shard's size may bound a
// loop; and a coordinate along an axis of size 1 is the same everywhere.
#mesh = #dist.mesh<shape = [1, 2], names = ["pp", "mp"]>
// CHECK-LABEL: func @uniform
func.func @uniform(%x: tensor<?xf32, #dist.tensor<#mesh, [1]>>, %p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32, #dist.tensor<#mesh, [1]>>
  // CHECK: scf.for
  // CHECK-NEXT: dist.allreduce
  scf.for %i = %c0 to %n step %c1 {
    %r = dist.allreduce %p on #mesh axes = [1] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  }
  %pp = dist.process_coord #mesh axis = 0
  %first = arith.cmpi eq, %pp, %c0 : index
  // CHECK: scf.if
  // CHECK-NEXT: dist.allreduce
  scf.if %first {
    %r = dist.allreduce %p on #mesh axes = [1] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  }
  return
}

// -----

// A collective after the two sides of a branch join: every process of the
// group reaches it, whichever side it took.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// CHECK-LABEL: func @after_join
func.func @after_join(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %c, %c0 : index
  cf.cond_br %first, ^a, ^b
^a:
  cf.br ^join
^b:
  cf.br ^join
^join:
  // CHECK: dist.allreduce
  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  return
}

// -----

// Both sides forward the same value to the join, and a branch after a
// varying one is merged before the loop's header: the flags that decide the
// collectives are the same on every process.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// CHECK-LABEL: func @uniform_join
func.func @uniform_join(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>, %go: i1) {
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %first = arith.cmpi eq, %c, %c0 : index
  cf.cond_br %first, ^a, ^b
^a:
  cf.br ^join(%go : i1)
^b:
  cf.br ^join(%go : i1)
^join(%flag: i1):
  cf.cond_br %flag, ^sync, ^head(%c0 : index)
^sync:
  // CHECK: dist.allreduce
  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  cf.br ^head(%c0 : index)
^head(%i: index):
  %more = arith.cmpi ult, %i, %c3 : index
  cf.cond_br %more, ^body, ^done
^body:
  // A varying branch inside the loop, merged at the latch.
  cf.cond_br %first, ^left, ^latch
^left:
  cf.br ^latch
^latch:
  // CHECK: dist.allreduce
  %s = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  %next = arith.addi %i, %c1 : index
  cf.br ^head(%next : index)
^done:
  return
}

// -----

// Control that differs by process may choose between shards: the result is
// declared split along that axis.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// CHECK-LABEL: func @select_shard
func.func @select_shard(%x: tensor<4xf32, #dist.tensor<#mesh, [0]>>, %y: tensor<4xf32, #dist.tensor<#mesh, [0]>>) -> tensor<4xf32, #dist.tensor<#mesh, [0]>> {
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %c, %c0 : index
  // CHECK: scf.if %{{.*}} -> (tensor<4xf32, #dist.tensor<#{{.*}}, [0]>>)
  %r = scf.if %first -> tensor<4xf32, #dist.tensor<#mesh, [0]>> {
    scf.yield %x : tensor<4xf32, #dist.tensor<#mesh, [0]>>
  } else {
    scf.yield %y : tensor<4xf32, #dist.tensor<#mesh, [0]>>
  }
  return %r : tensor<4xf32, #dist.tensor<#mesh, [0]>>
}

// -----

// A replicated value cast away, viewed with another rank and cast back as
// replicated: the lowering of a reshard from a plain [b * s, h] product
// viewed as [b, s, h] writes this; replicated stays replicated through the
// reshape.
#mesh = #dist.mesh<shape = [2], names = ["tp"]>
// CHECK-LABEL: func @replicated_through_reshape
func.func @replicated_through_reshape(%x: tensor<8x4xf32, #dist.tensor<#mesh, [-1, -1]>>) -> tensor<2x4x4xf32, #dist.tensor<#mesh, [-1, -1, -1]>> {
  // CHECK: tensor.expand_shape
  // CHECK-NEXT: tensor.cast %{{.*}} : tensor<2x4x4xf32> to tensor<2x4x4xf32, #dist.tensor<#{{.*}}, [-1, -1, -1]>>
  %plain = tensor.cast %x : tensor<8x4xf32, #dist.tensor<#mesh, [-1, -1]>> to tensor<8x4xf32>
  %v = tensor.expand_shape %plain [[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf32> into tensor<2x4x4xf32>
  %r = tensor.cast %v : tensor<2x4x4xf32> to tensor<2x4x4xf32, #dist.tensor<#mesh, [-1, -1, -1]>>
  return %r : tensor<2x4x4xf32, #dist.tensor<#mesh, [-1, -1, -1]>>
}
