// RUN: dist-opt %s --dist-verify-distributions -split-input-file -verify-diagnostics
// What the rules of tensor slices, concat and pad reject.

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @slice_of_split_dim(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // expected-error @+1 {{'tensor.extract_slice' op has no correct distribution: dim 0 is split over mesh axis 0 (dp) and the slice does not take it whole: each process would take a different part of the global tensor}}
  %a = tensor.extract_slice %x[1, 0] [2, 8] [1, 1] : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<2x8xf32, #dist.tensor<#mesh, [0, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @slice_declared_replicated(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // expected-error @+1 {{'tensor.extract_slice' op has no correct distribution: the sliced tensor's dim 0 is replicated but dim 0 of the whole is split over mesh axis 0 (dp)}}
  %a = tensor.extract_slice %x[0, 0] [4, 8] [1, 1] : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @drop_split_dim(%x: tensor<1x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // expected-error @+1 {{dim 0 is split over mesh axis 0 (dp) and dropped by the slice}}
  %a = tensor.extract_slice %x[0, 0] [1, 8] [1, 1] : tensor<1x8xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<8xf32, #dist.tensor<#mesh, [-1]>>
  return
}

// -----

// A replicated slice inserted into a partial sum would be counted per process.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @insert_unlike_partials(%s: tensor<4x2xf32, #dist.tensor<#mesh, [0, -1]>>,
                                  %d: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>) {
  // expected-error @+1 {{'tensor.insert_slice' op has no correct distribution: the source and the destination are not partial alike: a part that is not partial would be counted once per process}}
  %r = tensor.insert_slice %s into %d[0, 0] [4, 2] [1, 1] : tensor<4x2xf32, #dist.tensor<#mesh, [0, -1]>> into tensor<4x8xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @concat_split_dim(%x: tensor<2x8xf32, #dist.tensor<#mesh, [0, -1]>>, %y: tensor<2x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // expected-error @+1 {{'tensor.concat' op has no correct distribution: the concatenated dim 0 is split over mesh axis 0 (dp): the local concatenation would interleave the shards}}
  %c = tensor.concat dim(0) %x, %y : (tensor<2x8xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<2x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @concat_differently_split(%x: tensor<2x8xf32, #dist.tensor<#mesh, [0, -1]>>, %y: tensor<2x8xf32, #dist.tensor<#mesh, [-1, -1]>>) {
  // expected-error @+1 {{operand #1 is split differently from operand #0}}
  %c = tensor.concat dim(1) %x, %y : (tensor<2x8xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<2x8xf32, #dist.tensor<#mesh, [-1, -1]>>) -> tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @pad_split_dim(%x: tensor<2x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'tensor.pad' op has no correct distribution: dim 0 is split over mesh axis 0 (dp) and padded: every process would pad its shard}}
  %p = tensor.pad %x low[1, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<2x8xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<3x8xf32, #dist.tensor<#mesh, [0, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @pad_partial_with_one(%x: tensor<2x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>) {
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{'tensor.pad' op has no correct distribution: the source is partial (sum) over mesh axis 1 (mp) and the padding is not a constant zero: every process would add it}}
  %p = tensor.pad %x low[0, 1] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %one : f32
  } : tensor<2x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>> to tensor<2x9xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>
  return
}
