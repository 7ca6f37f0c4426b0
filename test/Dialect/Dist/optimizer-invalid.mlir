// RUN: dist-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// dist.sgd, dist.adamw
//===----------------------------------------------------------------------===//

func.func @lr_nan(%w: tensor<4xf32>) {
  // expected-error @+1 {{lr must be finite, got NaN}}
  %a, %b = dist.sgd %w, %w, %w lr = 0x7FF8000000000000 momentum = 0.9
      : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @lr_inf(%w: tensor<4xf32>) {
  // expected-error @+1 {{lr must be finite, got +Inf}}
  %a, %b = dist.sgd %w, %w, %w lr = 0x7FF0000000000000 momentum = 0.9
      : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @momentum_one(%w: tensor<4xf32>) {
  // expected-error @+1 {{momentum must be in [0, 1), got 1}}
  %a, %b = dist.sgd %w, %w, %w lr = 0.1 momentum = 1.0
      : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @negative_decay(%w: tensor<4xf32>) {
  // expected-error @+1 {{weight_decay must be finite and >= 0, got -0.5}}
  %a, %b = dist.sgd %w, %w, %w lr = 0.1 momentum = 0.5 weight_decay = -0.5
      : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @shapes(%w: tensor<4xf32>, %g: tensor<5xf32>) {
  // expected-error @+1 {{have same shape}}
  %a, %b = dist.sgd %w, %g, %w lr = 0.1 momentum = 0.5
      : (tensor<4xf32>, tensor<5xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @element_types(%w: tensor<4xf32>, %g: tensor<4xf16>) {
  // expected-error @+1 {{have same element type}}
  %a, %b = dist.sgd %w, %g, %w lr = 0.1 momentum = 0.5
      : (tensor<4xf32>, tensor<4xf16>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @integer(%w: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of floating-point values}}
  %a, %b = dist.sgd %w, %w, %w lr = 0.1 momentum = 0.5
      : (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>)
  return
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["dp"]>
!W = tensor<4xf32, #dist.tensor<#mesh, [-1]>>
!P = tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
func.func @partial_gradient(%w: !W, %g: !P) {
  // A momentum of partial gradients is not the momentum of their sum.
  // expected-error @+1 {{has no correct distribution}}
  %a, %b = dist.sgd %w, %g, %w lr = 0.1 momentum = 0.5 : (!W, !P, !W) -> (!W, !W)
  return
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["dp"]>
!W = tensor<4xf32, #dist.tensor<#mesh, [-1]>>
!S = tensor<2xf32, #dist.tensor<#mesh, [0]>>
func.func @result_distribution(%w: !W) {
  // expected-error @+1 {{result #1}}
  %a, %b = dist.sgd %w, %w, %w lr = 0.1 momentum = 0.5 : (!W, !W, !W) -> (!W, tensor<4xf32, #dist.tensor<#mesh, [0]>>)
  return
}

// -----

func.func @beta_one(%w: tensor<4xf32>, %t: tensor<f32>) {
  // expected-error @+1 {{beta1 must be in [0, 1), got 1}}
  %a, %b, %c = dist.adamw %w, %w, %w, %w, %t lr = 0.1 beta1 = 1.0 beta2 = 0.999 epsilon = 1.0e-8
      : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @beta2_negative(%w: tensor<4xf32>, %t: tensor<f32>) {
  // expected-error @+1 {{beta2 must be in [0, 1), got -0.5}}
  %a, %b, %c = dist.adamw %w, %w, %w, %w, %t lr = 0.1 beta1 = 0.9 beta2 = -0.5 epsilon = 1.0e-8
      : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @epsilon_zero(%w: tensor<4xf32>, %t: tensor<f32>) {
  // expected-error @+1 {{epsilon must be finite and > 0, got 0}}
  %a, %b, %c = dist.adamw %w, %w, %w, %w, %t lr = 0.1 beta1 = 0.9 beta2 = 0.999 epsilon = 0.0
      : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @step_rank(%w: tensor<4xf32>) {
  // expected-error @+1 {{operand #4 must be 0D tensor of floating-point values}}
  %a, %b, %c = dist.adamw %w, %w, %w, %w, %w lr = 0.1 beta1 = 0.9 beta2 = 0.999 epsilon = 1.0e-8
      : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["dp"]>
!W = tensor<4xf32, #dist.tensor<#mesh, [-1]>>
!T = tensor<f32, #dist.tensor<#mesh, [], partial = [0 : sum]>>
func.func @step_partial(%w: !W, %t: !T) {
  // expected-error @+1 {{the step is partial}}
  %a, %b, %c = dist.adamw %w, %w, %w, %w, %t lr = 0.1 beta1 = 0.9 beta2 = 0.999 epsilon = 1.0e-8
      : (!W, !W, !W, !W, !T) -> (!W, !W, !W)
  return
}

//===----------------------------------------------------------------------===//
// dist.pack, dist.unpack
//===----------------------------------------------------------------------===//

// -----

func.func @no_inputs() {
  // expected-error @+1 {{needs at least one input}}
  %b = "dist.pack"() : () -> tensor<2x3xf32>
  return
}

// -----

func.func @buffer_rank(%x: tensor<6xf32>) {
  // expected-error @+1 {{buffer must be a static 2-D tensor of rows, got 'tensor<6xf32>'}}
  %b = dist.pack %x : tensor<6xf32> -> tensor<6xf32>
  return
}

// -----

func.func @no_rows(%x: tensor<6xf32>) {
  // expected-error @+1 {{buffer must have at least one row, got 'tensor<0x6xf32>'}}
  %b = dist.pack %x : tensor<6xf32> -> tensor<0x6xf32>
  return
}

// -----

func.func @columns(%x: tensor<7xf32>) {
  // 7 elements in 2 rows take 4 columns, padding included.
  // expected-error @+1 {{buffer has 3 columns; 2 rows of the inputs' chunks need 4}}
  %b = dist.pack %x : tensor<7xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @element(%x: tensor<6xf16>) {
  // expected-error @+1 {{input #0 has element type 'f16', the buffer 'f32'}}
  %b = dist.pack %x : tensor<6xf16> -> tensor<2x3xf32>
  return
}

// -----

func.func @dynamic(%x: tensor<?xf32>) {
  // expected-error @+1 {{input #0 has the dynamic shape 'tensor<?xf32>'; packing needs static shapes}}
  %b = dist.pack %x : tensor<?xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @huge(%x: tensor<4611686018427387904x4xf32>) {
  // expected-error @+1 {{input #0 ('tensor<4611686018427387904x4xf32>') has more elements than a 64-bit count holds}}
  %b = dist.pack %x : tensor<4611686018427387904x4xf32> -> tensor<2x9223372036854775807xf32>
  return
}

// -----

func.func @huge_columns(%x: tensor<4611686018427387904xf32>, %y: tensor<4611686018427387904xf32>) {
  // Each input's element count fits; their columns together do not.
  // expected-error @+1 {{buffer has more columns than a 64-bit count holds}}
  %b = dist.pack %x, %y : tensor<4611686018427387904xf32>, tensor<4611686018427387904xf32> -> tensor<1x9223372036854775807xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 2]>
func.func @split_axes(%x: tensor<2x3xf32, #dist.tensor<#mesh, [1, -1]>>) {
  // Each process packs its own shard: a buffer claimed replicated would be
  // what no process holds.
  // expected-error @+1 {{input #0 ('tensor<2x3xf32, #dist.tensor<#dist.mesh<shape = [2, 2]>, [1, -1]>>') is split over other mesh axes than the buffer}}
  %b = dist.pack %x : tensor<2x3xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 2]>
func.func @partial(%x: tensor<6xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-error @+1 {{is partial otherwise than the buffer}}
  %b = dist.pack %x : tensor<6xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : max]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 2]>
#mesh2 = #dist.mesh<shape = [4]>
func.func @mesh(%x: tensor<6xf32, #dist.tensor<#mesh2, [-1]>>) {
  // expected-error @+1 {{input #0 is distributed on mesh}}
  %b = dist.pack %x : tensor<6xf32, #dist.tensor<#mesh2, [-1]>> -> tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2]>
func.func @unpack_split(%x: tensor<1x3xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // A row of a shard cannot be unpacked into a replicated tensor.
  // expected-error @+1 {{result #0 ('tensor<3xf32>') is split over other mesh axes than the buffer}}
  %b = dist.unpack %x : tensor<1x3xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<3xf32>
  return
}

// -----

func.func @unpack_columns(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{buffer has 4 columns; 2 rows of the results' chunks need 5}}
  %a, %b = dist.unpack %x : tensor<2x4xf32> -> tensor<7xf32>, tensor<2xf32>
  return
}

// -----

func.func @unpack_none(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{needs at least one result}}
  "dist.unpack"(%x) : (tensor<2x4xf32>) -> ()
  return
}

//===----------------------------------------------------------------------===//
// dist.state
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'dist.state' must be a non-empty string naming a parameter, got unit}}
func.func @state_unit(%m: tensor<4xf32> {dist.state}) {
  return
}

// -----

// expected-error @+1 {{'dist.state' marks a function argument or a function result, not an operation}}
func.func @state_on_op() attributes {dist.state = "w"} {
  return
}
