// RUN: dist-opt %s | dist-opt | FileCheck %s
// RUN: dist-opt %s --mlir-print-op-generic | dist-opt | FileCheck %s
// RUN: dist-opt %s --verify-roundtrip | FileCheck %s
// The redistribution ops round-trip; a local shape changes with the split.

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>

// CHECK-LABEL: func @all_gather
func.func @all_gather(%x: tensor<4x2xf32, #dist.tensor<#mesh, [0, 1]>>) -> (tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // CHECK: dist.all_gather %{{.*}} on #{{.*}} axes = [0, 1] : tensor<4x2xf32, #dist.tensor<#{{.*}}, [0, 1]>> -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
  %a = dist.all_gather %x on #mesh axes = [0, 1] : tensor<4x2xf32, #dist.tensor<#mesh, [0, 1]>> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  // CHECK: dist.all_gather %{{.*}} on #{{.*}} axes = [1] stream = mp : tensor<4x2xf32, #dist.tensor<#{{.*}}, [0, 1]>> -> !dist.future<tensor<4x8xf32, #dist.tensor<#{{.*}}, [0, -1]>>>
  // CHECK-NEXT: dist.wait
  %f = dist.all_gather %x on #mesh axes = [1] stream = mp : tensor<4x2xf32, #dist.tensor<#mesh, [0, 1]>> -> !dist.future<tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>>
  %b = dist.wait %f : !dist.future<tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>>
  return %a, %b : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
}

// CHECK-LABEL: func @reduce_scatter
func.func @reduce_scatter(%p: tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum, 1 : max]>>) -> (tensor<8x2xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>, tensor<4x8xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : max]>>) {
  // CHECK: dist.reduce_scatter %{{.*}} on #{{.*}} axes = [1] reduce = max : tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum, 1 : max]>> -> tensor<8x2xf32, #dist.tensor<#{{.*}}, [-1, 1], partial = [0 : sum]>>
  %a = dist.reduce_scatter %p on #mesh axes = [1] reduce = max : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum, 1 : max]>> -> tensor<8x2xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
  // An avg of a partial sum: the mean of the terms.
  // CHECK: dist.reduce_scatter %{{.*}} on #{{.*}} axes = [0] reduce = avg
  %b = dist.reduce_scatter %p on #mesh axes = [0] reduce = avg : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum, 1 : max]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : max]>>
  return %a, %b : tensor<8x2xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>, tensor<4x8xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : max]>>
}

// CHECK-LABEL: func @all_to_all
func.func @all_to_all(%x: tensor<2x8xbf16, #dist.tensor<#mesh, [1, -1]>>) -> tensor<8x2xbf16, #dist.tensor<#mesh, [-1, 1]>> {
  // CHECK: dist.all_to_all %{{.*}} on #{{.*}} axes = [1] : tensor<2x8xbf16, #dist.tensor<#{{.*}}, [1, -1]>> -> tensor<8x2xbf16, #dist.tensor<#{{.*}}, [-1, 1]>>
  %a = dist.all_to_all %x on #mesh axes = [1] : tensor<2x8xbf16, #dist.tensor<#mesh, [1, -1]>> -> tensor<8x2xbf16, #dist.tensor<#mesh, [-1, 1]>>
  return %a : tensor<8x2xbf16, #dist.tensor<#mesh, [-1, 1]>>
}

// CHECK-LABEL: func @local
func.func @local(%x: tensor<8x8xi32, #dist.tensor<#mesh, [-1, -1]>>, %s: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> (tensor<8x2xi32, #dist.tensor<#mesh, [-1, 1]>>, tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>) {
  // CHECK: dist.all_slice %{{.*}} on #{{.*}} axes = [1] : tensor<8x8xi32, #dist.tensor<#{{.*}}, [-1, -1]>> -> tensor<8x2xi32, #dist.tensor<#{{.*}}, [-1, 1]>>
  %a = dist.all_slice %x on #mesh axes = [1] : tensor<8x8xi32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<8x2xi32, #dist.tensor<#mesh, [-1, 1]>>
  // CHECK: dist.make_partial %{{.*}} on #{{.*}} axes = [0] reduce = sum : tensor<4x8xf32, #dist.tensor<#{{.*}}, [0, -1]>> -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1], partial = [0 : sum]>>
  %b = dist.make_partial %s on #mesh axes = [0] reduce = sum : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
  return %a, %b : tensor<8x2xi32, #dist.tensor<#mesh, [-1, 1]>>, tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
}

// CHECK-LABEL: func @reshard
func.func @reshard(%x: tensor<4x2xf16, #dist.tensor<#mesh, [0, 1]>>) -> tensor<2x4xf16, #dist.tensor<#mesh, [1, 0]>> {
  // CHECK: dist.reshard %{{.*}} : tensor<4x2xf16, #dist.tensor<#{{.*}}, [0, 1]>> -> tensor<2x4xf16, #dist.tensor<#{{.*}}, [1, 0]>>
  %r = dist.reshard %x : tensor<4x2xf16, #dist.tensor<#mesh, [0, 1]>> -> tensor<2x4xf16, #dist.tensor<#mesh, [1, 0]>>
  return %r : tensor<2x4xf16, #dist.tensor<#mesh, [1, 0]>>
}
