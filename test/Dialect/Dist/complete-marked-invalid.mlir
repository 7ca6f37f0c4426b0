// RUN: dist-opt %s --dist-verify-distributions -verify-diagnostics
// A function still marked {dist.complete} is not checked as if it were
// complete: its ops with unencoded tensors were never checked.

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// expected-error @+1 {{'func.func' op is marked 'dist.complete': its distributions are not complete (run --dist-complete)}}
func.func @still_marked(%x: tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<8x8xf32> attributes {dist.complete} {
  %t = math.tanh %x : tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>
  %c = tensor.cast %t : tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}
