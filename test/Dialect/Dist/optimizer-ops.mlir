// RUN: dist-opt %s | dist-opt | FileCheck %s
// RUN: dist-opt %s --mlir-print-op-generic | dist-opt | FileCheck %s
// RUN: dist-opt %s --verify-roundtrip | FileCheck %s
// RUN: dist-opt %s --canonicalize | FileCheck %s --check-prefix=CANON

// The optimizer updates and the packing ops round-trip, with and without
// encodings; weight_decay is printed only when set.

#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "tp"]>
!W = tensor<13x6xf32, #dist.tensor<#mesh, [-1, 1]>>
!Wp = tensor<13x6xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
!Rows = tensor<2x39xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
!Shard = tensor<1x39xf32, #dist.tensor<#mesh, [0, 1]>>

// CHECK-LABEL: func.func @sgd
// CHECK: %[[P:.*]], %[[V:.*]] = dist.sgd %arg0, %arg1, %arg2 lr = 1.000000e-01 momentum = 9.000000e-01 : (tensor<13x6xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<13x6xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<13x6xf32, #dist.tensor<#mesh, [-1, 1]>>) -> (tensor<13x6xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<13x6xf32, #dist.tensor<#mesh, [-1, 1]>>)
// CHECK: dist.sgd %arg3, %arg3, %arg3 lr = 1.000000e-01 momentum = 0.000000e+00 weight_decay = 1.000000e-02 : (tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>)
func.func @sgd(%w: !W, %g: !W, %v: !W, %b: tensor<4xbf16>) -> (!W, !W) {
  %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9
      : (!W, !W, !W) -> (!W, !W)
  %b1, %bv = dist.sgd %b, %b, %b lr = 0.1 momentum = 0.0 weight_decay = 0.01
      : (tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>)
  return %w1, %v1 : !W, !W
}

// CHECK-LABEL: func.func @adamw
// CHECK: dist.adamw %arg0, %arg1, %arg2, %arg3, %arg4 lr = 1.000000e-03 beta1 = 9.000000e-01 beta2 = 0.99899999999999999 epsilon = 1.000000e-08 weight_decay = 1.000000e-02 : (tensor<1x39xf32, #dist.tensor<#mesh, [0, 1]>>, tensor<1x39xf32, #dist.tensor<#mesh, [0, 1]>>, tensor<1x39xf32, #dist.tensor<#mesh, [0, 1]>>, tensor<1x39xf32, #dist.tensor<#mesh, [0, 1]>>, tensor<f32>)
func.func @adamw(%w: !Shard, %g: !Shard, %m: !Shard, %v: !Shard, %t: tensor<f32>)
    -> (!Shard, !Shard, !Shard) {
  %w1, %m1, %v1 = dist.adamw %w, %g, %m, %v, %t lr = 1.0e-3 beta1 = 0.9
      beta2 = 0.999 epsilon = 1.0e-8 weight_decay = 0.01
      : (!Shard, !Shard, !Shard, !Shard, tensor<f32>) -> (!Shard, !Shard, !Shard)
  return %w1, %m1, %v1 : !Shard, !Shard, !Shard
}

// A tensor split over tp packs into rows split over tp; 13 x 6 = 78
// elements in 2 rows of 39, 7 elements in 2 rows of 4 (one of padding).
// CHECK-LABEL: func.func @pack
// CHECK: %[[R:.*]] = dist.pack %arg0 : tensor<13x6xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>> -> tensor<2x39xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
// CHECK: dist.unpack %[[R]] : tensor<2x39xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>> -> tensor<13x6xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
// CHECK: dist.pack %arg1, %arg2 : tensor<7xf32>, tensor<f32> -> tensor<2x5xf32>
// CHECK: dist.unpack %arg3 : tensor<1x5xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<1x2xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<1x3xf32, #dist.tensor<#mesh, [0, -1]>>
// The unpack of a pack of the same types folds to the packed tensors.
// CANON-LABEL: func.func @pack
// CANON-NOT: dist.pack %arg0
// CANON-NOT: dist.unpack %{{[0-9]+}}
// CANON: %[[P:.*]]:2 = dist.unpack %arg3
// CANON: return %arg0, %{{.*}}, %[[P]]#0
func.func @pack(%g: !Wp, %a: tensor<7xf32>, %s: tensor<f32>,
                %row: tensor<1x5xf32, #dist.tensor<#mesh, [0, -1]>>)
    -> (!Wp, tensor<2x5xf32>, tensor<1x2xf32, #dist.tensor<#mesh, [0, -1]>>) {
  %r = dist.pack %g : !Wp -> !Rows
  %u = dist.unpack %r : !Rows -> !Wp
  %b = dist.pack %a, %s : tensor<7xf32>, tensor<f32> -> tensor<2x5xf32>
  %p:2 = dist.unpack %row : tensor<1x5xf32, #dist.tensor<#mesh, [0, -1]>>
      -> tensor<1x2xf32, #dist.tensor<#mesh, [0, -1]>>,
         tensor<1x3xf32, #dist.tensor<#mesh, [0, -1]>>
  return %u, %b, %p#0 : !Wp, tensor<2x5xf32>, tensor<1x2xf32, #dist.tensor<#mesh, [0, -1]>>
}

// The markers of optimizer state, on arguments and results.
// CHECK-LABEL: func.func @state
// CHECK-SAME: {dist.state = "w"}
// CHECK-SAME: -> (tensor<4xf32> {dist.state = "w"})
func.func @state(%m: tensor<4xf32> {dist.state = "w"}) -> (tensor<4xf32> {dist.state = "w"}) {
  return %m : tensor<4xf32>
}
