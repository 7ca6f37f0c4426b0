// A broadcast from group-local root 1 over a 2-process mesh, printed.
#mesh = #dist.mesh<shape = [2]>
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %c = dist.process_coord #mesh axis = 0
  %i = arith.index_cast %c : index to i32
  %f = arith.sitofp %i : i32 to f32
  %x = tensor.splat %f : tensor<4xf32>
  %b = dist.broadcast %x on #mesh axes = [0] root = 1 : tensor<4xf32> -> tensor<4xf32>
  %m = bufferization.to_buffer %b : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
