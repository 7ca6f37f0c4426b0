// A step with one bad embedding among unrelated work: the ids' batch dim is
// split over the axis that splits the table's rows.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @step(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x16xf32>,
                %ids: tensor<4xi64, #dist.tensor<#mesh, [1]>>,
                %table: tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>)
    -> (tensor<8x16xf32>, tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>) {
  %h = dist.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %s = dist.scale %h by 2.0 : tensor<8x32xf32>
  %y = dist.matmul %s, %w2 : tensor<8x32xf32>, tensor<32x16xf32> -> tensor<8x16xf32>
  %z = dist.scale %y by 0.5 : tensor<8x16xf32>
  %e = dist.embedding %ids, %table : tensor<4xi64, #dist.tensor<#mesh, [1]>>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
  %f = dist.scale %e by 3.0 : tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
  return %z, %f : tensor<8x16xf32>, tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
}
func.func @unrelated(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %b = dist.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %b : tensor<4x4xf32>
}
