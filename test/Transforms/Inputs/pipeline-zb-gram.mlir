// A two-stage step whose hand-written backward computes an activation
// gradient through an X^T * Y product: stage 1 scales its output gradient by
// the Gram matrix dy^T dy. That product is shaped like a weight gradient, but
// the chain of activation gradients (B) reads it, so ZB-H1 must keep it in B.
// Stage 0's gradient also adds stage 1's, as tied weights do: a W value that
// crosses stages between W steps.
#mesh = #dist.mesh<shape = [2], names = ["pp"]>
#r = #dist.tensor<#mesh, [-1, -1]>
#r0 = #dist.tensor<#mesh, []>
#map = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> ()>
func.func @step(%x: tensor<4x8xf32, #r>, %t: tensor<4x8xf32, #r>,
                %w0: tensor<8x8xf32, #r> {dist.param = "w0"},
                %w1: tensor<8x8xf32, #r> {dist.param = "w1"})
    -> (tensor<f32, #r0> {dist.loss},
        tensor<8x8xf32, #r> {dist.grad = "w0"},
        tensor<8x8xf32, #r> {dist.grad = "w1"}) {
  %h0 = dist.matmul %x, %w0 {dist.stage = 0} : tensor<4x8xf32, #r>, tensor<8x8xf32, #r> -> tensor<4x8xf32, #r>
  %y = dist.matmul %h0, %w1 {dist.stage = 1} : tensor<4x8xf32, #r>, tensor<8x8xf32, #r> -> tensor<4x8xf32, #r>
  %d = arith.subf %y, %t {dist.stage = 1} : tensor<4x8xf32, #r>
  %zero = arith.constant dense<0.0> : tensor<f32, #r0>
  %sq = linalg.generic {indexing_maps = [#map, #sum], iterator_types = ["reduction", "reduction"]}
      ins(%d : tensor<4x8xf32, #r>) outs(%zero : tensor<f32, #r0>) attrs = {dist.stage = 1} {
  ^bb0(%in: f32, %acc: f32):
    %p = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<f32, #r0>
  %inv = arith.constant dense<0.03125> : tensor<f32, #r0>
  %loss = arith.mulf %sq, %inv {dist.stage = 1} : tensor<f32, #r0>
  %k = arith.constant dense<0.0625> : tensor<4x8xf32, #r>
  %dy = arith.mulf %d, %k {dist.stage = 1} : tensor<4x8xf32, #r>
  // The Gram matrix of dy: a transpose_x product on the activation chain.
  %gram = dist.matmul %dy, %dy transpose_x {dist.stage = 1} : tensor<4x8xf32, #r>, tensor<4x8xf32, #r> -> tensor<8x8xf32, #r>
  %dys = dist.matmul %dy, %gram {dist.stage = 1} : tensor<4x8xf32, #r>, tensor<8x8xf32, #r> -> tensor<4x8xf32, #r>
  %dh0, %dw1 = dist.matmul_grad %h0, %w1, %dys {dist.stage = 1} : tensor<4x8xf32, #r>, tensor<8x8xf32, #r>, tensor<4x8xf32, #r> -> tensor<4x8xf32, #r>, tensor<8x8xf32, #r>
  %dx, %dw0 = dist.matmul_grad %x, %w0, %dh0 {dist.stage = 0} : tensor<4x8xf32, #r>, tensor<8x8xf32, #r>, tensor<4x8xf32, #r> -> tensor<4x8xf32, #r>, tensor<8x8xf32, #r>
  // Tied weights: stage 0's gradient adds stage 1's weight product.
  %dw0t = arith.addf %dw0, %dw1 {dist.stage = 0} : tensor<8x8xf32, #r>
  return %loss, %dw0t, %dw1 : tensor<f32, #r0>, tensor<8x8xf32, #r>, tensor<8x8xf32, #r>
}
