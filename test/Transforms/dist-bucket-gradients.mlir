// RUN: dist-opt %s --dist-bucket-gradients="bucket-mb=0.03 first-bucket-mb=0.01" -split-input-file | FileCheck %s
// RUN: dist-opt %s --dist-bucket-gradients -split-input-file | FileCheck %s --check-prefix=DEFAULT
// RUN: dist-opt %s --dist-bucket-gradients="bucket-mb=0.03 first-bucket-mb=0.01" -split-input-file --dist-assign-streams | FileCheck %s --check-prefix=ASYNC
// RUN: not dist-opt %s --dist-bucket-gradients="bucket-mb=0" -split-input-file 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not dist-opt %s --dist-bucket-gradients="first-bucket-mb=nan" -split-input-file 2>&1 | FileCheck %s --check-prefix=NAN

// ZERO: --dist-bucket-gradients: bucket-mb and first-bucket-mb must be positive, got 0.000000e+00 and 1.000000e+00
// NAN: --dist-bucket-gradients: bucket-mb and first-bucket-mb must be positive, got 2.500000e+01 and nan

#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "tp"]>
!G = tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
!R = tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>
!S = tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
!SR = tensor<4xf32, #dist.tensor<#mesh, [-1]>>
!H = tensor<64xf16, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
!HR = tensor<64xf16, #dist.tensor<#mesh, [-1]>>
!T = tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>

// The gradients become ready (are scaled) in the order s, g1, g2, g3, g4;
// each 64 x 64 f32 gradient is 16 KiB. The first bucket closes once it
// holds 0.01 MiB (s and g1), the next at 0.03 MiB (g2 and g3 make 32 KiB);
// g4 is left alone. The f16 gradient is of another element type, the tp
// allreduce is not data-parallel: neither is fused.
// CHECK-LABEL: func.func @buckets(
// CHECK: %[[S:.*]] = dist.scale %arg0
// CHECK-NEXT: %[[G1:.*]] = dist.scale %arg1
// CHECK-NEXT: %[[B0:.*]] = dist.pack %[[S]], %[[G1]] : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>, tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<1x4100xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
// CHECK-NEXT: %[[R0:.*]] = dist.allreduce %[[B0]] on #mesh axes = [0] reduce = sum : tensor<1x4100xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<1x4100xf32, #dist.tensor<#mesh, [-1, -1]>>
// CHECK-NEXT: %[[H:.*]] = dist.scale %arg5
// CHECK-NEXT: dist.allreduce %[[H]] on #mesh axes = [0]
// CHECK-NEXT: %[[G2:.*]] = dist.scale %arg2
// CHECK-NEXT: %[[T:.*]] = dist.scale %arg6
// CHECK-NEXT: dist.allreduce %[[T]] on #mesh axes = [1]
// CHECK-NEXT: %[[G3:.*]] = dist.scale %arg3
// CHECK-NEXT: %[[B1:.*]] = dist.pack %[[G2]], %[[G3]] : {{.*}} -> tensor<1x8192xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
// CHECK-NEXT: %[[R1:.*]] = dist.allreduce %[[B1]] on #mesh axes = [0] reduce = sum
// CHECK-NEXT: %[[G4:.*]] = dist.scale %arg4
// CHECK-NEXT: %[[R4:.*]] = dist.allreduce %[[G4]] on #mesh axes = [0] reduce = sum : tensor<64x64xf32
// The buckets are unpacked before the first use of one of their results.
// CHECK-NEXT: %[[U0:.*]]:2 = dist.unpack %[[R0]] : tensor<1x4100xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>, tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>
// CHECK-NEXT: %[[U1:.*]]:2 = dist.unpack %[[R1]]
// CHECK-NEXT: return %[[U0]]#0, %[[U0]]#1, %[[U1]]#0, %[[U1]]#1, %[[R4]],
// CHECK-NOT: dist.pack
// With DDP's sizes (1 MiB first) everything data-parallel of f32 is one
// bucket, issued once the last gradient is ready.
// DEFAULT-LABEL: func.func @buckets(
// DEFAULT: %[[G4:.*]] = dist.scale %arg4
// DEFAULT-NEXT: dist.pack %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[G4]] : {{.*}} -> tensor<1x16388xf32,
// DEFAULT-NEXT: dist.allreduce
// DEFAULT-NEXT: dist.unpack
// The assigned streams make each bucket asynchronous: it overlaps what
// comes after it.
// ASYNC-LABEL: func.func @buckets(
// ASYNC: dist.allreduce %{{.*}} on #mesh axes = [0] reduce = sum stream = dp : tensor<1x4100xf32, {{.*}} -> !dist.future<tensor<1x4100xf32,
func.func @buckets(%s: !S, %g1: !G, %g2: !G, %g3: !G, %g4: !G, %h: !H, %t: !T)
    -> (!SR, !R, !R, !R, !R, !HR, !R) {
  %s0 = dist.scale %s by 2.0 : !S
  %rs = dist.allreduce %s0 on #mesh axes = [0] reduce = sum : !S -> !SR
  %a1 = dist.scale %g1 by 2.0 : !G
  %r1 = dist.allreduce %a1 on #mesh axes = [0] reduce = sum : !G -> !R
  %h0 = dist.scale %h by 2.0 : !H
  %rh = dist.allreduce %h0 on #mesh axes = [0] reduce = sum : !H -> !HR
  %a2 = dist.scale %g2 by 2.0 : !G
  %r2 = dist.allreduce %a2 on #mesh axes = [0] reduce = sum : !G -> !R
  %t0 = dist.scale %t by 2.0 : !T
  %rt = dist.allreduce %t0 on #mesh axes = [1] reduce = sum : !T -> !R
  %a3 = dist.scale %g3 by 2.0 : !G
  %r3 = dist.allreduce %a3 on #mesh axes = [0] reduce = sum : !G -> !R
  %a4 = dist.scale %g4 by 2.0 : !G
  %r4 = dist.allreduce %a4 on #mesh axes = [0] reduce = sum : !G -> !R
  return %rs, %r1, %r2, %r3, %r4, %rh, %rt : !SR, !R, !R, !R, !R, !HR, !R
}

// -----

// A result used before the next gradient is ready cannot wait for it: the
// bucket closes there.
#mesh = #dist.mesh<shape = [2], names = ["dp"]>
!G = tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
!R = tensor<8xf32, #dist.tensor<#mesh, [-1]>>
// CHECK-LABEL: func.func @used_early(
// CHECK: %[[B:.*]] = dist.pack %{{.*}}, %{{.*}} : {{.*}} -> tensor<1x16xf32
// CHECK-NEXT: %[[R:.*]] = dist.allreduce %[[B]]
// CHECK-NEXT: %[[U:.*]]:2 = dist.unpack %[[R]]
// CHECK-NEXT: dist.scale %[[U]]#1
// CHECK-NEXT: %[[C:.*]] = dist.scale %arg2
// CHECK-NEXT: dist.allreduce %[[C]]
func.func @used_early(%a: !G, %b: !G, %c: !G) -> (!R, !R, !R) {
  %ra = dist.allreduce %a on #mesh axes = [0] reduce = sum : !G -> !R
  %b0 = dist.scale %b by 2.0 : !G
  %rb = dist.allreduce %b0 on #mesh axes = [0] reduce = sum : !G -> !R
  %use = dist.scale %rb by 2.0 : !R
  %c0 = dist.scale %c by 2.0 : !G
  %rc = dist.allreduce %c0 on #mesh axes = [0] reduce = sum : !G -> !R
  return %ra, %use, %rc : !R, !R, !R
}

// -----

// The reduce-scatters of packed gradients (ZeRO's) fuse row by row: one
// reduce-scatter leaves each process its row of both, which the unpack of
// that row cuts apart.
#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "tp"]>
!P1 = tensor<2x39xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
!S1 = tensor<1x39xf32, #dist.tensor<#mesh, [0, 1]>>
!P2 = tensor<2x15xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
!S2 = tensor<1x15xf32, #dist.tensor<#mesh, [0, 1]>>
// CHECK-LABEL: func.func @reduce_scatters(
// CHECK: %[[B:.*]] = dist.pack %arg0, %arg1 : tensor<2x39xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>, tensor<2x15xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>> -> tensor<2x54xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
// CHECK-NEXT: %[[R:.*]] = dist.reduce_scatter %[[B]] on #mesh axes = [0] reduce = sum : tensor<2x54xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>> -> tensor<1x54xf32, #dist.tensor<#mesh, [0, 1]>>
// CHECK-NEXT: %[[U:.*]]:2 = dist.unpack %[[R]] : tensor<1x54xf32, #dist.tensor<#mesh, [0, 1]>> -> tensor<1x39xf32, #dist.tensor<#mesh, [0, 1]>>, tensor<1x15xf32, #dist.tensor<#mesh, [0, 1]>>
// CHECK-NEXT: return %[[U]]#0, %[[U]]#1
func.func @reduce_scatters(%a: !P1, %b: !P2) -> (!S1, !S2) {
  %ra = dist.reduce_scatter %a on #mesh axes = [0] reduce = sum : !P1 -> !S1
  %rb = dist.reduce_scatter %b on #mesh axes = [0] reduce = sum : !P2 -> !S2
  return %ra, %rb : !S1, !S2
}
