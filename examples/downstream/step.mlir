// The backward of a column-parallel linear on a [2] mesh: dX is partial
// over mp until its allreduce, which the overlap split moves up.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @step(%x: tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>, %w: tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>, %d: tensor<4x16xf32, #dist.tensor<#mesh, [-1, 0]>>) -> (tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>) {
  %dx, %dw = dist.matmul_grad %x, %w, %d : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<4x16xf32, #dist.tensor<#mesh, [-1, 0]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>, tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>
  %r = dist.allreduce %dx on #mesh axes = [0] reduce = sum : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  return %r, %dw : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>
}
