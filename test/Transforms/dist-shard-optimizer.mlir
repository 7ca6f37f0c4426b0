// RUN: dist-opt %s --dist-shard-optimizer -split-input-file | FileCheck %s
// RUN: dist-opt %s --dist-shard-optimizer=stage=2 -split-input-file | FileCheck %s --check-prefix=STAGE2
// RUN: dist-opt %s --dist-shard-optimizer -split-input-file --dist-verify-distributions -o /dev/null
// RUN: dist-opt %s --dist-shard-optimizer=stage=2 -split-input-file --dist-verify-distributions -o /dev/null
// RUN: dist-opt %s -split-input-file --dist-overlap-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=BEFORE
// RUN: dist-opt %s --dist-shard-optimizer -split-input-file --dist-overlap-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER
// RUN: dist-opt %s --dist-shard-optimizer=stage=2 -split-input-file --dist-overlap-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER2

// The report reads the states' memory from the types: 472 bytes per
// process before, 240 after (52 + 4 + 4 elements of 104 + 7 + 7: each
// state halved, and padded). The allreduces become reduce-scatters of the
// padded gradients and all-gathers of the parameters (and, at stage 1, of
// the gradients returned whole).
// BEFORE: @step per process: 2 x dist.allreduce (444 B); {{.*}}; optimizer states 472 B (unsharded 472 B)
// AFTER: @step per process: 4 x dist.all_gather (896 B), 2 x dist.reduce_scatter (448 B); {{.*}}; optimizer states 240 B (unsharded 472 B)
// AFTER2: @step per process: 2 x dist.all_gather (448 B), 2 x dist.reduce_scatter (448 B); {{.*}}; optimizer states 240 B (unsharded 472 B)

#mesh = #dist.mesh<shape = [2], names = ["dp"]>
!W = tensor<13x8xf32, #dist.tensor<#mesh, [-1, -1]>>
!Wp = tensor<13x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
!B = tensor<7xf32, #dist.tensor<#mesh, [-1]>>
!Bp = tensor<7xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>

// 13 x 8 = 104 elements make 2 rows of 52; the bias's 7 make 2 rows of 4,
// the last element of the second row padding. Each process keeps one row
// of each state: the velocity's 52 elements instead of 104, each moment's
// 4 instead of 7.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[W:[^:]*]]: tensor<13x8xf32, #dist.tensor<#mesh, [-1, -1]>> {dist.param = "w"}
// CHECK-SAME: %[[V:[^:]*]]: tensor<1x52xf32, #dist.tensor<#mesh, [0, -1]>> {dist.state = "w"}
// CHECK-SAME: %[[B:[^:]*]]: tensor<7xf32, #dist.tensor<#mesh, [-1]>> {dist.param = "b"}
// CHECK-SAME: %[[M:[^:]*]]: tensor<1x4xf32, #dist.tensor<#mesh, [0, -1]>> {dist.state = "b"}
// CHECK-SAME: %[[U:[^:]*]]: tensor<1x4xf32, #dist.tensor<#mesh, [0, -1]>> {dist.state = "b"}
// CHECK-SAME: %[[T:[^:]*]]: tensor<f32>, %[[GP:arg6]]: {{.*}}, %[[BP:arg7]]:
// CHECK-SAME: -> (tensor<13x8xf32, #dist.tensor<#mesh, [-1, -1]>> {dist.grad = "w"}, tensor<13x8xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<1x52xf32, #dist.tensor<#mesh, [0, -1]>> {dist.state = "w"}, tensor<7xf32, #dist.tensor<#mesh, [-1]>> {dist.grad = "b"}, tensor<7xf32, #dist.tensor<#mesh, [-1]>>, tensor<1x4xf32, #dist.tensor<#mesh, [0, -1]>> {dist.state = "b"}, tensor<1x4xf32, #dist.tensor<#mesh, [0, -1]>> {dist.state = "b"})
// The allreduces become reduce-scatters of the packed gradients, in their
// places.
// CHECK-NOT: dist.allreduce
// CHECK: %[[GR:.*]] = dist.pack %[[GP]] : tensor<13x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<2x52xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
// CHECK: %[[GS:.*]] = dist.reduce_scatter %[[GR]] on #mesh axes = [0] reduce = sum : tensor<2x52xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<1x52xf32, #dist.tensor<#mesh, [0, -1]>>
// CHECK: %[[BR:.*]] = dist.pack %[[BP]] : {{.*}} -> tensor<2x4xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
// CHECK: %[[BS:.*]] = dist.reduce_scatter %[[BR]] on #mesh axes = [0] reduce = sum : {{.*}} -> tensor<1x4xf32, #dist.tensor<#mesh, [0, -1]>>
// The parameter is sliced, updated as a shard, gathered and unpacked.
// CHECK: %[[WR:.*]] = dist.pack %[[W]] : tensor<13x8xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<2x52xf32, #dist.tensor<#mesh, [-1, -1]>>
// CHECK: %[[WS:.*]] = dist.all_slice %[[WR]] on #mesh axes = [0] : tensor<2x52xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<1x52xf32, #dist.tensor<#mesh, [0, -1]>>
// CHECK: %[[W1:.*]], %[[V1:.*]] = dist.sgd %[[WS]], %[[GS]], %[[V]] lr = 1.000000e-01 momentum = 9.000000e-01 : (tensor<1x52xf32, {{.*}}) -> (tensor<1x52xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<1x52xf32, #dist.tensor<#mesh, [0, -1]>>)
// CHECK: %[[WG:.*]] = dist.all_gather %[[W1]] on #mesh axes = [0] : tensor<1x52xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<2x52xf32, #dist.tensor<#mesh, [-1, -1]>>
// CHECK: %[[WNEW:.*]] = dist.unpack %[[WG]] : tensor<2x52xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<13x8xf32, #dist.tensor<#mesh, [-1, -1]>>
// CHECK: %[[BSL:.*]] = dist.all_slice
// CHECK: %[[B1:.*]], %[[M1:.*]], %[[U1:.*]] = dist.adamw %[[BSL]], %[[BS]], %[[M]], %[[U]], %[[T]]
// CHECK: %[[BNEW:.*]] = dist.unpack
// Stage 1 returns the gradients whole: gathered before the return.
// CHECK: %[[GG:.*]] = dist.all_gather %[[GS]] on #mesh axes = [0]
// CHECK: %[[GW:.*]] = dist.unpack %[[GG]] : {{.*}} -> tensor<13x8xf32, #dist.tensor<#mesh, [-1, -1]>>
// CHECK: %[[BG:.*]] = dist.all_gather %[[BS]] on #mesh axes = [0]
// CHECK: %[[BW:.*]] = dist.unpack %[[BG]]
// CHECK: return %[[GW]], %[[WNEW]], %[[V1]], %[[BW]], %[[BNEW]], %[[M1]], %[[U1]]

// Stage 2 returns each process's shard of the gradients, and gathers none.
// STAGE2-LABEL: func.func @step(
// STAGE2-SAME: -> (tensor<1x52xf32, #dist.tensor<#mesh, [0, -1]>> {dist.grad = "w"}, tensor<13x8xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<1x52xf32, #dist.tensor<#mesh, [0, -1]>> {dist.state = "w"}, tensor<1x4xf32, #dist.tensor<#mesh, [0, -1]>> {dist.grad = "b"},
// STAGE2: %[[GS:.*]] = dist.reduce_scatter
// STAGE2: %[[BS:.*]] = dist.reduce_scatter
// STAGE2-COUNT-2: dist.all_gather
// STAGE2-NOT: dist.all_gather
// STAGE2: return %[[GS]], %{{.*}}, %{{.*}}, %[[BS]],
func.func @step(%w: !W {dist.param = "w"}, %v: !W {dist.state = "w"},
                %b: !B {dist.param = "b"}, %m: !B {dist.state = "b"},
                %u: !B {dist.state = "b"}, %t: tensor<f32>,
                %gp: !Wp, %bp: !Bp)
    -> (!W {dist.grad = "w"}, !W, !W {dist.state = "w"},
        !B {dist.grad = "b"}, !B, !B {dist.state = "b"}, !B {dist.state = "b"}) {
  %g = dist.allreduce %gp on #mesh axes = [0] reduce = sum : !Wp -> !W
  %bg = dist.allreduce %bp on #mesh axes = [0] reduce = sum : !Bp -> !B
  %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9
      : (!W, !W, !W) -> (!W, !W)
  %b1, %m1, %u1 = dist.adamw %b, %bg, %m, %u, %t lr = 0.01 beta1 = 0.9
      beta2 = 0.999 epsilon = 1.0e-8 : (!B, !B, !B, !B, tensor<f32>) -> (!B, !B, !B)
  return %g, %w1, %v1, %bg, %b1, %m1, %u1 : !W, !W, !W, !B, !B, !B, !B
}

// -----

// The calls follow the new signature: a whole state is packed and sliced
// before the first call, a state one call returns goes to the next as it
// is, and the last is gathered and unpacked for its other uses.
#mesh = #dist.mesh<shape = [4], names = ["dp"]>
!W = tensor<5xf32, #dist.tensor<#mesh, [-1]>>
!Wp = tensor<5xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>

func.func @step(%w: !W {dist.param = "w"}, %v: !W {dist.state = "w"}, %gp: !Wp)
    -> (!W, !W {dist.state = "w"}) {
  %g = dist.allreduce %gp on #mesh axes = [0] reduce = sum : !Wp -> !W
  %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9
      : (!W, !W, !W) -> (!W, !W)
  return %w1, %v1 : !W, !W
}

// CHECK-LABEL: func.func @loop(
// CHECK-SAME: %[[W:arg0]]: {{.*}}, %[[V:arg1]]: {{.*}}, %[[GP:arg2]]:
// CHECK: %[[R:.*]] = dist.pack %[[V]] : tensor<5xf32, #dist.tensor<#mesh, [-1]>> -> tensor<4x2xf32, #dist.tensor<#mesh, [-1, -1]>>
// CHECK: %[[S:.*]] = dist.all_slice %[[R]] on #mesh axes = [0] : tensor<4x2xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<1x2xf32, #dist.tensor<#mesh, [0, -1]>>
// CHECK: %[[C1:.*]]:2 = call @step(%[[W]], %[[S]], %[[GP]]) : (tensor<5xf32, #dist.tensor<#mesh, [-1]>>, tensor<1x2xf32, #dist.tensor<#mesh, [0, -1]>>, {{.*}}) -> (tensor<5xf32, #dist.tensor<#mesh, [-1]>>, tensor<1x2xf32, #dist.tensor<#mesh, [0, -1]>>)
// CHECK-NOT: dist.all_gather
// CHECK: %[[C2:.*]]:2 = call @step(%[[C1]]#0, %[[C1]]#1, %[[GP]])
// CHECK: %[[G:.*]] = dist.all_gather %[[C2]]#1 on #mesh axes = [0]
// CHECK: %[[WHOLE:.*]] = dist.unpack %[[G]] : tensor<4x2xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<5xf32, #dist.tensor<#mesh, [-1]>>
// CHECK: return %[[C2]]#0, %[[WHOLE]]
func.func @loop(%w: !W, %v: !W, %gp: !Wp) -> (!W, !W) {
  %a:2 = call @step(%w, %v, %gp) : (!W, !W, !Wp) -> (!W, !W)
  %b:2 = call @step(%a#0, %a#1, %gp) : (!W, !W, !Wp) -> (!W, !W)
  return %b#0, %b#1 : !W, !W
}

// -----

// With tensor parallelism on the other axis each process packs its own
// shard of the parameter: the rows are split over tp as the parameter is.
// A gradient partial over both axes is reduced over tp first, then
// reduce-scattered over dp.
#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "tp"]>
!W = tensor<13x6xf32, #dist.tensor<#mesh, [-1, 1]>>
!Wp = tensor<13x6xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
!L = tensor<5xf32, #dist.tensor<#mesh, [-1]>>
!Lp = tensor<5xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum, 1 : sum]>>

// CHECK-LABEL: func.func @tensor_parallel(
// CHECK-SAME: tensor<1x39xf32, #dist.tensor<#mesh, [0, 1]>> {dist.state = "w"}
// CHECK-SAME: tensor<1x3xf32, #dist.tensor<#mesh, [0, -1]>> {dist.state = "ln"}
// CHECK: dist.pack %{{.*}} : tensor<13x6xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>> -> tensor<2x39xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
// CHECK: dist.reduce_scatter %{{.*}} on #mesh axes = [0] reduce = sum : tensor<2x39xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>> -> tensor<1x39xf32, #dist.tensor<#mesh, [0, 1]>>
// CHECK: %[[TP:.*]] = dist.allreduce %{{.*}} on #mesh axes = [1] reduce = sum : tensor<5xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum, 1 : sum]>> -> tensor<5xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
// CHECK: %[[LR:.*]] = dist.pack %[[TP]] : tensor<5xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
// CHECK: dist.reduce_scatter %[[LR]] on #mesh axes = [0] reduce = sum
// CHECK: dist.all_gather %{{.*}} on #mesh axes = [0] : tensor<1x39xf32, #dist.tensor<#mesh, [0, 1]>> -> tensor<2x39xf32, #dist.tensor<#mesh, [-1, 1]>>
// CHECK: dist.unpack %{{.*}} : tensor<2x39xf32, #dist.tensor<#mesh, [-1, 1]>> -> tensor<13x6xf32, #dist.tensor<#mesh, [-1, 1]>>
func.func @tensor_parallel(%w: !W {dist.param = "w"}, %v: !W {dist.state = "w"},
                           %ln: !L {dist.param = "ln"}, %lv: !L {dist.state = "ln"},
                           %gp: !Wp, %lp: !Lp)
    -> (!W, !W {dist.state = "w"}, !L, !L {dist.state = "ln"}) {
  %g = dist.allreduce %gp on #mesh axes = [0] reduce = sum : !Wp -> !W
  %lg = dist.allreduce %lp on #mesh axes = [0, 1] reduce = sum : !Lp -> !L
  %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9 : (!W, !W, !W) -> (!W, !W)
  %l1, %lv1 = dist.sgd %ln, %lg, %lv lr = 0.1 momentum = 0.9 : (!L, !L, !L) -> (!L, !L)
  return %w1, %v1, %l1, %lv1 : !W, !W, !L, !L
}

// -----

// A gradient already whole over dp (here an argument) is sliced where it
// is made, not reduced.
#mesh = #dist.mesh<shape = [2], names = ["dp"]>
!W = tensor<4xf32, #dist.tensor<#mesh, [-1]>>
// CHECK-LABEL: func.func @whole_gradient(
// CHECK-SAME: %[[W:arg0]]: {{.*}}, %[[V:arg1]]: {{.*}}, %[[G:arg2]]:
// CHECK-NEXT: %[[R:.*]] = dist.pack %[[G]] : tensor<4xf32, #dist.tensor<#mesh, [-1]>> -> tensor<2x2xf32, #dist.tensor<#mesh, [-1, -1]>>
// CHECK-NEXT: %[[S:.*]] = dist.all_slice %[[R]] on #mesh axes = [0]
// CHECK-NOT: dist.reduce_scatter
// CHECK: dist.sgd %{{.*}}, %[[S]], %[[V]]
func.func @whole_gradient(%w: !W {dist.param = "w"}, %v: !W {dist.state = "w"}, %g: !W)
    -> (!W, !W {dist.state = "w"}) {
  %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9 : (!W, !W, !W) -> (!W, !W)
  return %w1, %v1 : !W, !W
}

// -----

// Nothing to shard over: no data-parallel axis, or one of size 1, or no
// mesh at all.
#mesh = #dist.mesh<shape = [2], names = ["tp"]>
#one = #dist.mesh<shape = [1, 2], names = ["dp", "tp"]>
!W = tensor<4xf32, #dist.tensor<#mesh, [-1]>>
!O = tensor<4xf32, #dist.tensor<#one, [-1]>>
// CHECK-LABEL: func.func @nothing(
// CHECK-NOT: dist.pack
// CHECK: dist.sgd %arg0, %arg2, %arg1
// CHECK: dist.sgd %arg3, %arg5, %arg4
// CHECK: dist.sgd %arg6, %arg8, %arg7
func.func @nothing(%w: !W {dist.param = "w"}, %v: !W {dist.state = "w"}, %g: !W,
                   %o: !O {dist.param = "o"}, %ov: !O {dist.state = "o"}, %og: !O,
                   %p: tensor<4xf32> {dist.param = "p"}, %pv: tensor<4xf32> {dist.state = "p"}, %pg: tensor<4xf32>)
    -> (!W, !W {dist.state = "w"}, !O, !O {dist.state = "o"}, tensor<4xf32>, tensor<4xf32> {dist.state = "p"}) {
  %w1, %v1 = dist.sgd %w, %g, %v lr = 0.1 momentum = 0.9 : (!W, !W, !W) -> (!W, !W)
  %o1, %ov1 = dist.sgd %o, %og, %ov lr = 0.1 momentum = 0.9 : (!O, !O, !O) -> (!O, !O)
  %p1, %pv1 = dist.sgd %p, %pg, %pv lr = 0.1 momentum = 0.9
      : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %w1, %v1, %o1, %ov1, %p1, %pv1 : !W, !W, !O, !O, tensor<4xf32>, tensor<4xf32>
}
