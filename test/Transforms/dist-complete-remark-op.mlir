// RUN: dist-opt --dist-complete %s 2>&1 | FileCheck %s

// Completion emits its remarks once its decisions are written: the op a
// remark shows ("see current operation") is the op completed, with its
// reshards in place and its result decided. Half-way through (the init
// made partial, the result not yet decided) the op would not verify, and
// would print in the generic form.

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @init_conflict(%x: tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>, %w: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>, %z: tensor<8x8xf32>) -> tensor<8x8xf32> attributes {dist.complete} {
  %m = linalg.matmul ins(%x, %w : tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}

// CHECK: remark: completion: reshard of init #2 from replicated to [-1, -1] partial [0 : sum]
// CHECK: note: see current operation: %[[M:.*]] = linalg.matmul ins(%arg0, %arg1 : {{.*}}) outs(%[[I:.*]] : tensor<8x8xf32, #dist.tensor<{{.*}}, [-1, -1], partial = [0 : sum]>>) -> tensor<8x8xf32, #dist.tensor<{{.*}}, [-1, -1], partial = [0 : sum]>>
// CHECK: %[[I]] = dist.reshard %arg2 : tensor<8x8xf32> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
// CHECK-NEXT: %[[M]] = linalg.matmul
