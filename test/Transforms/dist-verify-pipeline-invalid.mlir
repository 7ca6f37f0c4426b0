// RUN: dist-opt %s -split-input-file --dist-verify-distributions -verify-diagnostics

// Hand-broken schedules: each is rejected at compile time, at the transfer
// that cannot complete.

// A send without its receive.
#mesh = #dist.mesh<shape = [2], names = ["pp"]>
func.func @send_without_receive(%x: tensor<4xf32>) {
  %s = dist.process_coord #mesh axis = 0
  scf.index_switch %s
  case 0 {
    dist.send %x to 1 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    // expected-error @+1 {{'dist.send' op in stage 0 is never received: stage 1 has no dist.recv from stage 0 with tag 1}}
    dist.send %x to 1 on #mesh axis = 0 tag = 1 : tensor<4xf32>
    scf.yield
  }
  default {
    %a = dist.recv from 0 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    scf.yield
  }
  return
}

// -----

// Receives in swapped order: stage 0 blocks sending microbatch 0 while
// stage 1 blocks receiving microbatch 1.
#mesh = #dist.mesh<shape = [2], names = ["pp"]>
func.func @swapped_receives(%x0: tensor<4xf32>, %x1: tensor<4xf32>) {
  %s = dist.process_coord #mesh axis = 0
  scf.index_switch %s
  case 0 {
    // expected-error @+1 {{'dist.send' op deadlocks: stage 0 blocks here sending tag 0 to stage 1, and no order of the stages' transfers lets it go on (a send returns only once its receive is posted)}}
    dist.send %x0 to 1 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    dist.send %x1 to 1 on #mesh axis = 0 tag = 1 : tensor<4xf32>
    scf.yield
  }
  default {
    // expected-note @+1 {{stage 1 blocks here receiving tag 1 from stage 0}}
    %a1 = dist.recv from 0 on #mesh axis = 0 tag = 1 : tensor<4xf32>
    %a0 = dist.recv from 0 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    scf.yield
  }
  return
}

// -----

// A stage that skips a microbatch: stage 1 runs microbatch 0 only, so
// stage 0's send of microbatch 1 finds no receive.
#mesh = #dist.mesh<shape = [2], names = ["pp"]>
func.func @skipped_microbatch(%x0: tensor<4xf32>, %x1: tensor<4xf32>) {
  %s = dist.process_coord #mesh axis = 0
  scf.index_switch %s
  case 0 {
    dist.send %x0 to 1 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    %g0 = dist.recv from 1 on #mesh axis = 0 tag = 100 : tensor<4xf32>
    // expected-error @+1 {{'dist.send' op in stage 0 is never received: stage 1 has no dist.recv from stage 0 with tag 1}}
    dist.send %x1 to 1 on #mesh axis = 0 tag = 1 : tensor<4xf32>
    %g1 = dist.recv from 1 on #mesh axis = 0 tag = 101 : tensor<4xf32>
    scf.yield
  }
  default {
    %a0 = dist.recv from 0 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    dist.send %a0 to 0 on #mesh axis = 0 tag = 100 : tensor<4xf32>
    scf.yield
  }
  return
}

// -----

// A cycle between two stages: each sends first, with blocking receives.
#mesh = #dist.mesh<shape = [2, 2], names = ["pp", "dp"]>
func.func @cycle(%x: tensor<4xf32>) {
  %s = dist.process_coord #mesh axis = 0
  scf.index_switch %s
  case 0 {
    // expected-error @+1 {{'dist.send' op deadlocks: stage 0 blocks here sending tag 0 to stage 1}}
    dist.send %x to 1 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    %g = dist.recv from 1 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    scf.yield
  }
  case 1 {
    // expected-note @+1 {{stage 1 blocks here sending tag 0 to stage 0}}
    dist.send %x to 0 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    %a = dist.recv from 0 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    scf.yield
  }
  default {
    scf.yield
  }
  return
}

// -----

// A mismatched shape: stage 1 receives another shape than stage 0 sends.
#mesh = #dist.mesh<shape = [2], names = ["pp"]>
func.func @mismatched_shape(%x: tensor<4xf32>) {
  %s = dist.process_coord #mesh axis = 0
  scf.index_switch %s
  case 0 {
    // expected-note @+1 {{the send}}
    dist.send %x to 1 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    scf.yield
  }
  default {
    // expected-error @+1 {{'dist.recv' op in stage 1 receives 'tensor<8xf32>' but stage 0 sends 'tensor<4xf32>' with tag 0}}
    %a = dist.recv from 0 on #mesh axis = 0 tag = 0 : tensor<8xf32>
    scf.yield
  }
  return
}

// -----

// A wait that comes before the send it needs: the future does not help
// when the stage waits before sending what its peer waits for.
#mesh = #dist.mesh<shape = [2], names = ["pp"]>
func.func @wait_too_early(%x: tensor<4xf32>) {
  %s = dist.process_coord #mesh axis = 0
  scf.index_switch %s
  case 0 {
    %f = dist.recv from 1 on #mesh axis = 0 tag = 1 : !dist.future<tensor<4xf32>>
    // expected-error @+1 {{'dist.wait' op deadlocks: stage 0 blocks here waiting for tag 1 from stage 1}}
    %g = dist.wait %f : !dist.future<tensor<4xf32>>
    dist.send %x to 1 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    scf.yield
  }
  default {
    // expected-note @+1 {{stage 1 blocks here receiving tag 0 from stage 0}}
    %a = dist.recv from 0 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    dist.send %a to 0 on #mesh axis = 0 tag = 1 : tensor<4xf32>
    scf.yield
  }
  return
}

// -----

// A receive nobody sends.
#mesh = #dist.mesh<shape = [2], names = ["pp"]>
func.func @never_sent() {
  %s = dist.process_coord #mesh axis = 0
  scf.index_switch %s
  case 0 {
    scf.yield
  }
  default {
    // expected-error @+1 {{'dist.recv' op in stage 1 is never sent: stage 0 has no dist.send to stage 1 with tag 4}}
    %a = dist.recv from 0 on #mesh axis = 0 tag = 4 : tensor<4xf32>
    scf.yield
  }
  return
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["pp"]>
func.func @tag_reused(%x: tensor<4xf32>) {
  %s = dist.process_coord #mesh axis = 0
  scf.index_switch %s
  case 0 {
    // expected-note @+1 {{first used here}}
    dist.send %x to 1 on #mesh axis = 0 tag = 2 : tensor<4xf32>
    // expected-error @+1 {{'dist.send' op in stage 0 reuses tag 2 between stages 0 and 1; a tag names one message}}
    dist.send %x to 1 on #mesh axis = 0 tag = 2 : tensor<4xf32>
    scf.yield
  }
  default {
    scf.yield
  }
  return
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["pp"]>
func.func @own_stage(%x: tensor<4xf32>) {
  %s = dist.process_coord #mesh axis = 0
  scf.index_switch %s
  case 1 {
    // expected-error @+1 {{'dist.send' op in stage 1 names its own stage as the peer}}
    dist.send %x to 1 on #mesh axis = 0 tag = 2 : tensor<4xf32>
    scf.yield
  }
  default {
    scf.yield
  }
  return
}

// -----

// Outside a stage, every process would send: stage 1 to itself.
#mesh = #dist.mesh<shape = [2], names = ["pp"]>
func.func @not_in_a_stage(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.send' op is not in a stage's program: a transfer must be directly in a case of an scf.index_switch on dist.process_coord axis = 0 of its mesh}}
  dist.send %x to 1 on #mesh axis = 0 tag = 0 : tensor<4xf32>
  return
}

// -----

// A switch on another axis's coordinate is not a stage of this one.
#mesh = #dist.mesh<shape = [2, 2], names = ["pp", "dp"]>
func.func @other_axis(%x: tensor<4xf32>) {
  %s = dist.process_coord #mesh axis = 1
  scf.index_switch %s
  case 0 {
    // expected-error @+1 {{'dist.send' op is not in a stage's program}}
    dist.send %x to 1 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    scf.yield
  }
  default {
    scf.yield
  }
  return
}

// -----

// Nested in a loop of a stage: the replay could not count its messages.
#mesh = #dist.mesh<shape = [2], names = ["pp"]>
func.func @nested(%x: tensor<4xf32>) {
  %s = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  scf.index_switch %s
  case 0 {
    scf.for %i = %c0 to %c2 step %c1 {
      // expected-error @+1 {{'dist.send' op is not in a stage's program}}
      dist.send %x to 1 on #mesh axis = 0 tag = 0 : tensor<4xf32>
    }
    scf.yield
  }
  default {
    scf.yield
  }
  return
}
