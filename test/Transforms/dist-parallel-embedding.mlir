// RUN: dist-opt %s --dist-parallel-embedding --dist-verify-distributions -split-input-file | FileCheck %s
// RUN: dist-opt %s --dist-parallel-embedding="use-avg-allreduce=true" --dist-verify-distributions -split-input-file | FileCheck %s --check-prefix=AVG

// Forward on a [2, 4] mesh: rows split over mp (axis 1), batch over dp.
// start_index = coord(mp) * 8000 local rows; the c_embedding result is
// partial (sum) over mp until the allreduce.
// CHECK-DAG: #[[MESH:.*]] = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[IDS:.*]]: tensor<4x16xi64, {{.*}}>, %[[W:.*]]: tensor<8000x64xf32, {{.*}}> {dist.param = "wemb"})
// CHECK-NEXT: %[[C:.*]] = dist.process_coord #[[MESH]] axis = 1
// CHECK-NEXT: %[[ROWS:.*]] = arith.constant 8000 : index
// CHECK-NEXT: %[[START:.*]] = arith.muli %[[C]], %[[ROWS]] : index
// CHECK-NEXT: %[[P:.*]] = dist.c_embedding %[[IDS]], %[[W]] start = %[[START]] : {{.*}} -> tensor<4x16x64xf32, #dist.tensor<#[[MESH]], [0, -1, -1], partial = [1 : sum]>>
// CHECK-NEXT: %[[R:.*]] = dist.allreduce %[[P]] on #[[MESH]] axes = [1] reduce = sum : {{.*}} -> tensor<4x16x64xf32, #dist.tensor<#[[MESH]], [0, -1, -1]>>
// CHECK-NEXT: return %[[R]]
// CHECK-NOT: dist.embedding
// Parameter init sync: W is split over mp, so it is broadcast along dp
// (axis 0, size 2) from group-local root 0, once, in the startup function.
// CHECK-LABEL: func.func @startup
// CHECK-SAME: (%[[PW:.*]]: tensor<8000x64xf32, #dist.tensor<#[[MESH]], [1, -1]>> {dist.param = "wemb"})
// CHECK-SAME: -> (tensor<8000x64xf32, #dist.tensor<#[[MESH]], [1, -1]>> {dist.param = "wemb"})
// CHECK-SAME: attributes {dist.startup}
// CHECK-NEXT: %[[B:.*]] = dist.broadcast %[[PW]] on #[[MESH]] axes = [0] root = 0
// CHECK-NEXT: return %[[B]]
// CHECK-NOT: dist.broadcast
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @forward(%ids: tensor<4x16xi64, #dist.tensor<#mesh, [0, -1]>>,
    %w: tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>> {dist.param = "wemb"})
    -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>> {
  %e = dist.embedding %ids, %w
      : tensor<4x16xi64, #dist.tensor<#mesh, [0, -1]>>, tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
  return %e : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
}

// -----

// Backward with data parallelism: c_identity over mp, c_embedding_grad
// (partial over dp), allreduce over dp and a scale by 1/2.
// CHECK-LABEL: func.func @backward_dp
// CHECK-SAME: (%[[IDS:.*]]: tensor<4x16xi64, {{.*}}>, %[[W:.*]]: tensor<8000x64xf32, {{.*}}>, %[[G:.*]]: tensor<4x16x64xf32, {{.*}}>)
// CHECK-NEXT: %[[C:.*]] = dist.process_coord #mesh axis = 1
// CHECK-NEXT: %[[ROWS:.*]] = arith.constant 8000 : index
// CHECK-NEXT: %[[START:.*]] = arith.muli %[[C]], %[[ROWS]] : index
// CHECK-NEXT: %[[GI:.*]] = dist.c_identity %[[G]] on #mesh axes = [1] : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>> -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
// CHECK-NEXT: %[[DW:.*]] = dist.c_embedding_grad %[[IDS]], %[[W]], %[[GI]] start = %[[START]] : {{.*}} -> tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1], partial = [0 : sum]>>
// CHECK-NEXT: %[[S:.*]] = dist.allreduce %[[DW]] on #mesh axes = [0] reduce = sum : {{.*}} -> tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>
// CHECK-NEXT: %[[A:.*]] = dist.scale %[[S]] by 5.000000e-01 : tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>
// CHECK-NEXT: return %[[A]]
// AVG-LABEL: func.func @backward_dp
// The shard's gradient is a partial sum (its rule); an avg allreduce takes
// the mean of its terms.
// AVG:      %[[DW:.*]] = dist.c_embedding_grad {{.*}} -> tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1], partial = [0 : sum]>>
// AVG-NEXT: %[[A:.*]] = dist.allreduce %[[DW]] on #mesh axes = [0] reduce = avg
// AVG-NEXT: return %[[A]]
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @backward_dp(%ids: tensor<4x16xi64, #dist.tensor<#mesh, [0, -1]>>,
    %w: tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>,
    %g: tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>)
    -> tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>> {
  %dw = dist.embedding_grad %ids, %w, %g
      : tensor<4x16xi64, #dist.tensor<#mesh, [0, -1]>>, tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>,
        tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
      -> tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>
  return %dw : tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>
}

// -----

// A dp axis of size 1: no dp allreduce, no scale. The weight is not a
// parameter (no dist.param), so no startup function is made.
// CHECK-LABEL: func.func @backward_dp1
// CHECK:      dist.c_identity
// CHECK-NEXT: %[[DW:.*]] = dist.c_embedding_grad {{.*}} -> tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>
// CHECK-NEXT: return %[[DW]]
// CHECK-NOT: dist.startup
#mesh = #dist.mesh<shape = [1, 4], names = ["dp", "mp"]>
func.func @backward_dp1(%ids: tensor<4x16xi64, #dist.tensor<#mesh, [0, -1]>>,
    %w: tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>,
    %g: tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>)
    -> tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>> {
  %dw = dist.embedding_grad %ids, %w, %g
      : tensor<4x16xi64, #dist.tensor<#mesh, [0, -1]>>, tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>,
        tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
      -> tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>
  return %dw : tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>
}

// -----

// Unsplit batch: no dp sync either. Unannotated ids and out_grad are
// replicated.
// CHECK-LABEL: func.func @backward_unannotated
// CHECK:      dist.c_identity %{{.*}} on #mesh axes = [0] : tensor<4x64xf32> -> tensor<4x64xf32>
// CHECK-NEXT: %[[DW:.*]] = dist.c_embedding_grad {{.*}} -> tensor<250x64xf32, #dist.tensor<#mesh, [0, -1]>>
// CHECK-NEXT: return %[[DW]]
#mesh = #dist.mesh<shape = [4, 2]>
func.func @backward_unannotated(%ids: tensor<4xi32>,
    %w: tensor<250x64xf32, #dist.tensor<#mesh, [0, -1]>>, %g: tensor<4x64xf32>)
    -> tensor<250x64xf32, #dist.tensor<#mesh, [0, -1]>> {
  %dw = dist.embedding_grad %ids, %w, %g
      : tensor<4xi32>, tensor<250x64xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<4x64xf32>
      -> tensor<250x64xf32, #dist.tensor<#mesh, [0, -1]>>
  return %dw : tensor<250x64xf32, #dist.tensor<#mesh, [0, -1]>>
}

// -----

// The ids split over the sequence (dim 1) as well as the batch: the shard's
// gradient is partial over both; the sequence axis is summed, the batch
// (data-parallel) axis averaged.
// CHECK-LABEL: func.func @sequence_split
// CHECK:      %[[DW:.*]] = dist.c_embedding_grad {{.*}} -> tensor<100x8xf32, #dist.tensor<#mesh, [2, -1], partial = [0 : sum, 1 : sum]>>
// CHECK-NEXT: %[[S:.*]] = dist.allreduce %[[DW]] on #mesh axes = [1] reduce = sum {{.*}} -> tensor<100x8xf32, #dist.tensor<#mesh, [2, -1], partial = [0 : sum]>>
// CHECK-NEXT: %[[D:.*]] = dist.allreduce %[[S]] on #mesh axes = [0] reduce = sum {{.*}} -> tensor<100x8xf32, #dist.tensor<#mesh, [2, -1]>>
// CHECK-NEXT: %[[A:.*]] = dist.scale %[[D]] by 5.000000e-01
// CHECK-NEXT: return %[[A]]
// AVG-LABEL: func.func @sequence_split
// AVG:      dist.allreduce %{{.*}} on #mesh axes = [1] reduce = sum
// AVG-NEXT: %[[M:.*]] = dist.allreduce %{{.*}} on #mesh axes = [0] reduce = avg
// AVG-NEXT: return %[[M]]
#mesh = #dist.mesh<shape = [2, 2, 2]>
func.func @sequence_split(%ids: tensor<2x4xi64, #dist.tensor<#mesh, [0, 1]>>,
    %w: tensor<100x8xf32, #dist.tensor<#mesh, [2, -1]>>,
    %g: tensor<2x4x8xf32, #dist.tensor<#mesh, [0, 1, -1]>>)
    -> tensor<100x8xf32, #dist.tensor<#mesh, [2, -1]>> {
  %dw = dist.embedding_grad %ids, %w, %g
      : tensor<2x4xi64, #dist.tensor<#mesh, [0, 1]>>, tensor<100x8xf32, #dist.tensor<#mesh, [2, -1]>>,
        tensor<2x4x8xf32, #dist.tensor<#mesh, [0, 1, -1]>>
      -> tensor<100x8xf32, #dist.tensor<#mesh, [2, -1]>>
  return %dw : tensor<100x8xf32, #dist.tensor<#mesh, [2, -1]>>
}

// -----

// A weight used twice (and by a recomputed copy) is broadcast once. On a
// [2, 2, 2] mesh with rows split over axis 2, both axes 0 and 1 sync. An
// existing startup function is extended, keeping what it does.
// CHECK-LABEL: func.func @init
// CHECK-SAME: (%[[X:.*]]: tensor<2xf32> {dist.param = "other"}, %[[PW:.*]]: tensor<100x8xf32, #dist.tensor<#mesh, [2, -1]>> {dist.param = "w"})
// CHECK-SAME: -> (tensor<2xf32> {dist.param = "other"}, tensor<100x8xf32, #dist.tensor<#mesh, [2, -1]>> {dist.param = "w"})
// CHECK-SAME: attributes {dist.startup}
// CHECK-NEXT: %[[S:.*]] = dist.scale %[[X]]
// CHECK-NEXT: %[[B0:.*]] = dist.broadcast %[[PW]] on #mesh axes = [0] root = 0
// CHECK-NEXT: %[[B1:.*]] = dist.broadcast %[[B0]] on #mesh axes = [1] root = 0
// CHECK-NEXT: return %[[S]], %[[B1]]
// CHECK-LABEL: func.func @twice
// CHECK-COUNT-3: dist.c_embedding
// CHECK-NOT: dist.broadcast
#mesh = #dist.mesh<shape = [2, 2, 2]>
func.func @init(%x: tensor<2xf32> {dist.param = "other"}) -> (tensor<2xf32> {dist.param = "other"}) attributes {dist.startup} {
  %s = dist.scale %x by 2.0 : tensor<2xf32>
  return %s : tensor<2xf32>
}
func.func @twice(%ids: tensor<4xi64>, %w: tensor<100x8xf32, #dist.tensor<#mesh, [2, -1]>> {dist.param = "w"})
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = dist.embedding %ids, %w : tensor<4xi64>, tensor<100x8xf32, #dist.tensor<#mesh, [2, -1]>> -> tensor<4x8xf32>
  %b = dist.embedding %ids, %w : tensor<4xi64>, tensor<100x8xf32, #dist.tensor<#mesh, [2, -1]>> -> tensor<4x8xf32>
  %c = dist.embedding %ids, %w {dist.recompute} : tensor<4xi64>, tensor<100x8xf32, #dist.tensor<#mesh, [2, -1]>> -> tensor<4x8xf32>
  return %a, %b, %c : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Only recomputed uses: no init sync (Paddle skips recomputed ops).
// CHECK-LABEL: func.func @recompute_only
// CHECK: dist.c_embedding
// CHECK-NOT: dist.startup
#mesh = #dist.mesh<shape = [2, 2]>
func.func @recompute_only(%ids: tensor<4xi64>, %w: tensor<100x8xf32, #dist.tensor<#mesh, [1, -1]>> {dist.param = "w"}) -> tensor<4x8xf32> {
  %c = dist.embedding %ids, %w {dist.recompute} : tensor<4xi64>, tensor<100x8xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// Replicated rows: nothing to lower, the lookup stays local.
// CHECK-LABEL: func.func @replicated
// CHECK-NEXT: dist.embedding
// CHECK-NEXT: dist.embedding
#mesh = #dist.mesh<shape = [2, 2]>
func.func @replicated(%ids: tensor<4xi64>, %w: tensor<100x8xf32, #dist.tensor<#mesh, [-1, -1]>>, %v: tensor<100x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = dist.embedding %ids, %w : tensor<4xi64>, tensor<100x8xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<4x8xf32>
  %b = dist.embedding %ids, %v : tensor<4xi64>, tensor<100x8xf32> -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A user function named @startup that is not the startup function keeps its
// name; the created startup function gets another.
// CHECK-LABEL: func.func @startup()
// CHECK-NEXT: return
// CHECK: func.func @[[NAME:startup_[0-9]+]](%{{.*}}: tensor<100x8xf32, {{.*}}> {dist.param = "w"}) -> {{.*}} attributes {dist.startup}
// CHECK-NEXT: dist.broadcast
#mesh = #dist.mesh<shape = [2, 2]>
func.func @startup() {
  return
}
func.func @name_clash(%ids: tensor<4xi64>, %w: tensor<100x8xf32, #dist.tensor<#mesh, [1, -1]>> {dist.param = "w"}) -> tensor<4x8xf32> {
  %c = dist.embedding %ids, %w : tensor<4xi64>, tensor<100x8xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// Sequence parallelism taking its block of the lookup along the rows' axis:
// the allreduce and the slice are one reduce-scatter (the cast that wrote
// the replication out goes with them).
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// CHECK-LABEL: func.func @lookup_then_sequence_block
// CHECK: %[[P:.*]] = dist.c_embedding %arg0, %arg1 start = %{{.*}} : {{.*}} -> tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1], partial = [1 : sum]>>
// CHECK-NEXT: %[[S:.*]] = dist.reduce_scatter %[[P]] on #mesh axes = [1] reduce = sum : {{.*}} -> tensor<4x4x64xf32, #dist.tensor<#mesh, [-1, 1, -1]>>
// CHECK-NEXT: return %[[S]]
func.func @lookup_then_sequence_block(%ids: tensor<4x16xi64, #dist.tensor<#mesh, [-1, -1]>>, %w: tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>) -> tensor<4x4x64xf32, #dist.tensor<#mesh, [-1, 1, -1]>> {
  %e = dist.embedding %ids, %w : tensor<4x16xi64, #dist.tensor<#mesh, [-1, -1]>>, tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x16x64xf32>
  %c = tensor.cast %e : tensor<4x16x64xf32> to tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1]>>
  %b = dist.all_slice %c on #mesh axes = [1] : tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1]>> -> tensor<4x4x64xf32, #dist.tensor<#mesh, [-1, 1, -1]>>
  return %b : tensor<4x4x64xf32, #dist.tensor<#mesh, [-1, 1, -1]>>
}

// -----

// A lookup with a second use (here made before the slice, so that the slice
// is its first use in use-list order) keeps the allreduce.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// CHECK-LABEL: func.func @lookup_used_twice
// CHECK: dist.c_embedding
// CHECK-NEXT: dist.allreduce {{.*}} axes = [1] reduce = sum
// CHECK-NOT: dist.reduce_scatter
// CHECK: return
func.func @lookup_used_twice(%ids: tensor<4x16xi64, #dist.tensor<#mesh, [-1, -1]>>, %w: tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>) -> (tensor<4x4x64xf32, #dist.tensor<#mesh, [-1, 1, -1]>>, tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1]>>) {
  %e = dist.embedding %ids, %w : tensor<4x16xi64, #dist.tensor<#mesh, [-1, -1]>>, tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1]>>
  %twice = dist.scale %e by 2.000000e+00 : tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1]>>
  %b = dist.all_slice %e on #mesh axes = [1] : tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1]>> -> tensor<4x4x64xf32, #dist.tensor<#mesh, [-1, 1, -1]>>
  return %b, %twice : tensor<4x4x64xf32, #dist.tensor<#mesh, [-1, 1, -1]>>, tensor<4x16x64xf32, #dist.tensor<#mesh, [-1, -1, -1]>>
}

// -----

// A table split by columns (nn.Embedding under ColwiseParallel) is a local
// lookup of each process's columns: the pass leaves it, its gradient too;
// with the rows split as well, the lookup is vocab-parallel over the rows'
// axis on the local columns.
// CHECK-LABEL: func.func @column_split
// CHECK-NEXT: %[[E:.*]] = dist.embedding %arg0, %arg1 : tensor<4xi64>, tensor<100x4xf32, #dist.tensor<#{{.*}}, [-1, 1]>> -> tensor<4x4xf32, #dist.tensor<#{{.*}}, [-1, 1]>>
// CHECK-NEXT: %[[G:.*]] = dist.embedding_grad %arg0, %arg1, %[[E]]
// CHECK-NEXT: return
#mesh = #dist.mesh<shape = [2, 4]>
func.func @column_split(%ids: tensor<4xi64>, %w: tensor<100x4xf32, #dist.tensor<#mesh, [-1, 1]>>) -> (tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<100x4xf32, #dist.tensor<#mesh, [-1, 1]>>) {
  %e = dist.embedding %ids, %w : tensor<4xi64>, tensor<100x4xf32, #dist.tensor<#mesh, [-1, 1]>> -> tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>
  %g = dist.embedding_grad %ids, %w, %e : tensor<4xi64>, tensor<100x4xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>> -> tensor<100x4xf32, #dist.tensor<#mesh, [-1, 1]>>
  return %e, %g : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<100x4xf32, #dist.tensor<#mesh, [-1, 1]>>
}

// CHECK-LABEL: func.func @rows_and_columns_split
// CHECK: %[[P:.*]] = dist.c_embedding %arg0, %arg1 start = %{{.*}} : tensor<4xi64>, tensor<50x4xf32, #dist.tensor<#{{.*}}, [0, 1]>> -> tensor<4x4xf32, #dist.tensor<#{{.*}}, [-1, 1], partial = [0 : sum]>>
// CHECK-NEXT: dist.allreduce %[[P]] on #{{.*}} axes = [0] reduce = sum
func.func @rows_and_columns_split(%ids: tensor<4xi64>, %w: tensor<50x4xf32, #dist.tensor<#mesh, [0, 1]>>) -> tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>> {
  %e = dist.embedding %ids, %w : tensor<4xi64>, tensor<50x4xf32, #dist.tensor<#mesh, [0, 1]>> -> tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>
  return %e : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>
}
