// A function that issues an allreduce over mp, called only by the
// processes at dp coordinate 0: each mp group agrees on the condition, so
// the distribution check accepts it; the communicator must not be made
// lazily in @sync (splitting MPI_COMM_WORLD needs every process).
#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "mp"]>
func.func private @printMemrefF32(memref<*xf32>)
func.func private @sync(%t: tensor<2xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) -> tensor<2xf32> {
  %r = dist.allreduce %t on #mesh axes = [1] reduce = sum : tensor<2xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>> -> tensor<2xf32, #dist.tensor<#mesh, [-1]>>
  %plain = tensor.cast %r : tensor<2xf32, #dist.tensor<#mesh, [-1]>> to tensor<2xf32>
  return %plain : tensor<2xf32>
}
func.func @main() {
  %dp = dist.process_coord #mesh axis = 0
  %mp = dist.process_coord #mesh axis = 1
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %dp, %c0 : index
  %c1 = arith.constant 1 : index
  %v = arith.addi %mp, %c1 : index
  %vi = arith.index_cast %v : index to i32
  %f = arith.sitofp %vi : i32 to f32
  %t = tensor.splat %f : tensor<2xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  %zero = arith.constant 0.0 : f32
  %none = tensor.splat %zero : tensor<2xf32>
  %out = scf.if %first -> tensor<2xf32> {
    %s = func.call @sync(%t) : (tensor<2xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) -> tensor<2xf32>
    scf.yield %s : tensor<2xf32>
  } else {
    scf.yield %none : tensor<2xf32>
  }
  %buf = bufferization.to_buffer %out : tensor<2xf32> to memref<2xf32>
  %u = memref.cast %buf : memref<2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
