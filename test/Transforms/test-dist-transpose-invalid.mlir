// RUN: dist-opt --allow-unregistered-dialect --test-dist-transpose %s --split-input-file --verify-diagnostics
// What dist::buildTranspose refuses, with its reason.

#mesh = #dist.mesh<shape = [2, 4]>
func.func @not_a_redistribution(%x: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
                                %g: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>) {
  %y = arith.addf %x, %x : tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
  // expected-error @+1 {{no transpose: 'arith.addf' is not a redistribution}}
  %t = "test.transpose"(%y, %g)
      : (tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
         tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>)
      -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @other_global_shape(%x: tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>,
                              %g: tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
  %y = dist.all_gather %x on #mesh axes = [1]
      : tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>
      -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
  // expected-error @+1 {{no transpose: the cotangent 'tensor<8x8xf32, #dist.tensor<#dist.mesh<shape = [2, 4]>, [0, -1]>>' does not hold a tensor of the result's global type}}
  %t = "test.transpose"(%y, %g)
      : (tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
         tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>)
      -> tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @other_element_type(%x: tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>,
                              %g: tensor<8x16xf16, #dist.tensor<#mesh, [0, -1]>>) {
  %y = dist.all_gather %x on #mesh axes = [1]
      : tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>
      -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
  // expected-error @+1 {{does not hold a tensor of the result's global type}}
  %t = "test.transpose"(%y, %g)
      : (tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
         tensor<8x16xf16, #dist.tensor<#mesh, [0, -1]>>)
      -> tensor<8x4xf16, #dist.tensor<#mesh, [0, 1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
#other = #dist.mesh<shape = [8]>
func.func @other_mesh(%x: tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>,
                      %g: tensor<16x16xf32, #dist.tensor<#other, [-1, -1]>>) {
  %y = dist.all_gather %x on #mesh axes = [1]
      : tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>
      -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
  // expected-error @+1 {{no transpose: the cotangent is on mesh #dist.mesh<shape = [8]>, the result on mesh #dist.mesh<shape = [2, 4]>}}
  %t = "test.transpose"(%y, %g)
      : (tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
         tensor<16x16xf32, #dist.tensor<#other, [-1, -1]>>)
      -> tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>
  return
}

// -----

// The cotangent splits dim 1 over the untouched axis 0, where the operand
// of the all-gather over axis 1 needs dim 1 split by axis 1.
#mesh = #dist.mesh<shape = [2, 4]>
func.func @dim_split_twice(%x: tensor<16x2xf32, #dist.tensor<#mesh, [-1, 1]>>,
                           %g: tensor<16x4xf32, #dist.tensor<#mesh, [-1, 0]>>) {
  %y = dist.all_gather %x on #mesh axes = [1]
      : tensor<16x2xf32, #dist.tensor<#mesh, [-1, 1]>>
      -> tensor<16x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  // expected-error @+1 {{no transpose: dim 1 of the operand's cotangent would be split by mesh axes 0 and 1}}
  %t = "test.transpose"(%y, %g)
      : (tensor<16x8xf32, #dist.tensor<#mesh, [-1, -1]>>,
         tensor<16x4xf32, #dist.tensor<#mesh, [-1, 0]>>)
      -> tensor<16x2xf32, #dist.tensor<#mesh, [-1, 1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @declared_type(%x: tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>,
                         %g: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>) {
  %y = dist.all_gather %x on #mesh axes = [1]
      : tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>
      -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
  // expected-error @+1 {{the transpose is 'tensor<8x4xf32, #dist.tensor<#dist.mesh<shape = [2, 4]>, [0, 1]>>', not the declared 'tensor<8x16xf32, #dist.tensor<#dist.mesh<shape = [2, 4]>, [0, -1]>>'}}
  %t = "test.transpose"(%y, %g)
      : (tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
         tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>)
      -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
  return
}

// -----

// Dynamic shapes cannot be planned.
#mesh = #dist.mesh<shape = [2, 4]>
func.func @dynamic(%x: tensor<?x16xf32, #dist.tensor<#mesh, [0, -1]>>,
                   %g: tensor<?x16xf32, #dist.tensor<#mesh, [0, -1]>>) {
  %y = dist.make_partial %x on #mesh axes = [1] reduce = sum
      : tensor<?x16xf32, #dist.tensor<#mesh, [0, -1]>>
      -> tensor<?x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
  // expected-error @+1 {{no transpose: the value is not a statically shaped #dist.tensor}}
  %t = "test.transpose"(%y, %g)
      : (tensor<?x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>,
         tensor<?x16xf32, #dist.tensor<#mesh, [0, -1]>>)
      -> tensor<?x16xf32, #dist.tensor<#mesh, [0, -1]>>
  return
}
