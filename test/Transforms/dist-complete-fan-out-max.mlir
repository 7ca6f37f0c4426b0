// RUN: dist-opt %s --dist-complete --dist-lower-reshard 2>&1 | FileCheck %s
// The row maxima of a softmax over a split vocabulary are a partial max
// with two uses (exp(x - max) and the loss's log-sum-exp): completion
// allreduces them once, where they are made, not once per use.

#mesh = #dist.mesh<shape = [2], names = ["tp"]>
#in = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#vec = affine_map<(d0) -> (d0)>
// CHECK: remark: completion: reshard of result #0 from [-1] partial [0 : max] to replicated where it is made: its 2 uses take the complete value
// CHECK-LABEL: func.func @row_max_two_uses
// CHECK: %[[M:.*]] = linalg.generic
// CHECK: } -> tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [0 : max]>>
// CHECK-NEXT: %[[C:.*]] = dist.allreduce %[[M]] on #mesh axes = [0] reduce = max
// CHECK-NOT: reduce = max
// CHECK: return
func.func @row_max_two_uses(%x: tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>)
    -> (tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<8xf32, #dist.tensor<#mesh, [-1]>>) attributes {dist.complete} {
  %lowest = arith.constant -1.0e+30 : f32
  %e0 = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%lowest : f32) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8x16xf32>
  %ex = linalg.generic {indexing_maps = [#in, #row, #in], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<8xf32>) outs(%e1 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %twice = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%m : tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = arith.addf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %r0 = dist.constraint %ex : tensor<8x16xf32> -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>
  %r1 = dist.constraint %twice : tensor<8xf32> -> tensor<8xf32, #dist.tensor<#mesh, [-1]>>
  return %r0, %r1 : tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<8xf32, #dist.tensor<#mesh, [-1]>>
}
