// A function whose name needs escaping in JSON and XML (trace.test).
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @"we\"ird<&>"(%x: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1]>> {
  %a = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  return %a : tensor<4xf32, #dist.tensor<#mesh, [-1]>>
}
func.func @main() {
  %one = arith.constant 1.0 : f32
  %t = tensor.splat %one : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
  %r = func.call @"we\"ird<&>"(%t) : (tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  return
}
