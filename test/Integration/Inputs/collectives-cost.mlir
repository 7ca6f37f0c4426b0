// Two blocking allreduces (16 KiB and 1 MiB) and a broadcast (256 KiB) in
// groups of 2: what calibrate_check.py --numbers prices by hand.
#mesh = #dist.mesh<shape = [2]>
func.func @priced(%a: tensor<4096xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>,
                  %b: tensor<262144xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>,
                  %c: tensor<65536xf32>)
    -> (tensor<4096xf32, #dist.tensor<#mesh, [-1]>>, tensor<262144xf32, #dist.tensor<#mesh, [-1]>>, tensor<65536xf32>) {
  %x = dist.allreduce %a on #mesh axes = [0] reduce = sum : tensor<4096xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4096xf32, #dist.tensor<#mesh, [-1]>>
  %y = dist.allreduce %b on #mesh axes = [0] reduce = sum : tensor<262144xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<262144xf32, #dist.tensor<#mesh, [-1]>>
  %z = dist.broadcast %c on #mesh axes = [0] root = 0 : tensor<65536xf32> -> tensor<65536xf32>
  return %x, %y, %z : tensor<4096xf32, #dist.tensor<#mesh, [-1]>>, tensor<262144xf32, #dist.tensor<#mesh, [-1]>>, tensor<65536xf32>
}
