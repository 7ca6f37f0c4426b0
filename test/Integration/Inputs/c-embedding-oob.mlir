// A vocab-parallel lookup: the 4-row table's rows are split over 2
// processes (2 each). Ids of the other shard give zero rows; an id outside
// the whole table (IDS, sed-substituted by the tests) is an error.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %c = dist.process_coord #mesh axis = 0
  %c2 = arith.constant 2 : index
  %start = arith.muli %c, %c2 : index
  %ids = arith.constant dense<IDS> : tensor<2xi64>
  %w = arith.constant dense<1.0> : tensor<2x2xf32, #dist.tensor<#mesh, [0, -1]>>
  %e = dist.c_embedding %ids, %w start = %start : tensor<2xi64>, tensor<2x2xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<2x2xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
  %plain = tensor.cast %e : tensor<2x2xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> to tensor<2x2xf32>
  %m = bufferization.to_buffer %plain : tensor<2x2xf32> to memref<2x2xf32>
  %u = memref.cast %m : memref<2x2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
