// RUN: dist-opt %s --dist-verify-distributions | FileCheck %s

// Transfers that a rendezvous replay finishes are accepted as they are.

#mesh = #dist.mesh<shape = [3, 2], names = ["pp", "dp"]>

// 1F1B on three stages, two microbatches: every receive is posted (a
// future) before the action ahead of the one that reads it, so the
// blocking sends of a stage's forward and its peer's backward cross.
// CHECK-LABEL: func @one_f_one_b
// CHECK: scf.index_switch
// CHECK: dist.send
func.func @one_f_one_b(%x0: tensor<4xf32>, %x1: tensor<4xf32>) -> tensor<4xf32> {
  %s = dist.process_coord #mesh axis = 0
  %r = scf.index_switch %s -> tensor<4xf32>
  case 0 {
    %g0f = dist.recv from 1 on #mesh axis = 0 tag = 100 : !dist.future<tensor<4xf32>>
    dist.send %x0 to 1 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    %g1f = dist.recv from 1 on #mesh axis = 0 tag = 101 : !dist.future<tensor<4xf32>>
    dist.send %x1 to 1 on #mesh axis = 0 tag = 1 : tensor<4xf32>
    %g0 = dist.wait %g0f : !dist.future<tensor<4xf32>>
    %g1 = dist.wait %g1f : !dist.future<tensor<4xf32>>
    %sum = arith.addf %g0, %g1 : tensor<4xf32>
    scf.yield %sum : tensor<4xf32>
  }
  case 1 {
    %a0f = dist.recv from 0 on #mesh axis = 0 tag = 0 : !dist.future<tensor<4xf32>>
    %a0 = dist.wait %a0f : !dist.future<tensor<4xf32>>
    %a1f = dist.recv from 0 on #mesh axis = 0 tag = 1 : !dist.future<tensor<4xf32>>
    %g0f = dist.recv from 2 on #mesh axis = 0 tag = 100 : !dist.future<tensor<4xf32>>
    dist.send %a0 to 2 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    %a1 = dist.wait %a1f : !dist.future<tensor<4xf32>>
    dist.send %a1 to 2 on #mesh axis = 0 tag = 1 : tensor<4xf32>
    %g0 = dist.wait %g0f : !dist.future<tensor<4xf32>>
    dist.send %g0 to 0 on #mesh axis = 0 tag = 100 : tensor<4xf32>
    %g1 = dist.recv from 2 on #mesh axis = 0 tag = 101 : tensor<4xf32>
    dist.send %g1 to 0 on #mesh axis = 0 tag = 101 : tensor<4xf32>
    scf.yield %g1 : tensor<4xf32>
  }
  default {
    %a0 = dist.recv from 1 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    dist.send %a0 to 1 on #mesh axis = 0 tag = 100 : tensor<4xf32>
    %a1 = dist.recv from 1 on #mesh axis = 0 tag = 1 : tensor<4xf32>
    dist.send %a1 to 1 on #mesh axis = 0 tag = 101 : tensor<4xf32>
    scf.yield %a1 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
