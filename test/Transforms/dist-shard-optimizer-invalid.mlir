// RUN: dist-opt %s --dist-shard-optimizer -split-input-file -verify-diagnostics
// RUN: not dist-opt %s --dist-shard-optimizer=stage=3 -split-input-file 2>&1 | FileCheck %s --check-prefix=STAGE

// STAGE: --dist-shard-optimizer: stage must be 1 or 2, got 3

#mesh = #dist.mesh<shape = [2], names = ["dp"]>
!W = tensor<4xf32, #dist.tensor<#mesh, [-1]>>
func.func @state_not_argument(%w: !W {dist.param = "w"}, %g: !W) -> (!W, !W {dist.state = "w"}) {
  %v = arith.constant dense<0.0> : !W
  // expected-error @+1 {{operand #2 is optimizer state: to shard it, it must be an argument of the function marked 'dist.state' that only this update reads}}
  %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9 : (!W, !W, !W) -> (!W, !W)
  return %w1, %v1 : !W, !W
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["dp"]>
!W = tensor<4xf32, #dist.tensor<#mesh, [-1]>>
func.func @state_unmarked(%w: !W {dist.param = "w"}, %v: !W, %g: !W) -> (!W, !W {dist.state = "w"}) {
  // expected-error @+1 {{operand #2 is optimizer state}}
  %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9 : (!W, !W, !W) -> (!W, !W)
  return %w1, %v1 : !W, !W
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["dp"]>
!W = tensor<4xf32, #dist.tensor<#mesh, [-1]>>
func.func @state_read_elsewhere(%w: !W {dist.param = "w"}, %v: !W {dist.state = "w"}, %g: !W)
    -> (!W, !W {dist.state = "w"}, !W) {
  // The whole state would be needed after all.
  // expected-error @+1 {{operand #2 is optimizer state}}
  %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9 : (!W, !W, !W) -> (!W, !W)
  return %w1, %v1, %v : !W, !W, !W
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["dp"]>
!W = tensor<4xf32, #dist.tensor<#mesh, [-1]>>
func.func @state_result_unmarked(%w: !W {dist.param = "w"}, %v: !W {dist.state = "w"}, %g: !W)
    -> (!W, !W) {
  // expected-error @+1 {{result #1 is optimizer state: to shard it, the function must return it, and only that, at a result marked 'dist.state'}}
  %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9 : (!W, !W, !W) -> (!W, !W)
  return %w1, %v1 : !W, !W
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["dp"]>
!W = tensor<4xf32, #dist.tensor<#mesh, [-1]>>
func.func @state_result_used(%w: !W {dist.param = "w"}, %v: !W {dist.state = "w"}, %g: !W)
    -> (!W, !W {dist.state = "w"}) {
  // expected-error @+1 {{result #1 is optimizer state}}
  %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9 : (!W, !W, !W) -> (!W, !W)
  %x = dist.scale %v1 by 2.0 : !W
  return %w1, %x : !W, !W
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["dp"]>
!S = tensor<2xf32, #dist.tensor<#mesh, [0]>>
func.func @param_split(%w: !S {dist.param = "w"}, %v: !S {dist.state = "w"}, %g: !S)
    -> (!S, !S {dist.state = "w"}) {
  // expected-error @+1 {{cannot shard the optimizer state over mesh axis 0 (dp): the parameter 'tensor<2xf32, #dist.tensor<#dist.mesh<shape = [2], names = ["dp"]>, [0]>>' is already split or partial over it}}
  %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9 : (!S, !S, !S) -> (!S, !S)
  return %w1, %v1 : !S, !S
}

// -----

#mesh = #dist.mesh<shape = [2, 2, 2], names = ["dp", "tp", "sp"]>
!S = tensor<2x2xf32, #dist.tensor<#mesh, [1, 2]>>
func.func @two_other_axes(%w: !S {dist.param = "w"}, %v: !S {dist.state = "w"}, %g: !S)
    -> (!S, !S {dist.state = "w"}) {
  // expected-error @+1 {{the parameter is split over more than one other mesh axis, and a packed row holds one}}
  %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9 : (!S, !S, !S) -> (!S, !S)
  return %w1, %v1 : !S, !S
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["dp"]>
!W = tensor<4xf32, #dist.tensor<#mesh, [-1]>>
func.func @nested(%w: !W {dist.param = "w"}, %v: !W {dist.state = "w"}, %g: !W, %c: i1)
    -> (!W) {
  %r = scf.if %c -> (!W) {
    // expected-error @+1 {{is not in the body block of a function of one block, so --dist-shard-optimizer cannot shard its states}}
    %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9 : (!W, !W, !W) -> (!W, !W)
    scf.yield %w1 : !W
  } else {
    scf.yield %w : !W
  }
  return %r : !W
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["dp"]>
!W = tensor<4xf32, #dist.tensor<#mesh, [-1]>>
func.func @step(%w: !W {dist.param = "w"}, %v: !W {dist.state = "w"}, %g: !W)
    -> (!W, !W {dist.state = "w"}) {
  %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9 : (!W, !W, !W) -> (!W, !W)
  return %w1, %v1 : !W, !W
}

func.func @take_address() {
  // A reference other than a call cannot follow the new signature.
  // expected-error @+1 {{references step, whose signature --dist-shard-optimizer changes; only func.call can be adapted}}
  %f = func.constant @step : (!W, !W, !W) -> (!W, !W)
  return
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["dp"]>
!W = tensor<4xf32, #dist.tensor<#mesh, [-1]>>
func.func @blocks(%w: !W {dist.param = "w"}, %v: !W {dist.state = "w"}, %g: !W)
    -> (!W, !W {dist.state = "w"}) {
  // expected-error @+1 {{is not in the body block of a function of one block}}
  %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9 : (!W, !W, !W) -> (!W, !W)
  return %w1, %v1 : !W, !W
^dead:
  return %w, %v : !W, !W
}
