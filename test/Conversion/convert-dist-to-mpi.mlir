// RUN: dist-opt %s --convert-dist-to-mpi -split-input-file | FileCheck %s

// Coordinates come from the rank's position in the process-id list (a
// search of the list for permuted ids) unravelled row-major, once per
// function; each collective's group is a runtime communicator split by the
// coordinates off its axes (color) and along them (key), with a group id
// per (mesh, axes).
// CHECK-LABEL: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}
// CHECK-DAG:  func.func private @dist_runtime_finalize()
// CHECK-DAG:  func.func private @dist_comm_get(i64, i64, i64) -> !mpi.comm
// CHECK-DAG:  func.func private @dist_iallreduce_f32(memref<?xf32>, memref<?xf32>, i64, !mpi.comm) -> i64 attributes {llvm.emit_c_interface}
// CHECK-DAG:  func.func private @dist_wait_f32(i64, memref<?xf32>) attributes {llvm.emit_c_interface}
// The entry makes every group's communicator first, in the order of their
// ids, on every process (a function called by only some would deadlock in
// MPI_Comm_split), and calls the runtime's finalisation (it frees the
// communicators) before MPI's.
// CHECK-LABEL: func.func @main()
// CHECK-NEXT: mpi.init
// CHECK-NEXT: mpi.comm_world
// CHECK-NEXT: mpi.comm_rank
// CHECK:      %[[G0:.*]] = arith.constant 0 : i64
// CHECK:      call @dist_comm_get(%[[G0]], %{{.*}}, %{{.*}})
// The mesh's coordinates are found once for both.
// CHECK-NOT:  scf.for
// CHECK:      %[[G1:.*]] = arith.constant 1 : i64
// CHECK:      call @dist_comm_get(%[[G1]], %{{.*}}, %{{.*}})
// CHECK-NEXT: call @dist_runtime_finalize() : () -> ()
// CHECK-NEXT: mpi.finalize
// CHECK-NEXT: return
// CHECK-LABEL: func.func @collectives
// The encodings are gone from every type, the future too.
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<4xf32>) -> (tensor<2x3xf32>, tensor<4xf32>, index)
// CHECK:      %[[WORLD:.*]] = mpi.comm_world : !mpi.comm
// CHECK:      %[[RANK:.*]] = mpi.comm_rank(%[[WORLD]]) : i32
// CHECK:      %[[R:.*]] = arith.index_cast %[[RANK]] : i32 to index
// CHECK:      %[[IDS:.*]] = arith.constant dense<[3, 2, 1, 0]> : tensor<4xindex>
// CHECK:      %[[POS:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[P:.*]] = %{{.*}}) -> (index)
// CHECK:        %[[ID:.*]] = tensor.extract %[[IDS]][%[[I]]]
// CHECK:        %[[EQ:.*]] = arith.cmpi eq, %[[ID]], %[[R]] : index
// CHECK:        arith.select %[[EQ]], %[[I]], %[[P]] : index
// CHECK:      %[[C:.*]]:2 = affine.delinearize_index %[[POS]] into (2, 2) : index, index
// The avg over axis 1 (mp): color = dp coordinate, key = mp coordinate.
// CHECK:      %[[G0:.*]] = arith.constant 0 : i64
// CHECK:      %[[COLOR0:.*]] = affine.linearize_index disjoint [%[[C]]#0] by (2)
// CHECK:      %[[KEY0:.*]] = affine.linearize_index disjoint [%[[C]]#1] by (2)
// CHECK:      %[[COMM:.*]] = call @dist_comm_get(%[[G0]], %{{.*}}, %{{.*}}) : (i64, i64, i64) -> !mpi.comm
// The broadcast over axis 0 (dp): the other way round, group id 1.
// CHECK:      %[[G1:.*]] = arith.constant 1 : i64
// CHECK:      affine.linearize_index disjoint [%[[C]]#1] by (2)
// CHECK:      affine.linearize_index disjoint [%[[C]]#0] by (2)
// CHECK:      %[[RCOMM:.*]] = call @dist_comm_get(%[[G1]], %{{.*}}, %{{.*}})
// 1-D buffers: MLIR 22's MPI lowering counts only the first dimension.
// CHECK:      %[[IN:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<2x3xf32> to memref<2x3xf32>
// CHECK-NEXT: %[[FLAT:.*]] = memref.collapse_shape %[[IN]] {{\[\[}}0, 1]] : memref<2x3xf32> into memref<6xf32>
// CHECK-NEXT: %[[OUT:.*]] = memref.alloc() : memref<6xf32>
// CHECK-NEXT: mpi.allreduce(%[[FLAT]], %[[OUT]], MPI_SUM, %[[COMM]]) : memref<6xf32>, memref<6xf32>
// CHECK-NEXT: memref.expand_shape %[[OUT]] {{\[\[}}0, 1]] output_shape [2, 3]
// CHECK-NEXT: %[[SUM:.*]] = bufferization.to_tensor {{.*}} restrict writable
// avg: the sum divided by the group size.
// CHECK:      %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:      linalg.generic {{.*}} ins(%[[SUM]]
// CHECK:      arith.mulf %{{.*}}, %[[HALF]]
// The asynchronous broadcast: the root (position 1 along dp) contributes
// its value, everyone else zeros, into a non-blocking sum issued here (the
// runtime copies the send buffer) and completed where the dist.wait was; the
// wait names the receive buffer, which MPI writes until then.
// CHECK:      %[[GPOS:.*]] = affine.linearize_index disjoint [%[[C]]#0] by (2)
// CHECK:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[ISROOT:.*]] = arith.cmpi eq, %[[GPOS]], %[[ONE]] : index
// CHECK:      %[[CONTRIB:.*]] = arith.select %[[ISROOT]], %[[Y]], %{{.*}} : tensor<4xf32>
// CHECK:      %[[SBUF:.*]] = bufferization.to_buffer %[[CONTRIB]] read_only
// CHECK-NEXT: %[[RECV:.*]] = memref.alloc() : memref<4xf32>
// DIST_REDUCE_SUM is 1 in the runtime's ABI.
// CHECK-NEXT: %[[KIND:.*]] = arith.constant 1 : i64
// CHECK-NEXT: %[[SENDV:.*]] = memref.cast %[[SBUF]] : memref<4xf32> to memref<?xf32>
// CHECK-NEXT: %[[RECVV:.*]] = memref.cast %[[RECV]] : memref<4xf32> to memref<?xf32>
// CHECK:      %[[REQ:.*]] = call @dist_iallreduce_f32(%[[SENDV]], %[[RECVV]], %[[KIND]], %[[RCOMM]])
// CHECK-NEXT: %[[WAITR:.*]] = memref.cast %[[RECV]] : memref<4xf32> to memref<?xf32>
// CHECK-NEXT: call @dist_wait_f32(%[[REQ]], %[[WAITR]]) : (i64, memref<?xf32>) -> ()
// CHECK-NEXT: %[[BV:.*]] = bufferization.to_tensor %[[RECV]] restrict writable
// CHECK:      return %{{.*}}, %[[BV]], %[[C]]#1
// CHECK-NOT:  dist.
#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "mp"], process_ids = [3, 2, 1, 0]>
func.func @main() {
  return
}
func.func @collectives(%x: tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : avg]>>, %y: tensor<4xf32>) -> (tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<4xf32>, index) {
  %r = dist.allreduce %x on #mesh axes = [1] reduce = avg : tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : avg]>> -> tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1]>>
  %b = dist.broadcast %y on #mesh axes = [0] root = 1 stream = dp : tensor<4xf32> -> !dist.future<tensor<4xf32>>
  %c = dist.process_coord #mesh axis = 1
  %bv = dist.wait %b : !dist.future<tensor<4xf32>>
  return %r, %bv, %c : tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<4xf32>, index
}

// -----

// Reductions map to MPI's; default process ids need no search; c_identity
// is the identity; the communicator is built once for the three.
// CHECK-LABEL: func.func @kinds
// CHECK-NOT: scf.for
// CHECK: %[[R:.*]] = arith.index_cast
// CHECK: %[[C:.*]] = affine.delinearize_index %[[R]] into (4) : index
// CHECK: %[[COMM:.*]] = call @dist_comm_get
// CHECK: mpi.allreduce({{.*}}, MPI_MAX, %[[COMM]])
// CHECK: mpi.allreduce({{.*}}, MPI_MIN, %[[COMM]])
// CHECK: mpi.allreduce({{.*}}, MPI_PROD, %[[COMM]])
// CHECK-NOT: dist_comm_get
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %arg0
#mesh = #dist.mesh<shape = [4]>
func.func @kinds(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %a = dist.allreduce %x on #mesh axes = [0] reduce = max : tensor<4xi32> -> tensor<4xi32>
  %b = dist.allreduce %x on #mesh axes = [0] reduce = min : tensor<4xi32> -> tensor<4xi32>
  %c = dist.allreduce %x on #mesh axes = [0] reduce = prod : tensor<4xi32> -> tensor<4xi32>
  %d = dist.c_identity %x on #mesh axes = [0] : tensor<4xi32> -> tensor<4xi32>
  return %a, %b, %c, %d : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// -----

// Element types MPI cannot reduce are widened and narrowed back: f16 and
// bf16 are summed in f32 and rounded once, i8 in i32 (signed), i1 in i32
// (unsigned, so that MAX is "any").
// CHECK-LABEL: func.func @widened
// CHECK: %[[W:.*]] = arith.extf %arg0 : tensor<4xf16> to tensor<4xf32>
// CHECK: mpi.allreduce({{.*}}, MPI_SUM, {{.*}}) : memref<4xf32>, memref<4xf32>
// CHECK: %[[S:.*]] = bufferization.to_tensor
// CHECK: arith.truncf %[[S]] : tensor<4xf32> to tensor<4xf16>
// CHECK: arith.extf %arg1 : tensor<4xbf16> to tensor<4xf32>
// CHECK: mpi.allreduce({{.*}}, MPI_MAX, {{.*}}) : memref<4xf32>, memref<4xf32>
// CHECK: arith.truncf %{{.*}} : tensor<4xf32> to tensor<4xbf16>
// CHECK: arith.extsi %arg2 : tensor<4xi8> to tensor<4xi32>
// CHECK: mpi.allreduce({{.*}}, MPI_MIN, {{.*}}) : memref<4xi32>, memref<4xi32>
// CHECK: arith.trunci %{{.*}} : tensor<4xi32> to tensor<4xi8>
// CHECK: arith.extui %arg3 : tensor<1xi1> to tensor<1xi32>
// CHECK: mpi.allreduce({{.*}}, MPI_MAX, {{.*}}) : memref<1xi32>, memref<1xi32>
// CHECK: arith.trunci %{{.*}} : tensor<1xi32> to tensor<1xi1>
#mesh = #dist.mesh<shape = [2]>
func.func @widened(%h: tensor<4xf16>, %b: tensor<4xbf16>, %i: tensor<4xi8>, %f: tensor<1xi1>) -> (tensor<4xf16>, tensor<4xbf16>, tensor<4xi8>, tensor<1xi1>) {
  %0 = dist.allreduce %h on #mesh axes = [0] reduce = sum : tensor<4xf16> -> tensor<4xf16>
  %1 = dist.allreduce %b on #mesh axes = [0] reduce = max : tensor<4xbf16> -> tensor<4xbf16>
  %2 = dist.allreduce %i on #mesh axes = [0] reduce = min : tensor<4xi8> -> tensor<4xi8>
  %3 = dist.allreduce %f on #mesh axes = [0] reduce = max : tensor<1xi1> -> tensor<1xi1>
  return %0, %1, %2, %3 : tensor<4xf16>, tensor<4xbf16>, tensor<4xi8>, tensor<1xi1>
}

// -----

// Asynchronous forms: an avg is DIST_REDUCE_AVG (5), divided by the runtime
// when it completes; an f16 future receives f32 and is rounded after the
// wait; an asynchronous c_identity has nothing to wait for
// (DIST_REQUEST_NONE, -1).
// CHECK-LABEL: func.func @async_forms
// CHECK: %[[AVG:.*]] = arith.constant 5 : i64
// CHECK: %[[RA:.*]] = call @dist_iallreduce_f32(%{{.*}}, %{{.*}}, %[[AVG]], %{{.*}})
// CHECK: arith.extf %arg1 : tensor<4xf16> to tensor<4xf32>
// CHECK: bufferization.to_buffer
// CHECK-NEXT: %[[RECV:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[RH:.*]] = call @dist_iallreduce_f32
// CHECK: %[[NONE:.*]] = arith.constant -1 : i64
// CHECK: call @dist_wait_f32(%[[RA]], %{{.*}})
// CHECK: call @dist_wait_f32(%[[RH]], %{{.*}})
// CHECK: %[[H:.*]] = bufferization.to_tensor %[[RECV]] restrict writable : memref<4xf32> to tensor<4xf32>
// CHECK: arith.truncf %[[H]] : tensor<4xf32> to tensor<4xf16>
// CHECK: call @dist_wait_f32(%[[NONE]], %{{.*}})
#mesh = #dist.mesh<shape = [2], names = ["dp"]>
func.func @async_forms(%x: tensor<4xf32>, %h: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf16>, tensor<4xf32>) {
  %a = dist.allreduce %x on #mesh axes = [0] reduce = avg stream = dp : tensor<4xf32> -> !dist.future<tensor<4xf32>>
  %b = dist.allreduce %h on #mesh axes = [0] reduce = sum stream = dp : tensor<4xf16> -> !dist.future<tensor<4xf16>>
  %c = dist.c_identity %x on #mesh axes = [0] stream = dp : tensor<4xf32> -> !dist.future<tensor<4xf32>>
  %av = dist.wait %a : !dist.future<tensor<4xf32>>
  %bv = dist.wait %b : !dist.future<tensor<4xf16>>
  %cv = dist.wait %c : !dist.future<tensor<4xf32>>
  return %av, %bv, %cv : tensor<4xf32>, tensor<4xf16>, tensor<4xf32>
}

// -----

// Compute ops are --convert-dist-to-linalg's: they stay, with the encodings
// their types declare, behind tensor.casts.
// CHECK-LABEL: func.func @compute_stays(%{{.*}}: tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[AR:.*]] = bufferization.to_tensor
// CHECK: %[[ENC:.*]] = tensor.cast %[[AR]] : tensor<4xf32> to tensor<4xf32, #dist.tensor<#mesh, [-1]>>
// CHECK: %[[S:.*]] = dist.scale %[[ENC]] by 2.000000e+00 : tensor<4xf32, #dist.tensor<#mesh, [-1]>>
// CHECK: %[[PLAIN:.*]] = tensor.cast %[[S]] : tensor<4xf32, #dist.tensor<#mesh, [-1]>> to tensor<4xf32>
// CHECK: return %[[PLAIN]]
#mesh = #dist.mesh<shape = [2]>
func.func @compute_stays(%x: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1]>> {
  %r = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  %s = dist.scale %r by 2.0 : tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  return %s : tensor<4xf32, #dist.tensor<#mesh, [-1]>>
}

// -----

// Process ids as large as 2^31 (and beyond int32): the position is a search
// of the two-entry id list, not a table indexed by id.
// CHECK-LABEL: func.func @huge_ids
// CHECK: %[[IDS:.*]] = arith.constant dense<[0, 2147483648]> : tensor<2xindex>
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[C2]]
// CHECK:   tensor.extract %[[IDS]][%[[I]]] : tensor<2xindex>
// CHECK: call @dist_comm_get
#mesh = #dist.mesh<shape = [2], process_ids = [0, 2147483648]>
func.func @huge_ids(%x: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1]>> {
  %a = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  return %a : tensor<4xf32, #dist.tensor<#mesh, [-1]>>
}
