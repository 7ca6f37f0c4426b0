// A program with no collective: a function called twice, two matmuls.
func.func private @printMemrefF32(memref<*xf32>)
func.func @chain(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %m = dist.matmul %a, %b : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %n = dist.matmul %m, %b {transpose_y} : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %n : tensor<8x8xf32>
}
func.func @main() {
  %a = arith.constant dense<0.5> : tensor<8x8xf32>
  %b = arith.constant dense<0.25> : tensor<8x8xf32>
  %r0 = call @chain(%a, %b) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r1 = call @chain(%r0, %b) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = tensor.extract_slice %r1[0, 0] [1, 4] [1, 1] : tensor<8x8xf32> to tensor<1x4xf32>
  %buf = bufferization.to_buffer %s : tensor<1x4xf32> to memref<1x4xf32>
  %u = memref.cast %buf : memref<1x4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
