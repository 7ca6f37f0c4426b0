// RUN: dist-opt %s | dist-opt | FileCheck %s
// RUN: dist-opt %s --mlir-print-op-generic | dist-opt | FileCheck %s

// A constraint, undecided in a marked function and stating what holds in
// an unmarked one.
// CHECK-LABEL: func @constraint
// CHECK: dist.constraint %{{.*}} : tensor<8x8xf32> -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-LABEL: func @constraint_marked
// CHECK-SAME: attributes {dist.complete}
// CHECK: dist.constraint %{{.*}} : tensor<8x8xf32> -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>>
func.func @constraint(%x: tensor<8x8xf32>) -> tensor<8x8xf32, #dist.tensor<#dist.mesh<shape = [2]>, [-1, -1]>> {
  %c = dist.constraint %x : tensor<8x8xf32> -> tensor<8x8xf32, #dist.tensor<#dist.mesh<shape = [2]>, [-1, -1]>>
  return %c : tensor<8x8xf32, #dist.tensor<#dist.mesh<shape = [2]>, [-1, -1]>>
}
func.func @constraint_marked(%x: tensor<8x8xf32>) -> tensor<8x8xf32, #dist.tensor<#dist.mesh<shape = [2]>, [-1, -1], partial = [0 : sum]>> attributes {dist.complete} {
  %e = math.exp %x : tensor<8x8xf32>
  %c = dist.constraint %e : tensor<8x8xf32> -> tensor<8x8xf32, #dist.tensor<#dist.mesh<shape = [2]>, [-1, -1], partial = [0 : sum]>>
  return %c : tensor<8x8xf32, #dist.tensor<#dist.mesh<shape = [2]>, [-1, -1], partial = [0 : sum]>>
}
