// RUN: dist-opt %s --dist-complete=replicate-unknown-ops=true -split-input-file -verify-diagnostics | FileCheck %s
// With replicate-unknown-ops, an op without a rule gets its partial
// operands completed; a split one is still an error (its types are written
// for the shard).

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// CHECK-LABEL: func.func @partial
// CHECK-NEXT: %[[Y:.*]] = dist.matmul
// CHECK-NEXT: %[[R:.*]] = dist.reshard %[[Y]] : tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>> -> tensor<8x8xf32>
// CHECK-NEXT: tensor.bitcast %[[R]] : tensor<8x8xf32> to tensor<8x8xi32>
func.func @partial(%x: tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>, %w: tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<8x8xi32> attributes {dist.complete} {
  %y = dist.matmul %x, %w : tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x8xf32>
  // expected-remark @+1 {{completion: 'tensor.bitcast' has no distribution rule: operand #0 completed from [-1, -1] partial [0 : sum]}}
  %b = tensor.bitcast %y : tensor<8x8xf32> to tensor<8x8xi32>
  return %b : tensor<8x8xi32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @split(%x: tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<8x8xi32> attributes {dist.complete} {
  // expected-error @+1 {{'tensor.bitcast' op has no distribution rule and takes a split tensor ([0, -1]): replicating it would change the local shape the op is written for}}
  %b = tensor.bitcast %x : tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<8x8xi32>
  return %b : tensor<8x8xi32>
}
