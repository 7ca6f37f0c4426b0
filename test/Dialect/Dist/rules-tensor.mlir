// RUN: dist-opt %s --dist-verify-distributions -split-input-file | FileCheck %s
// The rules of the tensor ops that move parts of a tensor
// (TensorRuleModels.cpp): a split dim is taken whole, an unsplit one any
// way; partial values pass where every part is partial alike.

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
#P = #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>
// CHECK-LABEL: func @slices
// CHECK: tensor.extract_slice
// CHECK: tensor.insert_slice
func.func @slices(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>,
                  %d: tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>,
                  %p: tensor<4x8xf32, #P>)
    -> (tensor<4x3xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>,
        tensor<4xf32, #dist.tensor<#mesh, [0]>>, tensor<4x2xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>) {
  // The unsplit columns sliced any way; the split rows whole.
  %a = tensor.extract_slice %x[0, 2] [4, 3] [1, 2] : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<4x3xf32, #dist.tensor<#mesh, [0, -1]>>
  %b = tensor.insert_slice %x into %d[0, 8] [4, 8] [1, 1] : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> into tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>
  // A rank-reducing slice drops an unsplit unit dim.
  %c = tensor.extract_slice %x[0, 5] [4, 1] [1, 1] : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<4xf32, #dist.tensor<#mesh, [0]>>
  // A slice of a partial sum is the partial sum of the slices.
  %e = tensor.extract_slice %p[0, 0] [4, 2] [1, 1] : tensor<4x8xf32, #P> to tensor<4x2xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
  return %a, %b, %c, %e : tensor<4x3xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>,
                          tensor<4xf32, #dist.tensor<#mesh, [0]>>, tensor<4x2xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// CHECK-LABEL: func @concat_and_pad
// CHECK: tensor.concat
// CHECK: tensor.pad
func.func @concat_and_pad(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>,
                          %y: tensor<4x2xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>,
                          %z: tensor<4x8xf32, #dist.tensor<#mesh, [-1, 1]>>)
    -> (tensor<4x10xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>,
        tensor<4x12xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>,
        tensor<6x8xf32, #dist.tensor<#mesh, [-1, 1]>>) {
  %c = tensor.concat dim(1) %x, %y : (tensor<4x8xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>, tensor<4x2xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>) -> tensor<4x10xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
  // Zeros pad a pending sum.
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1] high[0, 3] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>> to tensor<4x12xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
  // Any value pads an unsplit dim of a complete value.
  %one = arith.constant 1.0 : f32
  %q = tensor.pad %z low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %one : f32
  } : tensor<4x8xf32, #dist.tensor<#mesh, [-1, 1]>> to tensor<6x8xf32, #dist.tensor<#mesh, [-1, 1]>>
  return %c, %p, %q : tensor<4x10xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>,
                      tensor<4x12xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>,
                      tensor<6x8xf32, #dist.tensor<#mesh, [-1, 1]>>
}
