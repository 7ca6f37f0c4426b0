// RUN: dist-opt --split-input-file --dist-complete %s 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: dist-opt --split-input-file --dist-complete %s 2>/dev/null | FileCheck %s

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

// REMARK: dist-complete-remark-op.mlir:12:8: remark: completion: reshard of init #2 from replicated to [-1, -1] partial [0 : sum]
// REMARK: note: see current operation: %1 = linalg.matmul ins(%arg0, %arg1 : {{.*}}) outs(%0 : tensor<8x8xf32, #dist.tensor<{{.*}}, [-1, -1], partial = [0 : sum]>>) -> tensor<8x8xf32, #dist.tensor<{{.*}}, [-1, -1], partial = [0 : sum]>>
// CHECK-LABEL: func.func @init_conflict
// CHECK-NEXT: %0 = dist.reshard %arg2 : tensor<8x8xf32> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
// CHECK-NEXT: %1 = linalg.matmul

// -----

// A constraint that reshards its operand is erased once consumed: its
// remark shows the reshard that takes its place (at its location).
#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "mp"]>
func.func @pin_arg(%x: tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<4x16xf32> attributes {dist.complete} {
  %c = dist.constraint %x : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
  %y = math.exp %c : tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
  %u = tensor.cast %y : tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>> to tensor<4x16xf32>
  return %u : tensor<4x16xf32>
}

// REMARK: dist-complete-remark-op.mlir:28:8: remark: completion: reshard of operand #0 from [0, -1] to [1, -1]: 'dist.constraint' at
// REMARK: note: see current operation: %0 = dist.reshard %arg0 : tensor<4x16xf32, #dist.tensor<{{.*}}, [0, -1]>> -> tensor<4x16xf32, #dist.tensor<{{.*}}, [1, -1]>>
// CHECK-LABEL: func.func @pin_arg
// CHECK-NEXT: %0 = dist.reshard %arg0
// CHECK-NEXT: math.exp %0
