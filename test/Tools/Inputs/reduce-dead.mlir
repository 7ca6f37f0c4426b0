// The bad embedding's result is unused: the op that makes the test fail is
// trivially dead, which crashed MLIR 22's mlir-reduce (llvm/llvm-project
// #195997).
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @step(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>,
                %ids: tensor<4xi64, #dist.tensor<#mesh, [1]>>,
                %table: tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>)
    -> tensor<8x32xf32> {
  %h = dist.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %s = dist.scale %h by 2.0 : tensor<8x32xf32>
  %e = dist.embedding %ids, %table : tensor<4xi64, #dist.tensor<#mesh, [1]>>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
  return %s : tensor<8x32xf32>
}
func.func @unrelated(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %b = dist.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %c = dist.scale %b by 2.0 : tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}
func.func @caller(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %b = call @unrelated(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %b : tensor<4x4xf32>
}
