// Two process groups ([2, 2] mesh, along dp and along mp), each used twice,
// and one asynchronous allreduce: the runtime makes two communicators and
// one request, and frees them all before MPI_Finalize. Each reduced value is
// re-annotated as partial through an unannotated tensor (an assertion).
#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "mp"]>
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %c = dist.process_coord #mesh axis = 1
  %ci = arith.index_cast %c : index to i32
  %f = arith.sitofp %ci : i32 to f32
  %t = tensor.splat %f : tensor<2xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
  %a = dist.allreduce %t on #mesh axes = [0] reduce = sum : tensor<2xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<2xf32, #dist.tensor<#mesh, [-1]>>
  %p_plain = tensor.cast %a : tensor<2xf32, #dist.tensor<#mesh, [-1]>> to tensor<2xf32>
  %p = tensor.cast %p_plain : tensor<2xf32> to tensor<2xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>>
  %b = dist.allreduce %p on #mesh axes = [1] reduce = max : tensor<2xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>> -> tensor<2xf32, #dist.tensor<#mesh, [-1]>>
  %q_plain = tensor.cast %b : tensor<2xf32, #dist.tensor<#mesh, [-1]>> to tensor<2xf32>
  %q = tensor.cast %q_plain : tensor<2xf32> to tensor<2xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
  %fu = dist.allreduce %q on #mesh axes = [0] reduce = sum stream = dp : tensor<2xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> !dist.future<tensor<2xf32, #dist.tensor<#mesh, [-1]>>>
  %r = dist.wait %fu : !dist.future<tensor<2xf32, #dist.tensor<#mesh, [-1]>>>
  %s_plain = tensor.cast %r : tensor<2xf32, #dist.tensor<#mesh, [-1]>> to tensor<2xf32>
  %s = tensor.cast %s_plain : tensor<2xf32> to tensor<2xf32, #dist.tensor<#mesh, [-1], partial = [1 : min]>>
  %m = dist.allreduce %s on #mesh axes = [1] reduce = min : tensor<2xf32, #dist.tensor<#mesh, [-1], partial = [1 : min]>> -> tensor<2xf32, #dist.tensor<#mesh, [-1]>>
  %plain = tensor.cast %m : tensor<2xf32, #dist.tensor<#mesh, [-1]>> to tensor<2xf32>
  %buf = bufferization.to_buffer %plain : tensor<2xf32> to memref<2xf32>
  %u = memref.cast %buf : memref<2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
