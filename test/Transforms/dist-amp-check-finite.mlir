// RUN: dist-opt %s --dist-amp-check-finite --dist-verify-distributions -split-input-file | FileCheck %s
// Idempotent:
// RUN: dist-opt %s --dist-amp-check-finite -split-input-file | dist-opt --dist-amp-check-finite -split-input-file | FileCheck %s

// Mixed f16/f32 gradients on a [2, 4] mesh. The check comes right after the
// last gradient is computed; later uses (the optimizer update) read the
// unscaled gradients. found_inf is a partial MAX over the whole mesh until
// it is reduced as i32 (as Paddle does) and cast back, replicated.
// CHECK-LABEL: func.func @multi_process
// CHECK-SAME: (%[[W:.*]]: tensor<8x8xf32, {{.*}}>, %[[G0:.*]]: tensor<8xf16>, %[[G1:.*]]: tensor<8x8xf32, {{.*}}>, %[[LS:.*]]: tensor<1xf32> {dist.loss_scale})
// CHECK-SAME: -> (tensor<8xf16> {dist.grad = "b"}, tensor<8x8xf32, #dist.tensor<#mesh, [0, 1]>> {dist.grad = "w"}, tensor<8x8xf32, #dist.tensor<#mesh, [0, 1]>>, tensor<1xi1, #dist.tensor<#mesh, [-1]>> {dist.found_inf})
// CHECK-NEXT: %[[A:.*]] = dist.scale %[[G0]] by 1.000000e+00
// CHECK-NEXT: %[[B:.*]] = dist.scale %[[G1]] by 1.000000e+00
// CHECK-NEXT: %[[U:.*]]:2, %[[INF:.*]] = dist.check_finite_and_unscale %[[A]], %[[B]] scale %[[LS]] : (tensor<8xf16>, tensor<8x8xf32, #dist.tensor<#mesh, [0, 1]>>, tensor<1xf32>) -> (tensor<8xf16>, tensor<8x8xf32, #dist.tensor<#mesh, [0, 1]>>, tensor<1xi1, #dist.tensor<#mesh, [-1], partial = [0 : max, 1 : max]>>)
// CHECK-NEXT: %[[I:.*]] = arith.extui %[[INF]] : tensor<1xi1, {{.*}}> to tensor<1xi32, #dist.tensor<#mesh, [-1], partial = [0 : max, 1 : max]>>
// CHECK-NEXT: %[[M:.*]] = dist.allreduce %[[I]] on #mesh axes = [0, 1] reduce = max : {{.*}} -> tensor<1xi32, #dist.tensor<#mesh, [-1]>>
// CHECK-NEXT: %[[F:.*]] = arith.trunci %[[M]] : tensor<1xi32, #dist.tensor<#mesh, [-1]>> to tensor<1xi1, #dist.tensor<#mesh, [-1]>>
// CHECK-NEXT: %[[NEW:.*]] = arith.subf %[[W]], %[[U]]#1
// CHECK-NEXT: return %[[U]]#0, %[[U]]#1, %[[NEW]], %[[F]]
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @multi_process(%w: tensor<8x8xf32, #dist.tensor<#mesh, [0, 1]>>,
    %g0: tensor<8xf16>, %g1: tensor<8x8xf32, #dist.tensor<#mesh, [0, 1]>>,
    %ls: tensor<1xf32> {dist.loss_scale})
    -> (tensor<8xf16> {dist.grad = "b"}, tensor<8x8xf32, #dist.tensor<#mesh, [0, 1]>> {dist.grad = "w"},
        tensor<8x8xf32, #dist.tensor<#mesh, [0, 1]>>) {
  %a = dist.scale %g0 by 1.0 : tensor<8xf16>
  %b = dist.scale %g1 by 1.0 : tensor<8x8xf32, #dist.tensor<#mesh, [0, 1]>>
  %new = arith.subf %w, %b : tensor<8x8xf32, #dist.tensor<#mesh, [0, 1]>>
  return %a, %b, %new : tensor<8xf16>, tensor<8x8xf32, #dist.tensor<#mesh, [0, 1]>>, tensor<8x8xf32, #dist.tensor<#mesh, [0, 1]>>
}

// -----

// One process: no allreduce; found_inf is replicated on that mesh.
// CHECK-LABEL: func.func @single_process
// CHECK-NEXT: %[[U:.*]], %[[INF:.*]] = dist.check_finite_and_unscale %arg0 scale %arg1 : (tensor<4xf64, #dist.tensor<#mesh, [-1]>>, tensor<1xf32>) -> (tensor<4xf64, #dist.tensor<#mesh, [-1]>>, tensor<1xi1, #dist.tensor<#mesh, [-1]>>)
// CHECK-NEXT: return %[[U]], %[[INF]]
// CHECK-NOT: dist.allreduce
#mesh = #dist.mesh<shape = [1]>
func.func @single_process(%g: tensor<4xf64, #dist.tensor<#mesh, [-1]>>, %ls: tensor<1xf32> {dist.loss_scale})
    -> (tensor<4xf64, #dist.tensor<#mesh, [-1]>> {dist.grad = "p"}) {
  return %g : tensor<4xf64, #dist.tensor<#mesh, [-1]>>
}

// -----

// Unannotated gradients: nothing says there is more than one process.
// CHECK-LABEL: func.func @unannotated
// CHECK-SAME: -> (tensor<4xf32> {dist.grad = "p"}, tensor<1xi1> {dist.found_inf})
// CHECK-NEXT: %{{.*}}, %[[INF:.*]] = dist.check_finite_and_unscale %arg0 scale %arg1 : (tensor<4xf32>, tensor<1xf32>) -> (tensor<4xf32>, tensor<1xi1>)
// CHECK-NOT: dist.allreduce
func.func @unannotated(%g: tensor<4xf32>, %ls: tensor<1xf32> {dist.loss_scale})
    -> (tensor<4xf32> {dist.grad = "p"}) {
  return %g : tensor<4xf32>
}

// -----

// No loss scale, or no gradients: the function is not an AMP step.
// CHECK-LABEL: func.func @not_amp
// CHECK-NOT: dist.check_finite_and_unscale
func.func @not_amp(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = "p"}) {
  return %g : tensor<4xf32>
}
