// RUN: dist-opt %s --dist-amp-check-finite -split-input-file -verify-diagnostics

// expected-error @+1 {{gradient "step" (result #1) has element type 'i32'; expected f16, f32 or f64}}
func.func @int_grad(%g: tensor<4xf32>, %i: tensor<4xi32>, %ls: tensor<1xf32> {dist.loss_scale})
    -> (tensor<4xf32> {dist.grad = "p"}, tensor<4xi32> {dist.grad = "step"}) {
  return %g, %i : tensor<4xf32>, tensor<4xi32>
}

// -----

#a = #dist.mesh<shape = [2]>
#b = #dist.mesh<shape = [4]>
// expected-error @+1 {{gradients are distributed on different meshes; found_inf needs one world mesh}}
func.func @two_meshes(%g: tensor<4xf32, #dist.tensor<#a, [-1]>>, %h: tensor<4xf32, #dist.tensor<#b, [-1]>>, %ls: tensor<1xf32> {dist.loss_scale})
    -> (tensor<4xf32, #dist.tensor<#a, [-1]>> {dist.grad = "p"}, tensor<4xf32, #dist.tensor<#b, [-1]>> {dist.grad = "q"}) {
  return %g, %h : tensor<4xf32, #dist.tensor<#a, [-1]>>, tensor<4xf32, #dist.tensor<#b, [-1]>>
}

// -----

// expected-error @+1 {{dist.loss_scale marks 2 arguments; expected one}}
func.func @two_scales(%g: tensor<4xf32>, %a: tensor<1xf32> {dist.loss_scale}, %b: tensor<1xf32> {dist.loss_scale})
    -> (tensor<4xf32> {dist.grad = "p"}) {
  return %g : tensor<4xf32>
}

// -----

// expected-error @+1 {{loss scale must be a one-element float tensor, got 'tensor<2xf32>'}}
func.func @bad_scale(%g: tensor<4xf32>, %a: tensor<2xf32> {dist.loss_scale})
    -> (tensor<4xf32> {dist.grad = "p"}) {
  return %g : tensor<4xf32>
}

// -----

// Adding the found_inf result would break the caller.
// expected-error @+1 {{@called is called; the found_inf result cannot be added}}
func.func @called(%g: tensor<4xf32>, %ls: tensor<1xf32> {dist.loss_scale})
    -> (tensor<4xf32> {dist.grad = "p"}) {
  return %g : tensor<4xf32>
}
func.func @caller(%g: tensor<4xf32>, %ls: tensor<1xf32>) -> tensor<4xf32> {
  %r = func.call @called(%g, %ls) : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A symbol use nested in an attribute of another op counts as a caller.
// expected-error @+1 {{@referenced is called; the found_inf result cannot be added}}
func.func @referenced(%g: tensor<4xf32>, %ls: tensor<1xf32> {dist.loss_scale})
    -> (tensor<4xf32> {dist.grad = "p"}) {
  return %g : tensor<4xf32>
}
func.func @other() attributes {test.uses = [{step = @referenced}]} {
  return
}

// -----

// Every malformed step is reported, not only the first.
// expected-error @+1 {{dist.loss_scale marks 2 arguments; expected one}}
func.func @two_scales(%g: tensor<4xf32>, %a: tensor<1xf32> {dist.loss_scale},
                      %b: tensor<1xf32> {dist.loss_scale})
    -> (tensor<4xf32> {dist.grad = "p"}) {
  return %g : tensor<4xf32>
}
// expected-error @+1 {{an AMP step must have a single block, got 2}}
func.func @two_blocks(%g: tensor<4xf32>, %ls: tensor<1xf32> {dist.loss_scale})
    -> (tensor<4xf32> {dist.grad = "p"}) {
  cf.br ^bb1
^bb1:
  return %g : tensor<4xf32>
}
