// A training step of a four-layer tanh MLP on one microbatch, a stage per
// layer: the forward, the mean-square loss, the backward by hand, SGD.
#mesh = #dist.mesh<shape = [2], names = ["pp"]>
#r = #dist.tensor<#mesh, [-1, -1]>
#r0 = #dist.tensor<#mesh, []>
#map = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> ()>
func.func @step(%x: tensor<4x8xf32, #r>, %t: tensor<4x8xf32, #r>,
                %w0: tensor<8x8xf32, #r> {dist.param = "w0"},
                %w1: tensor<8x8xf32, #r> {dist.param = "w1"},
                %w2: tensor<8x8xf32, #r> {dist.param = "w2"},
                %w3: tensor<8x8xf32, #r> {dist.param = "w3"})
    -> (tensor<f32, #r0> {dist.loss},
        tensor<8x8xf32, #r> {dist.grad = "w0"}, tensor<8x8xf32, #r>,
        tensor<8x8xf32, #r> {dist.grad = "w3"}, tensor<8x8xf32, #r>) {
  %h0 = dist.matmul %x, %w0 {dist.stage = 0} : tensor<4x8xf32, #r>, tensor<8x8xf32, #r> -> tensor<4x8xf32, #r>
  %a0 = math.tanh %h0 {dist.stage = 0} : tensor<4x8xf32, #r>
  %h1 = dist.matmul %a0, %w1 {dist.stage = 1} : tensor<4x8xf32, #r>, tensor<8x8xf32, #r> -> tensor<4x8xf32, #r>
  %a1 = math.tanh %h1 {dist.stage = 1} : tensor<4x8xf32, #r>
  %h2 = dist.matmul %a1, %w2 {dist.stage = 2} : tensor<4x8xf32, #r>, tensor<8x8xf32, #r> -> tensor<4x8xf32, #r>
  %a2 = math.tanh %h2 {dist.stage = 2} : tensor<4x8xf32, #r>
  %y = dist.matmul %a2, %w3 {dist.stage = 3} : tensor<4x8xf32, #r>, tensor<8x8xf32, #r> -> tensor<4x8xf32, #r>
  // loss = sum((y - t)^2) / 32
  %d = arith.subf %y, %t {dist.stage = 3} : tensor<4x8xf32, #r>
  %zero = arith.constant dense<0.0> : tensor<f32, #r0>
  %sq = linalg.generic {indexing_maps = [#map, #sum], iterator_types = ["reduction", "reduction"]}
      ins(%d : tensor<4x8xf32, #r>) outs(%zero : tensor<f32, #r0>) attrs = {dist.stage = 3} {
  ^bb0(%in: f32, %acc: f32):
    %p = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<f32, #r0>
  %inv = arith.constant dense<0.03125> : tensor<f32, #r0>
  %loss = arith.mulf %sq, %inv {dist.stage = 3} : tensor<f32, #r0>
  // dy = 2 (y - t) / 32
  %k = arith.constant dense<0.0625> : tensor<4x8xf32, #r>
  %dy = arith.mulf %d, %k {dist.stage = 3} : tensor<4x8xf32, #r>
  %da2, %dw3 = dist.matmul_grad %a2, %w3, %dy {dist.stage = 3} : tensor<4x8xf32, #r>, tensor<8x8xf32, #r>, tensor<4x8xf32, #r> -> tensor<4x8xf32, #r>, tensor<8x8xf32, #r>
  %one = arith.constant dense<1.0> : tensor<4x8xf32, #r>
  %sq2 = arith.mulf %a2, %a2 {dist.stage = 2} : tensor<4x8xf32, #r>
  %dt2 = arith.subf %one, %sq2 {dist.stage = 2} : tensor<4x8xf32, #r>
  %dh2 = arith.mulf %da2, %dt2 {dist.stage = 2} : tensor<4x8xf32, #r>
  %da1, %dw2 = dist.matmul_grad %a1, %w2, %dh2 {dist.stage = 2} : tensor<4x8xf32, #r>, tensor<8x8xf32, #r>, tensor<4x8xf32, #r> -> tensor<4x8xf32, #r>, tensor<8x8xf32, #r>
  %sq1 = arith.mulf %a1, %a1 {dist.stage = 1} : tensor<4x8xf32, #r>
  %dt1 = arith.subf %one, %sq1 {dist.stage = 1} : tensor<4x8xf32, #r>
  %dh1 = arith.mulf %da1, %dt1 {dist.stage = 1} : tensor<4x8xf32, #r>
  %da0, %dw1 = dist.matmul_grad %a0, %w1, %dh1 {dist.stage = 1} : tensor<4x8xf32, #r>, tensor<8x8xf32, #r>, tensor<4x8xf32, #r> -> tensor<4x8xf32, #r>, tensor<8x8xf32, #r>
  %sq0 = arith.mulf %a0, %a0 {dist.stage = 0} : tensor<4x8xf32, #r>
  %dt0 = arith.subf %one, %sq0 {dist.stage = 0} : tensor<4x8xf32, #r>
  %dh0 = arith.mulf %da0, %dt0 {dist.stage = 0} : tensor<4x8xf32, #r>
  %dx, %dw0 = dist.matmul_grad %x, %w0, %dh0 {dist.stage = 0} : tensor<4x8xf32, #r>, tensor<8x8xf32, #r>, tensor<4x8xf32, #r> -> tensor<4x8xf32, #r>, tensor<8x8xf32, #r>
  %v0 = arith.constant dense<0.0> : tensor<8x8xf32, #r>
  %nw0, %nv0 = dist.sgd %w0, %dw0, %v0 lr = 0.1 momentum = 0.0 {dist.stage = 0} : (tensor<8x8xf32, #r>, tensor<8x8xf32, #r>, tensor<8x8xf32, #r>) -> (tensor<8x8xf32, #r>, tensor<8x8xf32, #r>)
  %nw3, %nv3 = dist.sgd %w3, %dw3, %v0 lr = 0.1 momentum = 0.0 {dist.stage = 3} : (tensor<8x8xf32, #r>, tensor<8x8xf32, #r>, tensor<8x8xf32, #r>) -> (tensor<8x8xf32, #r>, tensor<8x8xf32, #r>)
  return %loss, %dw0, %nw0, %dw3, %nw3 : tensor<f32, #r0>, tensor<8x8xf32, #r>, tensor<8x8xf32, #r>, tensor<8x8xf32, #r>, tensor<8x8xf32, #r>
}
