// The exported pattern, driven by MLIR's greedy driver as another compiler
// would, gives the same rewrite as the pass.
// RUN: dist-opt %s --test-dist-matmul-grad-overlap-patterns --dist-verify-distributions | FileCheck %s

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>

// CHECK-LABEL: func @split
// CHECK-NEXT: %[[DX:.*]] = dist.matmul %arg2, %arg1 transpose_y
// CHECK-NEXT: %[[R:.*]] = dist.allreduce %[[DX]] {{.*}} stream = mp
// CHECK-NEXT: %[[X:.*]] = tensor.collapse_shape %arg0
// CHECK-NEXT: %[[D:.*]] = tensor.collapse_shape %arg2
// CHECK-NEXT: %[[DY:.*]] = dist.matmul %[[X]], %[[D]] transpose_x
// CHECK-NEXT: return %[[R]], %[[DY]]
func.func @split(%x: tensor<4x8x64xf32>, %y: tensor<64x32xf32>,
    %dout: tensor<4x8x32xf32>) -> (tensor<4x8x64xf32>, tensor<64x32xf32>) {
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<4x8x64xf32>, tensor<64x32xf32>, tensor<4x8x32xf32>
      -> tensor<4x8x64xf32>, tensor<64x32xf32>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum : tensor<4x8x64xf32> -> tensor<4x8x64xf32>
  return %r, %dy : tensor<4x8x64xf32>, tensor<64x32xf32>
}

// CHECK-LABEL: func @not_split
// CHECK-NEXT: dist.matmul_grad
func.func @not_split(%x: tensor<8x64xf32>, %y: tensor<64x32xf32>,
    %dout: tensor<8x32xf32>) -> tensor<8x64xf32> {
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<8x64xf32>, tensor<64x32xf32>, tensor<8x32xf32>
      -> tensor<8x64xf32>, tensor<64x32xf32>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = max : tensor<8x64xf32> -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}
