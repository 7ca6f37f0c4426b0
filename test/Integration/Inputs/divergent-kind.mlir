// Process 0 sums 3 values, process 1 takes their maximum: the same element
// count, another collective.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @main() {
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %is0 = arith.cmpi eq, %c, %c0 : index
  %one = arith.constant 1.0 : f32
  scf.if %is0 {
    %t = tensor.splat %one : tensor<3xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
    %r = dist.allreduce %t on #mesh axes = [0] reduce = sum : tensor<3xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<3xf32, #dist.tensor<#mesh, [-1]>>
  } else {
    %t = tensor.splat %one : tensor<3xf32, #dist.tensor<#mesh, [-1], partial = [0 : max]>>
    %r = dist.allreduce %t on #mesh axes = [0] reduce = max : tensor<3xf32, #dist.tensor<#mesh, [-1], partial = [0 : max]>> -> tensor<3xf32, #dist.tensor<#mesh, [-1]>>
  }
  return
}
