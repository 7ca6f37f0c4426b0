// RUN: dist-opt %s | dist-opt | FileCheck %s
// RUN: dist-opt %s --mlir-print-op-generic | dist-opt | FileCheck %s
// RUN: dist-opt %s --verify-roundtrip | FileCheck %s

// Meshes print once, as aliases; default process ids are not printed.
// CHECK-DAG: #[[MESH:.*]] = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// CHECK-DAG: #[[PERM:.*]] = #dist.mesh<shape = [2, 4], process_ids = [7, 6, 5, 4, 3, 2, 1, 0]>
// CHECK-DAG: #[[ONE:.*]] = #dist.mesh<shape = [1, 4]>
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
#perm = #dist.mesh<shape = [2, 4], process_ids = [7, 6, 5, 4, 3, 2, 1, 0]>
// Explicit default ids are the same attribute as no ids.
#one = #dist.mesh<shape = [1, 4], process_ids = [0, 1, 2, 3]>

// CHECK-LABEL: func @encodings
// CHECK-SAME: tensor<8x16xf32, #dist.tensor<#[[MESH]], [0, -1], partial = [1 : sum]>>
// CHECK-SAME: tensor<8x16xf32, #dist.tensor<#[[PERM]], [-1, -1], partial = [0 : max, 1 : avg]>>
// CHECK-SAME: tensor<4xf32, #dist.tensor<#[[ONE]], [1]>>
// CHECK-SAME: tensor<4x?xf32, #dist.tensor<#[[MESH]], [-1, 0], partial = [1 : prod]>>
// CHECK-SAME: tensor<2xi8, #dist.tensor<#[[MESH]], [-1], partial = [0 : min]>>
func.func @encodings(
    %a: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>,
    // Partial axes are sorted whatever order they are written in.
    %b: tensor<8x16xf32, #dist.tensor<#perm, [-1, -1], partial = [1 : avg, 0 : max]>>,
    %c: tensor<4xf32, #dist.tensor<#one, [1]>>,
    %d: tensor<4x?xf32, #dist.tensor<#mesh, [-1, 0], partial = [1 : prod]>>,
    %e: tensor<2xi8, #dist.tensor<#mesh, [-1], partial = [0 : min]>>) {
  return
}

// CHECK-LABEL: func @collectives
func.func @collectives(
    %p: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>,
    %q: tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : max, 1 : max]>>,
    %w: tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>,
    %x: tensor<4x8xf32>) {
  // CHECK: dist.allreduce %{{.*}} on #[[MESH]] axes = [1] reduce = sum stream = mp
  // CHECK-SAME: -> tensor<8x16xf32, #dist.tensor<#[[MESH]], [0, -1]>>
  %0 = dist.allreduce %p on #mesh axes = [1] reduce = sum stream = mp
      : tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
      -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
  // Reducing one of two partial axes keeps the other.
  // CHECK: dist.allreduce %{{.*}} on #[[MESH]] axes = [0] reduce = max :
  // CHECK-SAME: -> tensor<8x16xf32, #dist.tensor<#[[MESH]], [-1, -1], partial = [1 : max]>>
  %1 = dist.allreduce %q on #mesh axes = [0] reduce = max
      : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : max, 1 : max]>>
      -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : max]>>
  // CHECK: dist.allreduce %{{.*}} on #[[MESH]] axes = [1, 0] reduce = prod : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = dist.allreduce %x on #mesh axes = [1, 0] reduce = prod : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: dist.broadcast %{{.*}} on #[[MESH]] axes = [0] root = 1 stream = dp :
  %3 = dist.broadcast %w on #mesh axes = [0] root = 1 stream = dp
      : tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>
      -> tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>
  // CHECK: dist.c_identity %{{.*}} on #[[MESH]] axes = [1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = dist.c_identity %x on #mesh axes = [1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// CHECK-LABEL: func @async_collectives
func.func @async_collectives(%x: tensor<4x8xf32>,
    %p: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>) -> (tensor<4x8xf32>, tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // CHECK: %[[F:.*]] = dist.allreduce %{{.*}} on #[[MESH]] axes = [1] reduce = sum stream = mp : tensor<8x16xf32, {{.*}}> -> !dist.future<tensor<8x16xf32, #dist.tensor<#[[MESH]], [0, -1]>>>
  %f = dist.allreduce %p on #mesh axes = [1] reduce = sum stream = mp
      : tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
      -> !dist.future<tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>>
  // CHECK: %[[G:.*]] = dist.broadcast %{{.*}} root = 0 stream = dp : tensor<4x8xf32> -> !dist.future<tensor<4x8xf32>>
  %g = dist.broadcast %x on #mesh axes = [0] root = 0 stream = dp : tensor<4x8xf32> -> !dist.future<tensor<4x8xf32>>
  // CHECK: dist.c_identity %{{.*}} stream = sharding : tensor<4x8xf32> -> !dist.future<tensor<4x8xf32>>
  %h = dist.c_identity %x on #mesh axes = [0] stream = sharding : tensor<4x8xf32> -> !dist.future<tensor<4x8xf32>>
  %s = dist.scale %x by 2.0 : tensor<4x8xf32>
  // CHECK: dist.wait %[[G]] : !dist.future<tensor<4x8xf32>>
  %gv = dist.wait %g : !dist.future<tensor<4x8xf32>>
  %hv = dist.wait %h : !dist.future<tensor<4x8xf32>>
  // CHECK: dist.wait %[[F]] : !dist.future<tensor<8x16xf32, #dist.tensor<#[[MESH]], [0, -1]>>>
  %r = dist.wait %f : !dist.future<tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>>
  return %gv, %r : tensor<4x8xf32>, tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
}

// CHECK-LABEL: func @rank_dependent
func.func @rank_dependent() -> (index, index, tensor<1xi32>, tensor<1xi32, #dist.tensor<#mesh, [-1]>>) {
  // CHECK: dist.process_coord #[[PERM]] axis = 1
  %0 = dist.process_coord #perm axis = 1
  // CHECK: dist.process_coord #[[MESH]] axis = 0
  %1 = dist.process_coord #mesh axis = 0
  // CHECK: dist.seed 0 : tensor<1xi32>
  %2 = dist.seed 0 : tensor<1xi32>
  // CHECK: dist.seed 42 : tensor<1xi32, #dist.tensor<#[[MESH]], [-1]>>
  %3 = dist.seed 42 : tensor<1xi32, #dist.tensor<#mesh, [-1]>>
  return %0, %1, %2, %3 : index, index, tensor<1xi32>, tensor<1xi32, #dist.tensor<#mesh, [-1]>>
}

// CHECK-LABEL: func @embeddings
func.func @embeddings(%ids: tensor<4x16xi64>, %ids32: tensor<4x16xi32>,
    %w: tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>,
    %dout: tensor<4x16x64xf32>, %start: index) {
  // CHECK: dist.embedding %{{.*}}, %{{.*}} : tensor<4x16xi64>, tensor<8000x64xf32, #dist.tensor<#[[MESH]], [1, -1]>> -> tensor<4x16x64xf32>
  %0 = dist.embedding %ids, %w : tensor<4x16xi64>, tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x16x64xf32>
  // CHECK: dist.embedding_grad %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x16xi32>, {{.*}}, tensor<4x16x64xf32> -> tensor<8000x64xf32, #dist.tensor<#[[MESH]], [1, -1]>>
  %1 = dist.embedding_grad %ids32, %w, %dout : tensor<4x16xi32>, tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>, tensor<4x16x64xf32> -> tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>
  // CHECK: dist.c_embedding %{{.*}}, %{{.*}} start = %{{.*}} : tensor<4x16xi64>, {{.*}} -> tensor<4x16x64xf32, #dist.tensor<#[[MESH]], [-1, -1, -1], partial = [1 : sum]>>
  %2 = dist.c_embedding %ids, %w start = %start : tensor<4x16xi64>, tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1], partial = [1 : sum]>>
  // CHECK: dist.c_embedding_grad %{{.*}}, %{{.*}}, %{{.*}} start = %{{.*}} :
  %3 = dist.c_embedding_grad %ids, %w, %dout start = %start : tensor<4x16xi64>, tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>, tensor<4x16x64xf32> -> tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>
  return
}

// CHECK-LABEL: func @matmuls
func.func @matmuls(%x: tensor<4x8x64xf32>, %y: tensor<64x32xf32>,
    %dout: tensor<4x8x32xf32>, %bx: tensor<1x8x64xf32>, %by: tensor<3x64x32xf32>,
    %dyn: tensor<?x8x64xf32>) {
  // CHECK: dist.matmul %{{.*}}, %{{.*}} : tensor<4x8x64xf32>, tensor<64x32xf32> -> tensor<4x8x32xf32>
  %0 = dist.matmul %x, %y : tensor<4x8x64xf32>, tensor<64x32xf32> -> tensor<4x8x32xf32>
  // CHECK: dist.matmul %{{.*}}, %{{.*}} transpose_y : tensor<4x8x32xf32>, tensor<64x32xf32> -> tensor<4x8x64xf32>
  %1 = dist.matmul %dout, %y transpose_y : tensor<4x8x32xf32>, tensor<64x32xf32> -> tensor<4x8x64xf32>
  // CHECK: dist.matmul %{{.*}}, %{{.*}} transpose_x : tensor<8x64xf32>, tensor<8x32xf32> -> tensor<64x32xf32>
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x8x64xf32> into tensor<32x64xf32>
  %xs = tensor.extract_slice %c[0, 0] [8, 64] [1, 1] : tensor<32x64xf32> to tensor<8x64xf32>
  %ds = tensor.extract_slice %dout[0, 0, 0] [1, 8, 32] [1, 1, 1] : tensor<4x8x32xf32> to tensor<8x32xf32>
  %2 = dist.matmul %xs, %ds transpose_x : tensor<8x64xf32>, tensor<8x32xf32> -> tensor<64x32xf32>
  // Batch dims broadcast: [1] with [3] gives [3].
  // CHECK: dist.matmul %{{.*}}, %{{.*}} : tensor<1x8x64xf32>, tensor<3x64x32xf32> -> tensor<3x8x32xf32>
  %3 = dist.matmul %bx, %by : tensor<1x8x64xf32>, tensor<3x64x32xf32> -> tensor<3x8x32xf32>
  // CHECK: dist.matmul %{{.*}}, %{{.*}} transpose_x transpose_y : tensor<64x8xf32>, tensor<32x64xf32> -> tensor<8x32xf32>
  %xt = tensor.empty() : tensor<64x8xf32>
  %yt = tensor.empty() : tensor<32x64xf32>
  %4 = dist.matmul %xt, %yt transpose_x transpose_y : tensor<64x8xf32>, tensor<32x64xf32> -> tensor<8x32xf32>
  // CHECK: dist.matmul {{.*}} : tensor<?x8x64xf32>, tensor<64x32xf32> -> tensor<?x8x32xf32>
  %5 = dist.matmul %dyn, %y : tensor<?x8x64xf32>, tensor<64x32xf32> -> tensor<?x8x32xf32>
  // CHECK: %{{.*}}, %{{.*}} = dist.matmul_grad %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8x64xf32>, tensor<64x32xf32>, tensor<4x8x32xf32> -> tensor<4x8x64xf32>, tensor<64x32xf32>
  %dx, %dy = dist.matmul_grad %x, %y, %dout : tensor<4x8x64xf32>, tensor<64x32xf32>, tensor<4x8x32xf32> -> tensor<4x8x64xf32>, tensor<64x32xf32>
  // CHECK: dist.matmul_grad {{.*}} transpose_y : tensor<4x8x64xf32>, tensor<32x64xf32>, tensor<4x8x32xf32>
  %dx1, %dy1 = dist.matmul_grad %x, %yt, %dout transpose_y : tensor<4x8x64xf32>, tensor<32x64xf32>, tensor<4x8x32xf32> -> tensor<4x8x64xf32>, tensor<32x64xf32>
  return
}

// CHECK-LABEL: func @dropout_scale_amp
func.func @dropout_scale_amp(%x: tensor<4x8xf32>, %g0: tensor<64xf16>,
    %g1: tensor<8x8xf64, #dist.tensor<#mesh, [0, 1]>>, %s: tensor<1xf32>) {
  %seed = dist.seed 7 : tensor<1xi32, #dist.tensor<#mesh, [-1]>>
  // CHECK: dist.dropout %{{.*}} seed(%{{.*}} : tensor<1xi32, #dist.tensor<#[[MESH]], [-1]>>) prob = 1.000000e-01 : tensor<4x8xf32> -> tensor<4x8xf32>
  %0 = dist.dropout %x seed(%seed : tensor<1xi32, #dist.tensor<#mesh, [-1]>>) prob = 0.1 : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: dist.dropout %{{.*}} prob = 5.000000e-01 {fix_seed = 3 : i32} : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = dist.dropout %x prob = 0.5 {fix_seed = 3 : i32} : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: dist.dropout %{{.*}} prob = 0.000000e+00 {is_test} : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = dist.dropout %x prob = 0.0 {is_test} : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: dist.dropout %{{.*}} prob = 1.000000e-01 {fix_seed = 5 : i32, id = "attn"}
  %d0 = dist.dropout %x prob = 0.1 {id = "attn", fix_seed = 5 : i32} : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: dist.dropout %{{.*}} prob = 1.000000e-01 {fix_seed = 5 : i32, recompute_of = "attn"}
  %d1 = dist.dropout %x prob = 0.1 {recompute_of = "attn", fix_seed = 5 : i32} : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: dist.scale %{{.*}} by 2.500000e-01 : tensor<4x8xf32>
  %3 = dist.scale %x by 0.25 : tensor<4x8xf32>
  // A split gradient makes found_inf a partial max: each process saw its
  // shard only.
  // CHECK: %{{.*}}:2, %{{.*}} = dist.check_finite_and_unscale %{{.*}}, %{{.*}} scale %{{.*}} : (tensor<64xf16>, tensor<8x8xf64, #dist.tensor<#[[MESH]], [0, 1]>>, tensor<1xf32>) -> (tensor<64xf16>, tensor<8x8xf64, #dist.tensor<#[[MESH]], [0, 1]>>, tensor<1xi1, #dist.tensor<#[[MESH]], [-1], partial = [0 : max, 1 : max]>>)
  %4:3 = dist.check_finite_and_unscale %g0, %g1 scale %s : (tensor<64xf16>, tensor<8x8xf64, #dist.tensor<#mesh, [0, 1]>>, tensor<1xf32>) -> (tensor<64xf16>, tensor<8x8xf64, #dist.tensor<#mesh, [0, 1]>>, tensor<1xi1, #dist.tensor<#mesh, [-1], partial = [0 : max, 1 : max]>>)
  // No gradients is allowed: found_inf is then false.
  // CHECK: dist.check_finite_and_unscale scale %{{.*}} : (tensor<1xf32>) -> tensor<1xi1>
  %5 = dist.check_finite_and_unscale scale %s : (tensor<1xf32>) -> tensor<1xi1>
  return
}

// The marker attributes, each where it belongs.
// CHECK-LABEL: func @startup(%{{.*}}: tensor<4xf32> {dist.param = "w"}) -> (tensor<4xf32> {dist.param = "w"}) attributes {dist.startup}
func.func @startup(%w: tensor<4xf32> {dist.param = "w"}) -> (tensor<4xf32> {dist.param = "w"}) attributes {dist.startup} {
  return %w : tensor<4xf32>
}
// CHECK-LABEL: func @step(%{{.*}}: tensor<4xf32> {dist.param = "w"}, %{{.*}}: tensor<1xf32> {dist.loss_scale}) -> (tensor<4xf32> {dist.grad = "w"}, tensor<1xi1> {dist.found_inf})
// CHECK: dist.scale %{{.*}} by 2.000000e+00 {dist.recompute}
func.func @step(%w: tensor<4xf32> {dist.param = "w"}, %s: tensor<1xf32> {dist.loss_scale}) -> (tensor<4xf32> {dist.grad = "w"}, tensor<1xi1> {dist.found_inf}) {
  %g = dist.scale %w by 2.0 {dist.recompute} : tensor<4xf32>
  %f = arith.constant dense<false> : tensor<1xi1>
  return %g, %f : tensor<4xf32>, tensor<1xi1>
}

// CHECK-LABEL: func @transfers
func.func @transfers(%x: tensor<4x8xf32, #dist.tensor<#mesh, [-1, 1]>>) -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, 1]>> {
  // CHECK: dist.send %{{.*}} to 1 on #[[MESH]] axis = 0 tag = 7 : tensor<4x8xf32, #dist.tensor<#[[MESH]], [-1, 1]>>
  dist.send %x to 1 on #mesh axis = 0 tag = 7 : tensor<4x8xf32, #dist.tensor<#mesh, [-1, 1]>>
  // CHECK: %[[F:.*]] = dist.recv from 1 on #[[MESH]] axis = 0 tag = 8 : !dist.future<tensor<4x8xf32, #dist.tensor<#[[MESH]], [-1, 1]>>>
  %f = dist.recv from 1 on #mesh axis = 0 tag = 8 : !dist.future<tensor<4x8xf32, #dist.tensor<#mesh, [-1, 1]>>>
  // CHECK: dist.recv from 0 on #[[MESH]] axis = 0 tag = 32767 : tensor<4x8xf32>
  %r = dist.recv from 0 on #mesh axis = 0 tag = 32767 : tensor<4x8xf32>
  // CHECK: dist.wait %[[F]]
  %y = dist.wait %f : !dist.future<tensor<4x8xf32, #dist.tensor<#mesh, [-1, 1]>>>
  return %y : tensor<4x8xf32, #dist.tensor<#mesh, [-1, 1]>>
}
