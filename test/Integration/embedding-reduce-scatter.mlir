// REQUIRES: mpich
// A vocab-parallel lookup whose one use is its sequence block: after
// --dist-auto-parallel the allreduce and the slice are one reduce-scatter
// (Transforms/dist-complete-lookup-grad.mlir), and each of 2 processes holds
// the rows of its half of the ids. Row r of the table is [r, 10 r].
// RUN: dist-run -n 2 %s --pass-flags=--dist-auto-parallel | FileCheck %s
// CHECK-LABEL: == rank 0 ==
// CHECK: sizes = [1, 2, 2]
// CHECK-NEXT: {{\[\[\[}}0, 0],
// CHECK-NEXT: [5, 50]]]
// CHECK-LABEL: == rank 1 ==
// CHECK: sizes = [1, 2, 2]
// CHECK-NEXT: {{\[\[\[}}3, 30],
// CHECK-NEXT: [7, 70]]]

#mesh = #dist.mesh<shape = [2], names = ["tp"]>
func.func @lookup_then_block(%ids: tensor<1x4xi64, #dist.tensor<#mesh, [-1, -1]>>,
    %w: tensor<4x2xf32, #dist.tensor<#mesh, [0, -1]>> {dist.param = "w"})
    -> tensor<1x2x2xf32, #dist.tensor<#mesh, [-1, 0, -1]>> attributes {dist.complete} {
  %e = dist.embedding %ids, %w : tensor<1x4xi64, #dist.tensor<#mesh, [-1, -1]>>, tensor<4x2xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<1x4x2xf32>
  %b = dist.reshard %e : tensor<1x4x2xf32> -> tensor<1x2x2xf32>
  %r = dist.constraint %b : tensor<1x2x2xf32> -> tensor<1x2x2xf32, #dist.tensor<#mesh, [-1, 0, -1]>>
  return %r : tensor<1x2x2xf32, #dist.tensor<#mesh, [-1, 0, -1]>>
}

func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %c = dist.process_coord #mesh axis = 0
  %four = arith.constant 4 : index
  %first = arith.muli %c, %four : index
  %table = arith.constant dense<[[0.0, 0.0], [1.0, 10.0], [2.0, 20.0], [3.0, 30.0], [4.0, 40.0], [5.0, 50.0], [6.0, 60.0], [7.0, 70.0]]> : tensor<8x2xf32>
  %rows = tensor.extract_slice %table[%first, 0] [4, 2] [1, 1] : tensor<8x2xf32> to tensor<4x2xf32>
  %w = tensor.cast %rows : tensor<4x2xf32> to tensor<4x2xf32, #dist.tensor<#mesh, [0, -1]>>
  %ids = arith.constant dense<[[0, 5, 3, 7]]> : tensor<1x4xi64, #dist.tensor<#mesh, [-1, -1]>>
  %out = func.call @lookup_then_block(%ids, %w) : (tensor<1x4xi64, #dist.tensor<#mesh, [-1, -1]>>, tensor<4x2xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<1x2x2xf32, #dist.tensor<#mesh, [-1, 0, -1]>>
  %plain = tensor.cast %out : tensor<1x2x2xf32, #dist.tensor<#mesh, [-1, 0, -1]>> to tensor<1x2x2xf32>
  %buf = bufferization.to_buffer %plain : tensor<1x2x2xf32> to memref<1x2x2xf32>
  %u = memref.cast %buf : memref<1x2x2xf32> to memref<*xf32>
  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
