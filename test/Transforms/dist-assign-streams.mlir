// RUN: dist-opt %s --dist-assign-streams --dist-verify-distributions | FileCheck %s
// Idempotent:
// RUN: dist-opt %s --dist-assign-streams | dist-opt --dist-assign-streams | FileCheck %s
// Axis roles from options instead of the default names:
// RUN: dist-opt %s --dist-assign-streams="dp-axes=data mp-axes=tensor" | FileCheck %s --check-prefix=NAMES

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
#custom = #dist.mesh<shape = [2, 4], names = ["data", "tensor"]>
#anon = #dist.mesh<shape = [2, 4]>

// The split matmul_grad: the allreduce becomes asynchronous on its stream
// and its wait lands right before the first use, after the dY matmul, not
// earlier (PaddlePaddle PR 64662 waited too early and serialised them).
// CHECK-LABEL: func @overlapped
// CHECK-NEXT: %[[DX:.*]] = dist.matmul %arg2, %arg1 transpose_y
// CHECK-NEXT: %[[F:.*]] = dist.allreduce %[[DX]] on #mesh axes = [1] reduce = sum stream = mp : tensor<8x64xf32> -> !dist.future<tensor<8x64xf32>>
// CHECK-NEXT: %[[DY:.*]] = dist.matmul %arg0, %arg2 transpose_x
// CHECK-NEXT: %[[S:.*]] = dist.scale %[[DY]]
// CHECK-NEXT: %[[R:.*]] = dist.wait %[[F]] : !dist.future<tensor<8x64xf32>>
// CHECK-NEXT: %[[U:.*]] = dist.scale %[[R]]
// CHECK-NEXT: return %[[U]], %[[S]], %[[R]]
func.func @overlapped(%x: tensor<8x64xf32>, %y: tensor<64x32xf32>, %dout: tensor<8x32xf32>)
    -> (tensor<8x64xf32>, tensor<64x32xf32>, tensor<8x64xf32>) {
  %dx = dist.matmul %dout, %y transpose_y : tensor<8x32xf32>, tensor<64x32xf32> -> tensor<8x64xf32>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum stream = mp : tensor<8x64xf32> -> tensor<8x64xf32>
  %dy = dist.matmul %x, %dout transpose_x : tensor<8x64xf32>, tensor<8x32xf32> -> tensor<64x32xf32>
  %s = dist.scale %dy by 2.0 : tensor<64x32xf32>
  %u = dist.scale %r by 3.0 : tensor<8x64xf32>
  return %u, %s, %r : tensor<8x64xf32>, tensor<64x32xf32>, tensor<8x64xf32>
}

// Used by the very next op: nothing to overlap, it stays on the compute
// stream (and loses a stream tag it had).
// CHECK-LABEL: func @used_next
// CHECK-NEXT: %[[R:.*]] = dist.allreduce %arg0 on #mesh axes = [1] reduce = sum : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT: dist.scale %[[R]]
// CHECK-NOT: dist.wait
func.func @used_next(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = dist.allreduce %x on #mesh axes = [1] reduce = sum stream = mp : tensor<8xf32> -> tensor<8xf32>
  %s = dist.scale %r by 2.0 : tensor<8xf32>
  return %s : tensor<8xf32>
}

// Only ops that read no tensor before the first use: nothing to overlap.
// CHECK-LABEL: func @no_work_between
// CHECK-NEXT: %[[R:.*]] = dist.allreduce %arg0 on #mesh axes = [1] reduce = sum : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT: dist.seed 3
// CHECK-NEXT: arith.constant
// CHECK-NEXT: dist.process_coord
// CHECK-NEXT: dist.dropout %[[R]]
// CHECK-NOT: dist.wait
func.func @no_work_between(%x: tensor<8xf32>) -> (tensor<8xf32>, index) {
  %r = dist.allreduce %x on #mesh axes = [1] reduce = sum stream = mp : tensor<8xf32> -> tensor<8xf32>
  %s = dist.seed 3 : tensor<1xi32>
  %c = arith.constant 2 : index
  %p = dist.process_coord #mesh axis = 0
  %d = dist.dropout %r seed(%s : tensor<1xi32>) prob = 5.000000e-01 : tensor<8xf32> -> tensor<8xf32>
  %i = arith.addi %c, %p : index
  return %d, %i : tensor<8xf32>, index
}

// Only another collective's wait before the first use: %b stays
// synchronous; %a has the scale to overlap with.
// CHECK-LABEL: func @only_a_wait_between
// CHECK-NEXT: %[[A:.*]] = dist.allreduce %arg0 on #mesh axes = [0] reduce = sum stream = dp : {{.*}} -> !dist.future
// CHECK-NEXT: %[[S:.*]] = dist.scale %arg0
// CHECK-NEXT: %[[B:.*]] = dist.allreduce %arg0 on #mesh axes = [0] reduce = sum : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[AV:.*]] = dist.wait %[[A]]
// CHECK-NEXT: arith.addf %[[AV]], %[[B]]
func.func @only_a_wait_between(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %a = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<8xf32> -> tensor<8xf32>
  %s = dist.scale %x by 2.0 : tensor<8xf32>
  %b = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<8xf32> -> tensor<8xf32>
  %c = arith.addf %a, %b : tensor<8xf32>
  return %c, %s : tensor<8xf32>, tensor<8xf32>
}

// Streams by the role of the mesh axis: dp for axis "dp", mp for "mp".
// Collectives on one stream keep their issue order; each wait sits before
// its own first use. A collective on unnamed axes stays on compute.
// CHECK-LABEL: func @roles
// CHECK-NEXT: %[[A:.*]] = dist.allreduce %arg0 on #mesh axes = [0] reduce = sum stream = dp : {{.*}} -> !dist.future
// CHECK-NEXT: %[[B:.*]] = dist.broadcast %arg0 on #mesh axes = [0] root = 0 stream = dp : {{.*}} -> !dist.future
// CHECK-NEXT: %[[C:.*]] = dist.allreduce %arg0 on #mesh axes = [1] reduce = max stream = mp : {{.*}} -> !dist.future
// CHECK-NEXT: %[[D:.*]] = dist.allreduce %arg0 on #mesh{{[0-9]}} axes = [0] reduce = sum : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[E:.*]] = dist.scale %arg0
// CHECK-NEXT: %[[AV:.*]] = dist.wait %[[A]]
// CHECK-NEXT: %[[BV:.*]] = dist.wait %[[B]]
// CHECK-NEXT: arith.addf %[[BV]], %[[AV]]
// CHECK-NEXT: %[[CV:.*]] = dist.wait %[[C]]
// CHECK-NEXT: return
// With other role names, "dp" and "mp" are no roles any more.
// NAMES-LABEL: func @roles
// NAMES-NEXT: dist.allreduce %arg0 on #mesh axes = [0] reduce = sum : tensor<8xf32> -> tensor<8xf32>
func.func @roles(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %a = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<8xf32> -> tensor<8xf32>
  %b = dist.broadcast %x on #mesh axes = [0] root = 0 : tensor<8xf32> -> tensor<8xf32>
  %c = dist.allreduce %x on #mesh axes = [1] reduce = max : tensor<8xf32> -> tensor<8xf32>
  %d = dist.allreduce %x on #anon axes = [0] reduce = sum : tensor<8xf32> -> tensor<8xf32>
  %e = dist.scale %x by 2.0 : tensor<8xf32>
  %f = arith.addf %b, %a : tensor<8xf32>
  return %f, %c, %d, %e : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func @custom_names
// CHECK-NEXT: dist.allreduce %arg0 on #mesh{{[0-9]}} axes = [1] reduce = sum : tensor<8xf32> -> tensor<8xf32>
// NAMES-LABEL: func @custom_names
// NAMES-NEXT: dist.allreduce %arg0 on #mesh{{[0-9]}} axes = [1] reduce = sum stream = mp : {{.*}} -> !dist.future
func.func @custom_names(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %a = dist.allreduce %x on #custom axes = [1] reduce = sum : tensor<8xf32> -> tensor<8xf32>
  %e = dist.scale %x by 2.0 : tensor<8xf32>
  return %a, %e : tensor<8xf32>, tensor<8xf32>
}

// A use inside a region: the wait goes before the op holding the region.
// An unused result is waited for before the terminator.
// CHECK-LABEL: func @region_and_unused
// CHECK-NEXT: %[[A:.*]] = dist.allreduce {{.*}} stream = dp : tensor<8xf32> -> !dist.future
// CHECK-NEXT: %[[B:.*]] = dist.allreduce {{.*}} stream = dp : tensor<8xf32> -> !dist.future
// CHECK-NEXT: dist.scale
// CHECK-NEXT: %[[AV:.*]] = dist.wait %[[A]]
// CHECK-NEXT: scf.execute_region
// CHECK-NEXT: dist.scale %[[AV]]
// CHECK: dist.wait %[[B]]
// CHECK-NEXT: return
func.func @region_and_unused(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<8xf32> -> tensor<8xf32>
  %b = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<8xf32> -> tensor<8xf32>
  %e = dist.scale %x by 2.0 : tensor<8xf32>
  %r = scf.execute_region -> tensor<8xf32> {
    %s = dist.scale %a by 2.0 : tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// The redistributions go on their streams as the allreduce does, by their
// attribute or (without one) by the role of their axis; the all-to-all has
// only waits before its use, so it stays blocking.
// CHECK-LABEL: func @redistributions
// CHECK-NEXT: %[[G:.*]] = dist.all_gather %arg0 on #mesh axes = [1] stream = mp : {{.*}} -> !dist.future<tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>>
// CHECK-NEXT: %[[S:.*]] = dist.reduce_scatter %arg1 on #mesh axes = [0] reduce = sum stream = dp : {{.*}} -> !dist.future<tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>>
// CHECK-NEXT: %[[M:.*]] = dist.matmul
// CHECK-NEXT: %[[T:.*]] = dist.all_to_all %arg3 on #mesh axes = [1] : {{.*}} -> tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
// CHECK-NEXT: %[[GV:.*]] = dist.wait %[[G]]
// CHECK-NEXT: %[[SV:.*]] = dist.wait %[[S]]
// CHECK-NEXT: return %[[GV]], %[[SV]], %[[M]], %[[T]]
func.func @redistributions(%x: tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>,
                           %p: tensor<16x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>,
                           %a: tensor<8x8xf32>, %y: tensor<16x4xf32, #dist.tensor<#mesh, [-1, 1]>>)
    -> (tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
        tensor<8x8xf32>, tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>) {
  %g = dist.all_gather %x on #mesh axes = [1]
      : tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>> -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
  %s = dist.reduce_scatter %p on #mesh axes = [0] reduce = sum stream = dp
      : tensor<16x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
  %m = dist.matmul %a, %a : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %t = dist.all_to_all %y on #mesh axes = [1] stream = mp
      : tensor<16x4xf32, #dist.tensor<#mesh, [-1, 1]>> -> tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
  return %g, %s, %m, %t : tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
                          tensor<8x8xf32>, tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
}
