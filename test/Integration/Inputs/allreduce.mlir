// Each of 2 processes contributes its coordinate + 1; both print 3.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %c = dist.process_coord #mesh axis = 0
  %ci = arith.index_cast %c : index to i32
  %f = arith.sitofp %ci : i32 to f32
  %one = arith.constant 1.0 : f32
  %g = arith.addf %f, %one : f32
  %t = tensor.splat %g : tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
  %r = dist.allreduce %t on #mesh axes = [0] reduce = sum : tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1]>>
  %plain = tensor.cast %r : tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1]>> to tensor<2x3xf32>
  %m = bufferization.to_buffer %plain : tensor<2x3xf32> to memref<2x3xf32>
  %u = memref.cast %m : memref<2x3xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
