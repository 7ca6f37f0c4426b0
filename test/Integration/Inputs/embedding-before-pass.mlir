#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @main() {
  %ids = arith.constant dense<[1, 2]> : tensor<2xi64>
  %w = arith.constant dense<1.0> : tensor<4x3xf32, #dist.tensor<#mesh, [0, -1]>>
  %e = dist.embedding %ids, %w : tensor<2xi64>, tensor<4x3xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<2x3xf32>
  return
}
