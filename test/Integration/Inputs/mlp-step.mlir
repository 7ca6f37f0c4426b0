// The MLP part of the GPT-style step (bench/runtime.py at 64 x 64 x 64) on a
// [1, 2] mesh: column- then row-parallel linear, forward and backward.
#mesh = #dist.mesh<shape = [1, 2], names = ["dp", "mp"]>
func.func private @printMemrefF32(memref<*xf32>)
func.func @step(%x: tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>, %w1: tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>, %w2: tensor<32x64xf32, #dist.tensor<#mesh, [1, -1]>>, %dout: tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>) -> (tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<32x64xf32, #dist.tensor<#mesh, [1, -1]>>) {
  %h = dist.matmul %x, %w1 : tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>> -> tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>
  %op = dist.matmul %h, %w2 : tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<32x64xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>
  %o = dist.allreduce %op on #mesh axes = [1] reduce = sum : tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>> -> tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>
  %dh, %gw2 = dist.matmul_grad %h, %w2, %dout : tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<32x64xf32, #dist.tensor<#mesh, [1, -1]>>, tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<32x64xf32, #dist.tensor<#mesh, [1, -1]>>
  %dxp, %gw1 = dist.matmul_grad %x, %w1, %dh : tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>> -> tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>, tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>
  %dx = dist.allreduce %dxp on #mesh axes = [1] reduce = sum : tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>> -> tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>
  return %o, %dx, %gw1, %gw2 : tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<32x64xf32, #dist.tensor<#mesh, [1, -1]>>
}
func.func @main() {
  %cx = arith.constant dense<0.5> : tensor<64x64xf32>
  %c1 = arith.constant dense<0.25> : tensor<64x32xf32>
  %c2 = arith.constant dense<0.125> : tensor<32x64xf32>
  %x = tensor.cast %cx : tensor<64x64xf32> to tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>
  %w1 = tensor.cast %c1 : tensor<64x32xf32> to tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>
  %w2 = tensor.cast %c2 : tensor<32x64xf32> to tensor<32x64xf32, #dist.tensor<#mesh, [1, -1]>>
  %o, %dx, %gw1, %gw2 = call @step(%x, %w1, %w2, %x) : (tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<32x64xf32, #dist.tensor<#mesh, [1, -1]>>, tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>) -> (tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<32x64xf32, #dist.tensor<#mesh, [1, -1]>>)
  %p = tensor.cast %dx : tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>> to tensor<64x64xf32>
  %s = tensor.extract_slice %p[0, 0] [1, 4] [1, 1] : tensor<64x64xf32> to tensor<1x4xf32>
  %m = bufferization.to_buffer %s : tensor<1x4xf32> to memref<1x4xf32>
  %u = memref.cast %m : memref<1x4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
