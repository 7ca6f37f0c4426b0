// A bf16 reshard (split columns to split rows, an all-to-all): the element
// type is widened for MPI and back, exactly.
#mesh = #dist.mesh<shape = [2]>
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %c = dist.process_coord #mesh axis = 0
  %ci = arith.index_cast %c : index to i32
  %cf = arith.sitofp %ci : i32 to bf16
  %base = arith.constant dense<[[1.5, 2.5], [3.5, 4.5]]> : tensor<2x2xbf16>
  %s = tensor.splat %cf : tensor<2x2xbf16>
  %l = arith.addf %base, %s : tensor<2x2xbf16>
  %x = tensor.cast %l : tensor<2x2xbf16> to tensor<2x2xbf16, #dist.tensor<#mesh, [-1, 0]>>
  %r = dist.reshard %x : tensor<2x2xbf16, #dist.tensor<#mesh, [-1, 0]>> -> tensor<1x4xbf16, #dist.tensor<#mesh, [0, -1]>>
  %p = tensor.cast %r : tensor<1x4xbf16, #dist.tensor<#mesh, [0, -1]>> to tensor<1x4xbf16>
  %f = arith.extf %p : tensor<1x4xbf16> to tensor<1x4xf32>
  %m = bufferization.to_buffer %f : tensor<1x4xf32> to memref<1x4xf32>
  %u = memref.cast %m : memref<1x4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
