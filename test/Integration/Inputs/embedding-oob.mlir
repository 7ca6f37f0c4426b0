// A lookup of IDS (sed-substituted by the tests) in a 3-row table, then
// its gradient.
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %ids = arith.constant dense<IDS> : tensor<2xi64>
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %e = dist.embedding %ids, %w : tensor<2xi64>, tensor<3x2xf32> -> tensor<2x2xf32>
  %m = bufferization.to_buffer %e : tensor<2x2xf32> to memref<2x2xf32>
  %u = memref.cast %m : memref<2x2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  %g = arith.constant dense<1.0> : tensor<2x2xf32>
  %dw = dist.embedding_grad %ids, %w, %g : tensor<2xi64>, tensor<3x2xf32>, tensor<2x2xf32> -> tensor<3x2xf32>
  %dm = bufferization.to_buffer %dw : tensor<3x2xf32> to memref<3x2xf32>
  %du = memref.cast %dm : memref<3x2xf32> to memref<*xf32>
  call @printMemrefF32(%du) : (memref<*xf32>) -> ()
  return
}
