// RUN: dist-opt %s --dist-matmul-grad-overlap="remarks=true" -verify-diagnostics | FileCheck %s
// Idempotent: a second run changes nothing more.
// RUN: dist-opt %s --dist-matmul-grad-overlap | dist-opt --dist-matmul-grad-overlap --dist-verify-distributions | FileCheck %s
// New ops say which rewrite made them.
// RUN: dist-opt %s --dist-matmul-grad-overlap --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>

// The column-parallel backward: dX is partial over mp, dY is not.
// CHECK-LABEL: func @split_rank2
// CHECK-SAME: (%[[X:.*]]: tensor<8x64xf32>, %[[Y:.*]]: tensor<64x32xf32, {{.*}}>, %[[DOUT:.*]]: tensor<8x32xf32, {{.*}}>)
// CHECK-NEXT: %[[DX:.*]] = dist.matmul %[[DOUT]], %[[Y]] transpose_y : {{.*}} -> tensor<8x64xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>
// CHECK-NEXT: %[[R:.*]] = dist.allreduce %[[DX]] on #mesh axes = [1] reduce = sum stream = mp : {{.*}} -> tensor<8x64xf32, #dist.tensor<#mesh, [-1, -1]>>
// CHECK-NEXT: %[[DY:.*]] = dist.matmul %[[X]], %[[DOUT]] transpose_x : tensor<8x64xf32>, {{.*}} -> tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>
// CHECK-NEXT: %[[S:.*]] = dist.scale %[[DY]] by 5.000000e-01
// CHECK-NEXT: return %[[R]], %[[S]]
// CHECK-NOT: dist.matmul_grad
// LOC-LABEL: func @split_rank2
// LOC: dist.matmul {{.*}} transpose_y {{.*}} loc(#[[L1:loc[0-9]*]])
// LOC: dist.allreduce {{.*}} loc(#[[L2:loc[0-9]*]])
// LOC: dist.matmul {{.*}} transpose_x {{.*}} loc(#[[L1]])
// LOC-DAG: #[[L1]] = loc(fused<"dist-matmul-grad-overlap">[#{{.*}}])
// LOC-DAG: #[[L2]] = loc(fused<"dist-matmul-grad-overlap">[#{{.*}}])
func.func @split_rank2(%x: tensor<8x64xf32>,
    %y: tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>,
    %dout: tensor<8x32xf32, #dist.tensor<#mesh, [-1, 1]>>)
    -> (tensor<8x64xf32, #dist.tensor<#mesh, [-1, -1]>>,
        tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>) {
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<8x64xf32>, tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>,
        tensor<8x32xf32, #dist.tensor<#mesh, [-1, 1]>>
      -> tensor<8x64xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>,
         tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>
  // Reads dY between the matmul_grad and the allreduce (PaddlePaddle PR
  // 61865 left such a reader above the new dY matmul): it must come after it.
  %s = dist.scale %dy by 0.5 : tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum
      : tensor<8x64xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>
      -> tensor<8x64xf32, #dist.tensor<#mesh, [-1, -1]>>
  return %r, %s : tensor<8x64xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>
}

// Sequence parallelism: dX of the column-parallel backward is summed onto
// sequence shards by a reduce-scatter, which moves up the same way.
// CHECK-LABEL: func @split_reduce_scatter
// CHECK-SAME: (%[[X:.*]]: tensor<4x16x64xf32>, %[[Y:.*]]: tensor<64x32xf32, {{.*}}>, %[[DOUT:.*]]: tensor<4x16x32xf32, {{.*}}>)
// CHECK-NEXT: %[[DX:.*]] = dist.matmul %[[DOUT]], %[[Y]] transpose_y : {{.*}} -> tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1], partial = [1 : sum]>>
// CHECK-NEXT: %[[R:.*]] = dist.reduce_scatter %[[DX]] on #mesh axes = [1] reduce = sum stream = mp : {{.*}} -> tensor<4x4x64xf32, #dist.tensor<#mesh, [-1, 1, -1]>>
// CHECK-NEXT: %[[X2:.*]] = tensor.collapse_shape %[[X]]
// CHECK-NEXT: %[[D2:.*]] = tensor.collapse_shape %[[DOUT]]
// CHECK-NEXT: %[[DY:.*]] = dist.matmul %[[X2]], %[[D2]] transpose_x
// CHECK-NEXT: return %[[R]], %[[DY]]
func.func @split_reduce_scatter(%x: tensor<4x16x64xf32>,
    %y: tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>,
    %dout: tensor<4x16x32xf32, #dist.tensor<#mesh, [-1, -1, 1]>>)
    -> (tensor<4x4x64xf32, #dist.tensor<#mesh, [-1, 1, -1]>>,
        tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>) {
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<4x16x64xf32>, tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>,
        tensor<4x16x32xf32, #dist.tensor<#mesh, [-1, -1, 1]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1], partial = [1 : sum]>>,
         tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>
  %r = dist.reduce_scatter %dx on #mesh axes = [1] reduce = sum
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1], partial = [1 : sum]>>
      -> tensor<4x4x64xf32, #dist.tensor<#mesh, [-1, 1, -1]>>
  return %r, %dy : tensor<4x4x64xf32, #dist.tensor<#mesh, [-1, 1, -1]>>, tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>
}

// Rank 3: the leading dims of X and dOut are folded for the dY matmul, and
// the folded tensors keep the batch split over dp.
// CHECK-LABEL: func @split_rank3
// CHECK-SAME: (%[[X:.*]]: tensor<4x16x64xf32, {{.*}}>, %[[Y:.*]]: tensor<64x32xf32, {{.*}}>, %[[DOUT:.*]]: tensor<4x16x32xf32, {{.*}}>)
// CHECK-NEXT: %[[DX:.*]] = dist.matmul %[[DOUT]], %[[Y]] transpose_y : {{.*}} -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1], partial = [1 : sum]>>
// CHECK-NEXT: %[[R:.*]] = dist.allreduce %[[DX]] {{.*}} stream = mp
// CHECK-NEXT: %[[X2:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>> into tensor<64x64xf32, #dist.tensor<#mesh, [0, -1]>>
// CHECK-NEXT: %[[D2:.*]] = tensor.collapse_shape %[[DOUT]] {{\[\[}}0, 1], [2]] : tensor<4x16x32xf32, #dist.tensor<#mesh, [0, -1, 1]>> into tensor<64x32xf32, #dist.tensor<#mesh, [0, 1]>>
// CHECK-NEXT: %[[DY:.*]] = dist.matmul %[[X2]], %[[D2]] transpose_x : {{.*}} -> tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
// CHECK-NEXT: return %[[R]], %[[DY]]
func.func @split_rank3(%x: tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>,
    %y: tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>,
    %dout: tensor<4x16x32xf32, #dist.tensor<#mesh, [0, -1, 1]>>)
    -> (tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>,
        tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>) {
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>,
        tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1]>>,
        tensor<4x16x32xf32, #dist.tensor<#mesh, [0, -1, 1]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1], partial = [1 : sum]>>,
         tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1], partial = [1 : sum]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
  return %r, %dy : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>, tensor<64x32xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
}

// Ops between keep their relative order; the allreduce moves up past them,
// and what used its result (and dX after it) now uses the new values.
// CHECK-LABEL: func @keeps_order_and_rewires
// CHECK-NEXT: %[[DX:.*]] = dist.matmul %arg2, %arg1 transpose_y
// CHECK-NEXT: %[[R:.*]] = dist.allreduce %[[DX]]
// CHECK-NEXT: %[[DY:.*]] = dist.matmul %arg0, %arg2 transpose_x
// CHECK-NEXT: %[[A:.*]] = dist.scale %arg3 by 2.000000e+00
// CHECK-NEXT: %[[B:.*]] = dist.scale %[[A]] by 3.000000e+00
// CHECK-NEXT: %[[C:.*]] = dist.scale %[[R]] by 4.000000e+00
// CHECK-NEXT: %[[D:.*]] = dist.scale %[[DX]] by 5.000000e+00
// CHECK-NEXT: return %[[B]], %[[C]], %[[D]], %[[DY]]
func.func @keeps_order_and_rewires(%x: tensor<8x64xf32>, %y: tensor<64x32xf32>,
    %dout: tensor<8x32xf32>, %z: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<64x32xf32>) {
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<8x64xf32>, tensor<64x32xf32>, tensor<8x32xf32>
      -> tensor<8x64xf32>, tensor<64x32xf32>
  %a = dist.scale %z by 2.0 : tensor<4xf32>
  %b = dist.scale %a by 3.0 : tensor<4xf32>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum : tensor<8x64xf32> -> tensor<8x64xf32>
  %c = dist.scale %r by 4.0 : tensor<8x64xf32>
  // A read of the unreduced dX after the allreduce reads the new dX.
  %d = dist.scale %dx by 5.0 : tensor<8x64xf32>
  return %b, %c, %d, %dy : tensor<4xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<64x32xf32>
}

// Paddle's rule: reading dY between is fine, also when an op reads both dY
// and a value computed from dY.
// CHECK-LABEL: func @hazard_rule_allows
// CHECK: dist.matmul {{.*}} transpose_y
// CHECK-NEXT: dist.allreduce
// CHECK-NEXT: %[[DY:.*]] = dist.matmul {{.*}} transpose_x
// CHECK-NEXT: %[[A:.*]] = dist.scale %[[DY]]
// CHECK-NEXT: arith.addf %[[DY]], %[[A]]
func.func @hazard_rule_allows(%x: tensor<8x64xf32>, %y: tensor<64x32xf32>,
    %dout: tensor<8x32xf32>) -> (tensor<8x64xf32>, tensor<64x32xf32>) {
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<8x64xf32>, tensor<64x32xf32>, tensor<8x32xf32>
      -> tensor<8x64xf32>, tensor<64x32xf32>
  %a = dist.scale %dy by 2.0 : tensor<64x32xf32>
  %b = arith.addf %dy, %a : tensor<64x32xf32>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum : tensor<8x64xf32> -> tensor<8x64xf32>
  return %r, %b : tensor<8x64xf32>, tensor<64x32xf32>
}

// Several candidates in one function, one of them inside a region.
// CHECK-LABEL: func @several
// CHECK-NOT: dist.matmul_grad
// CHECK: dist.allreduce {{.*}} stream = mp
// CHECK: scf.execute_region
// CHECK: dist.allreduce {{.*}} stream = mp
// CHECK: dist.matmul {{.*}} transpose_x
// CHECK: scf.yield
func.func @several(%x: tensor<8x64xf32>, %y: tensor<64x32xf32>,
    %dout: tensor<8x32xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<8x64xf32>, tensor<64x32xf32>, tensor<8x32xf32>
      -> tensor<8x64xf32>, tensor<64x32xf32>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum : tensor<8x64xf32> -> tensor<8x64xf32>
  %n = scf.execute_region -> tensor<8x64xf32> {
    %dx2, %dy2 = dist.matmul_grad %x, %y, %dout
        : tensor<8x64xf32>, tensor<64x32xf32>, tensor<8x32xf32>
        -> tensor<8x64xf32>, tensor<64x32xf32>
    %r2 = dist.allreduce %dx2 on #mesh axes = [1] reduce = sum : tensor<8x64xf32> -> tensor<8x64xf32>
    scf.yield %r2 : tensor<8x64xf32>
  }
  return %r, %n : tensor<8x64xf32>, tensor<8x64xf32>
}

// A transposed y (a PyTorch weight, [out, in], column-parallel by its
// rows): dX = dOut * Y, dY = dOut^T * X with the leading dims folded.
// CHECK-LABEL: func @split_transposed_y
// CHECK-SAME: (%[[X:.*]]: tensor<4x16x64xf32>, %[[Y:.*]]: tensor<8x64xf32, {{.*}}>, %[[DOUT:.*]]: tensor<4x16x8xf32, {{.*}}>)
// CHECK-NEXT: %[[DX:.*]] = dist.matmul %[[DOUT]], %[[Y]] : {{.*}} -> tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1], partial = [1 : sum]>>
// CHECK-NEXT: %[[R:.*]] = dist.allreduce %[[DX]] on #mesh axes = [1] reduce = sum stream = mp
// CHECK-NEXT: %[[X2:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]]
// CHECK-NEXT: %[[D2:.*]] = tensor.collapse_shape %[[DOUT]] {{\[}}[0, 1], [2]]
// CHECK-NEXT: %[[DY:.*]] = dist.matmul %[[D2]], %[[X2]] transpose_x : tensor<64x8xf32, {{.*}}>, tensor<64x64xf32> -> tensor<8x64xf32, #dist.tensor<#mesh, [1, -1]>>
// CHECK-NEXT: return %[[R]], %[[DY]]
func.func @split_transposed_y(%x: tensor<4x16x64xf32>,
    %y: tensor<8x64xf32, #dist.tensor<#mesh, [1, -1]>>,
    %dout: tensor<4x16x8xf32, #dist.tensor<#mesh, [-1, -1, 1]>>)
    -> (tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1]>>, tensor<8x64xf32, #dist.tensor<#mesh, [1, -1]>>) {
  %dx, %dy = dist.matmul_grad %x, %y, %dout transpose_y
      : tensor<4x16x64xf32>, tensor<8x64xf32, #dist.tensor<#mesh, [1, -1]>>, tensor<4x16x8xf32, #dist.tensor<#mesh, [-1, -1, 1]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1], partial = [1 : sum]>>, tensor<8x64xf32, #dist.tensor<#mesh, [1, -1]>>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum : tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1], partial = [1 : sum]>> -> tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1]>>
  return %r, %dy : tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1]>>, tensor<8x64xf32, #dist.tensor<#mesh, [1, -1]>>
}

//===----------------------------------------------------------------------===//
// Where it must not fire: the IR is unchanged and a remark says why.
//===----------------------------------------------------------------------===//

// A transposed x is not split.
// CHECK-LABEL: func @transposed_x
// CHECK: dist.matmul_grad
func.func @transposed_x(%dout: tensor<8x32xf32>, %xt: tensor<64x8xf32>, %y2: tensor<64x32xf32>)
    -> tensor<64x8xf32> {
  // expected-remark @+1 {{not split: transpose_x is set; a matmul_grad is split with a plain or transposed y only}}
  %dxt, %dy2 = dist.matmul_grad %xt, %y2, %dout transpose_x
      : tensor<64x8xf32>, tensor<64x32xf32>, tensor<8x32xf32>
      -> tensor<64x8xf32>, tensor<64x32xf32>
  %r2 = dist.allreduce %dxt on #mesh axes = [1] reduce = sum : tensor<64x8xf32> -> tensor<64x8xf32>
  return %r2 : tensor<64x8xf32>
}

// CHECK-LABEL: func @no_allreduce
// CHECK-NEXT: dist.matmul_grad
func.func @no_allreduce(%x: tensor<8x64xf32>, %y: tensor<64x32xf32>,
    %dout: tensor<8x32xf32>) -> tensor<8x64xf32> {
  // expected-remark @+1 {{not split: x_grad is not reduced by a dist.allreduce or dist.reduce_scatter}}
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<8x64xf32>, tensor<64x32xf32>, tensor<8x32xf32>
      -> tensor<8x64xf32>, tensor<64x32xf32>
  %r = dist.allreduce %dy on #mesh axes = [1] reduce = sum : tensor<64x32xf32> -> tensor<64x32xf32>
  return %dx : tensor<8x64xf32>
}

// CHECK-LABEL: func @max_allreduce
// CHECK-NEXT: dist.matmul_grad
// CHECK-NEXT: dist.allreduce {{.*}} reduce = max :
func.func @max_allreduce(%x: tensor<8x64xf32>, %y: tensor<64x32xf32>,
    %dout: tensor<8x32xf32>) -> tensor<8x64xf32> {
  // expected-remark @+1 {{not split: x_grad is reduced with 'max', not 'sum'}}
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<8x64xf32>, tensor<64x32xf32>, tensor<8x32xf32>
      -> tensor<8x64xf32>, tensor<64x32xf32>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = max : tensor<8x64xf32> -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// CHECK-LABEL: func @two_allreduces
// CHECK-NEXT: dist.matmul_grad
func.func @two_allreduces(%x: tensor<8x64xf32>, %y: tensor<64x32xf32>,
    %dout: tensor<8x32xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  // expected-remark @+1 {{not split: x_grad is reduced by more than one dist.allreduce or dist.reduce_scatter}}
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<8x64xf32>, tensor<64x32xf32>, tensor<8x32xf32>
      -> tensor<8x64xf32>, tensor<64x32xf32>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum : tensor<8x64xf32> -> tensor<8x64xf32>
  %q = dist.allreduce %dx on #mesh axes = [0] reduce = sum : tensor<8x64xf32> -> tensor<8x64xf32>
  return %r, %q : tensor<8x64xf32>, tensor<8x64xf32>
}

// CHECK-LABEL: func @allreduce_in_region
// CHECK-NEXT: dist.matmul_grad
func.func @allreduce_in_region(%x: tensor<8x64xf32>, %y: tensor<64x32xf32>,
    %dout: tensor<8x32xf32>) -> tensor<8x64xf32> {
  // expected-remark @+1 {{not split: the dist.allreduce of x_grad is in another block}}
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<8x64xf32>, tensor<64x32xf32>, tensor<8x32xf32>
      -> tensor<8x64xf32>, tensor<64x32xf32>
  %n = scf.execute_region -> tensor<8x64xf32> {
    %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum : tensor<8x64xf32> -> tensor<8x64xf32>
    scf.yield %r : tensor<8x64xf32>
  }
  return %n : tensor<8x64xf32>
}

// Paddle's allreduce is in place: moving it up made this reader see the
// reduced dX. Here the reader keeps reading the unreduced matmul_grad result.
// CHECK-LABEL: func @dx_read_before_allreduce
// CHECK-NEXT: %[[DX:.*]], %{{.*}} = dist.matmul_grad
// CHECK-NEXT: %[[EARLY:.*]] = dist.scale %[[DX]] by 2.000000e+00
// CHECK-NEXT: dist.allreduce %[[DX]]
func.func @dx_read_before_allreduce(%x: tensor<8x64xf32>, %y: tensor<64x32xf32>,
    %dout: tensor<8x32xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  // expected-remark @+1 {{not split: x_grad is also read before its dist.allreduce, by 'dist.scale'; that read must keep seeing the unreduced value}}
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<8x64xf32>, tensor<64x32xf32>, tensor<8x32xf32>
      -> tensor<8x64xf32>, tensor<64x32xf32>
  %early = dist.scale %dx by 2.0 : tensor<8x64xf32>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum : tensor<8x64xf32> -> tensor<8x64xf32>
  return %early, %r : tensor<8x64xf32>, tensor<8x64xf32>
}

// Paddle's hazard rule: %b reads a value computed from dY but not dY itself.
// CHECK-LABEL: func @hazard_rule_blocks
// CHECK-NEXT: dist.matmul_grad
func.func @hazard_rule_blocks(%x: tensor<8x64xf32>, %y: tensor<64x32xf32>,
    %dout: tensor<8x32xf32>) -> (tensor<8x64xf32>, tensor<64x32xf32>) {
  // expected-remark @+1 {{not split: 'dist.scale' between the matmul_grad and the reduction reads a value computed from y_grad but not y_grad itself (Paddle's hazard rule)}}
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<8x64xf32>, tensor<64x32xf32>, tensor<8x32xf32>
      -> tensor<8x64xf32>, tensor<64x32xf32>
  %a = dist.scale %dy by 2.0 : tensor<64x32xf32>
  %b = dist.scale %a by 3.0 : tensor<64x32xf32>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum : tensor<8x64xf32> -> tensor<8x64xf32>
  return %r, %b : tensor<8x64xf32>, tensor<64x32xf32>
}

// CHECK-LABEL: func @leading_dims_differ
// CHECK-NEXT: dist.matmul_grad
func.func @leading_dims_differ(%x: tensor<?x16x64xf32>, %y: tensor<64x32xf32>,
    %dout: tensor<4x16x32xf32>) -> tensor<?x16x64xf32> {
  // expected-remark @+1 {{not split: the leading dims of x and out_grad differ}}
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<?x16x64xf32>, tensor<64x32xf32>, tensor<4x16x32xf32>
      -> tensor<?x16x64xf32>, tensor<64x32xf32>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum : tensor<?x16x64xf32> -> tensor<?x16x64xf32>
  return %r : tensor<?x16x64xf32>
}

// CHECK-LABEL: func @batched_y
// CHECK-NEXT: dist.matmul_grad
func.func @batched_y(%x: tensor<4x16x64xf32>, %y: tensor<4x64x32xf32>,
    %dout: tensor<4x16x32xf32>) -> tensor<4x16x64xf32> {
  // expected-remark @+1 {{not split: y has rank 3; only a 2-D y is split (a batched y_grad is not a single matmul)}}
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<4x16x64xf32>, tensor<4x64x32xf32>, tensor<4x16x32xf32>
      -> tensor<4x16x64xf32>, tensor<4x64x32xf32>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum : tensor<4x16x64xf32> -> tensor<4x16x64xf32>
  return %r : tensor<4x16x64xf32>
}

// The sequence dim is split: folding it under the batch dim would interleave
// shards, which no encoding describes.
// CHECK-LABEL: func @inner_dim_split
// CHECK-NEXT: dist.matmul_grad
func.func @inner_dim_split(%x: tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, 0, -1]>>,
    %y: tensor<64x8xf32, #dist.tensor<#mesh, [-1, 1]>>, %dout: tensor<4x16x8xf32, #dist.tensor<#mesh, [-1, 0, 1]>>)
    -> tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, 0, -1]>> {
  // expected-remark @+1 {{not split: a leading dim of x or out_grad other than the outermost is split over the mesh, so they cannot be folded}}
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, 0, -1]>>, tensor<64x8xf32, #dist.tensor<#mesh, [-1, 1]>>,
        tensor<4x16x8xf32, #dist.tensor<#mesh, [-1, 0, 1]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, 0, -1], partial = [1 : sum]>>,
         tensor<64x8xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, 0, -1], partial = [1 : sum]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, 0, -1]>>
  return %r : tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, 0, -1]>>
}

// A second function is rewritten too.
// CHECK-LABEL: func @second_function
// CHECK-NOT: dist.matmul_grad
// CHECK: stream = mp
func.func @second_function(%x: tensor<8x64xf32>, %y: tensor<64x32xf32>,
    %dout: tensor<8x32xf32>) -> tensor<8x64xf32> {
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<8x64xf32>, tensor<64x32xf32>, tensor<8x32xf32>
      -> tensor<8x64xf32>, tensor<64x32xf32>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum : tensor<8x64xf32> -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}
