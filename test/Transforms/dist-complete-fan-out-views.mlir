// RUN: dist-opt %s --dist-complete="remarks=true" 2>&1 | FileCheck %s
// RUN: dist-opt %s --dist-auto-parallel | FileCheck %s --check-prefix=OVERLAP
// A partial sum viewed before its several uses (the input gradient of a
// column-parallel nn.Linear, [b * s, h], viewed as [b, s, h] for a
// LayerNorm's backward): completion allreduces it once, before the view,
// right after the product that made it. There --dist-matmul-grad-overlap
// finds it and hides it behind the weight gradient's product.

#mesh = #dist.mesh<shape = [2], names = ["tp"]>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK: remark: completion: reshard of result #0 from [-1, -1] partial [0 : sum] to replicated where it is made, before the views that pass it on: its 2 uses take the complete sum
// CHECK-LABEL: func.func @viewed_input_gradient
// CHECK: %[[DX:.*]], %[[DW:.*]] = dist.matmul_grad
// CHECK-NEXT: %[[R:.*]] = dist.reshard %[[DX]] : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<8x16xf32>
// CHECK-NEXT: %[[V:.*]] = tensor.expand_shape %[[R]] {{\[}}[0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
// CHECK-NOT: partial
// CHECK: return
// OVERLAP-LABEL: func.func @viewed_input_gradient
// OVERLAP: dist.matmul %{{.*}}, %arg1 :
// OVERLAP-NEXT: dist.allreduce {{.*}} stream = mp
// OVERLAP: dist.matmul {{.*}} transpose_x
// OVERLAP: dist.wait
func.func @viewed_input_gradient(%x: tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>,
    %w: tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>>,
    %g: tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>)
    -> (tensor<2x4x16xf32, #dist.tensor<#mesh, [-1, -1, -1]>>, tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>>) attributes {dist.complete} {
  %dx, %dw = dist.matmul_grad %x, %w, %g transpose_y
      : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>
      -> tensor<8x16xf32>, tensor<16x16xf32>
  %v = tensor.expand_shape %dx [[0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
  %e = tensor.empty() : tensor<2x4x16xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v, %v : tensor<2x4x16xf32>, tensor<2x4x16xf32>) outs(%e : tensor<2x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x4x16xf32>
  %r = dist.constraint %sq : tensor<2x4x16xf32> -> tensor<2x4x16xf32, #dist.tensor<#mesh, [-1, -1, -1]>>
  %rw = dist.constraint %dw : tensor<16x16xf32> -> tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>>
  return %r, %rw : tensor<2x4x16xf32, #dist.tensor<#mesh, [-1, -1, -1]>>, tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>>
}
