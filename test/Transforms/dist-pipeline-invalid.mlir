// RUN: dist-opt %s -split-input-file --dist-pipeline="microbatches=2" -verify-diagnostics
// RUN: not dist-opt %S/Inputs/pipeline-mlp.mlir --dist-pipeline="schedule=zb-h2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not dist-opt %S/Inputs/pipeline-mlp.mlir --dist-pipeline="microbatches=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not dist-opt %S/Inputs/pipeline-mlp.mlir --dist-pipeline="chunks=4611686018427387904" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not dist-opt %S/Inputs/pipeline-mlp.mlir --dist-pipeline="schedule=1f1b chunks=2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHUNKS

// SCHEDULE: error: --dist-pipeline: unknown schedule 'zb-h2'; expected gpipe, 1f1b, interleaved or zb-h1
// ZERO: error: --dist-pipeline: microbatches and chunks must be between 1 and 4096
// CHUNKS: error: 'func.func' op cannot be pipelined: only the interleaved schedule runs several chunks per stage

#mesh = #dist.mesh<shape = [2], names = ["pp"]>
#r = #dist.tensor<#mesh, [-1]>
// expected-error @+1 {{'func.func' op has no result marked 'dist.loss': the forward of a pipelined step is what the loss needs}}
func.func @no_loss(%x: tensor<4xf32, #r>) -> tensor<4xf32, #r> {
  %y = arith.addf %x, %x {dist.stage = 0} : tensor<4xf32, #r>
  %z = arith.addf %y, %y {dist.stage = 1} : tensor<4xf32, #r>
  return %z : tensor<4xf32, #r>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["pp"]>
#r = #dist.tensor<#mesh, [-1]>
// expected-error @+1 {{'func.func' op has 3 stages, which do not group evenly into 2 pipeline stages}}
func.func @uneven(%x: tensor<4xf32, #r>) -> (tensor<4xf32, #r> {dist.loss}) {
  %y = arith.addf %x, %x {dist.stage = 0} : tensor<4xf32, #r>
  %z = arith.addf %y, %y {dist.stage = 2} : tensor<4xf32, #r>
  return %z : tensor<4xf32, #r>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["pp"]>
#r = #dist.tensor<#mesh, [-1]>
func.func @unstaged(%x: tensor<4xf32, #r>) -> (tensor<4xf32, #r> {dist.loss}) {
  %y = arith.addf %x, %x {dist.stage = 0} : tensor<4xf32, #r>
  // expected-error @+1 {{'arith.mulf' op has no 'dist.stage', and neither what it reads nor what reads it has one: say which stage it is in}}
  %w = arith.mulf %x, %x : tensor<4xf32, #r>
  %z = arith.addf %y, %y {dist.stage = 1} : tensor<4xf32, #r>
  return %z : tensor<4xf32, #r>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["pp"]>
#r = #dist.tensor<#mesh, [-1]>
// expected-error @+1 {{'func.func' op result #1 differs by microbatch but is neither the loss nor a gradient; a pipelined step returns their means over the microbatches and what its updates compute}}
func.func @per_microbatch_result(%x: tensor<4xf32, #r>) -> (tensor<4xf32, #r> {dist.loss}, tensor<4xf32, #r>) {
  %y = arith.addf %x, %x {dist.stage = 0} : tensor<4xf32, #r>
  %z = arith.addf %y, %y {dist.stage = 1} : tensor<4xf32, #r>
  return %z, %y : tensor<4xf32, #r>, tensor<4xf32, #r>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["pp"]>
#r = #dist.tensor<#mesh, [-1]>
// expected-error @+1 {{'func.func' op is marked 'dist.complete'; complete it before --dist-pipeline}}
func.func @undecided(%x: tensor<4xf32, #r>) -> (tensor<4xf32, #r> {dist.loss}) attributes {dist.complete} {
  %y = arith.addf %x, %x {dist.stage = 0} : tensor<4xf32, #r>
  return %y : tensor<4xf32, #r>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["pp"]>
#r = #dist.tensor<#mesh, [-1]>
func.func @called(%x: tensor<4xf32, #r>) -> (tensor<4xf32, #r> {dist.loss}) {
  %y = arith.addf %x, %x {dist.stage = 0} : tensor<4xf32, #r>
  %z = arith.addf %y, %y {dist.stage = 1} : tensor<4xf32, #r>
  return %z : tensor<4xf32, #r>
}
func.func @caller(%x: tensor<4xf32, #r>) -> tensor<4xf32, #r> {
  // expected-error @+1 {{'func.call' op calls @called, whose signature --dist-pipeline changes}}
  %r = func.call @called(%x) : (tensor<4xf32, #r>) -> tensor<4xf32, #r>
  return %r : tensor<4xf32, #r>
}

// -----

#other = #dist.mesh<shape = [2], names = ["dp"]>
#r = #dist.tensor<#other, [-1]>
// expected-error @+1 {{'func.func' op needs one mesh with the pipeline axis 'pp' among those its types use; found 0}}
func.func @no_axis(%x: tensor<4xf32, #r>) -> (tensor<4xf32, #r> {dist.loss}) {
  %y = arith.addf %x, %x {dist.stage = 0} : tensor<4xf32, #r>
  return %y : tensor<4xf32, #r>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["pp"]>
#r = #dist.tensor<#mesh, [-1]>
// An update of stage 0 that reads a gradient made on stage 1.
func.func @update_across(%x: tensor<4xf32, #r>, %w: tensor<4xf32, #r> {dist.param = "w"}) -> (tensor<4xf32, #r> {dist.loss}, tensor<4xf32, #r>) {
  %y = arith.mulf %x, %w {dist.stage = 0} : tensor<4xf32, #r>
  %l = arith.addf %y, %y {dist.stage = 1} : tensor<4xf32, #r>
  %g = arith.addf %x, %x {dist.stage = 1} : tensor<4xf32, #r>
  %v = arith.constant dense<0.0> : tensor<4xf32, #r>
  // expected-error @+1 {{'dist.sgd' op in the update of stage 0 reads a value of stage 1; put an update on its gradient's stage}}
  %nw, %nv = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.0 {dist.stage = 0} : (tensor<4xf32, #r>, tensor<4xf32, #r>, tensor<4xf32, #r>) -> (tensor<4xf32, #r>, tensor<4xf32, #r>)
  return %l, %nw : tensor<4xf32, #r>, tensor<4xf32, #r>
}
