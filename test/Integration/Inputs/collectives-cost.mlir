// Two blocking allreduces (16 KiB and 1 MiB), a broadcast, an all-gather
// (to 256 KiB), a reduce-scatter (from 256 KiB) and an all-to-all (of a
// 256 KiB shard) in groups of 2: what calibrate_check.py --numbers prices
// by hand.
#mesh = #dist.mesh<shape = [2]>
func.func @priced(%a: tensor<4096xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>,
                  %b: tensor<262144xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>,
                  %c: tensor<65536xf32>,
                  %d: tensor<32768xf32, #dist.tensor<#mesh, [0]>>,
                  %e: tensor<65536xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>,
                  %f: tensor<1x65536xf32, #dist.tensor<#mesh, [0, -1]>>)
    -> (tensor<4096xf32, #dist.tensor<#mesh, [-1]>>, tensor<262144xf32, #dist.tensor<#mesh, [-1]>>, tensor<65536xf32>,
        tensor<65536xf32, #dist.tensor<#mesh, [-1]>>, tensor<32768xf32, #dist.tensor<#mesh, [0]>>,
        tensor<2x32768xf32, #dist.tensor<#mesh, [-1, 0]>>) {
  %x = dist.allreduce %a on #mesh axes = [0] reduce = sum : tensor<4096xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4096xf32, #dist.tensor<#mesh, [-1]>>
  %y = dist.allreduce %b on #mesh axes = [0] reduce = sum : tensor<262144xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<262144xf32, #dist.tensor<#mesh, [-1]>>
  %z = dist.broadcast %c on #mesh axes = [0] root = 0 : tensor<65536xf32> -> tensor<65536xf32>
  %g = dist.all_gather %d on #mesh axes = [0] : tensor<32768xf32, #dist.tensor<#mesh, [0]>> -> tensor<65536xf32, #dist.tensor<#mesh, [-1]>>
  %s = dist.reduce_scatter %e on #mesh axes = [0] reduce = sum : tensor<65536xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<32768xf32, #dist.tensor<#mesh, [0]>>
  %t = dist.all_to_all %f on #mesh axes = [0] : tensor<1x65536xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<2x32768xf32, #dist.tensor<#mesh, [-1, 0]>>
  return %x, %y, %z, %g, %s, %t : tensor<4096xf32, #dist.tensor<#mesh, [-1]>>, tensor<262144xf32, #dist.tensor<#mesh, [-1]>>, tensor<65536xf32>,
      tensor<65536xf32, #dist.tensor<#mesh, [-1]>>, tensor<32768xf32, #dist.tensor<#mesh, [0]>>, tensor<2x32768xf32, #dist.tensor<#mesh, [-1, 0]>>
}
