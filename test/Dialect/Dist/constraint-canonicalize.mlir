// RUN: dist-opt %s -canonicalize | FileCheck %s

#mesh = #dist.mesh<shape = [2, 4]>
// A constraint between equal types states what holds: its operand.
// CHECK-LABEL: func @constraint_holds
// CHECK-NEXT: return %arg0
func.func @constraint_holds(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> {
  %c = dist.constraint %x : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
  return %c : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
}
