// RUN: dist-opt %s --dist-verify-distributions -verify-diagnostics
// RUN: dist-opt %s --convert-dist-to-mpi -verify-diagnostics
// RUN: dist-opt %s --dist-matmul-grad-overlap -verify-diagnostics
// RUN: dist-opt %s --dist-complete | FileCheck %s
// A constraint is completion's input: what runs after completion refuses
// one that is left, and completion consumes it (here, an unencoded operand
// pinned replicated: a reshard that lowers to a cast).

// CHECK-LABEL: func.func @left
// CHECK-NEXT: %[[R:.*]] = dist.reshard %arg0 : tensor<8x8xf32> -> tensor<8x8xf32, #dist.tensor<#{{.*}}, [-1, -1]>>
// CHECK-NEXT: return %[[R]]
// CHECK-NOT: dist.constraint
func.func @left(%x: tensor<8x8xf32>) -> tensor<8x8xf32, #dist.tensor<#dist.mesh<shape = [2]>, [-1, -1]>> {
  // expected-error @+1 {{'dist.constraint' op is for completion, which consumes it: run --dist-complete first}}
  %c = dist.constraint %x : tensor<8x8xf32> -> tensor<8x8xf32, #dist.tensor<#dist.mesh<shape = [2]>, [-1, -1]>>
  return %c : tensor<8x8xf32, #dist.tensor<#dist.mesh<shape = [2]>, [-1, -1]>>
}
