// RUN: dist-opt %s --convert-dist-to-mpi -split-input-file | FileCheck %s

// Coordinates come from the rank's position in the process-id list (a
// lookup table for permuted ids); each collective's group is a communicator
// split by the coordinates off its axes (color) and along them (key).
// CHECK-LABEL: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}
// The runtime entry points the asynchronous broadcast below calls.
// CHECK-DAG:  func.func private @dist_comm_split(i64, i64) -> i64
// CHECK-DAG:  func.func private @dist_iallreduce_f32(memref<?xf32>, memref<?xf32>, i64, i64) -> i64 attributes {llvm.emit_c_interface}
// CHECK-DAG:  func.func private @dist_wait(i64)
// CHECK-LABEL: func.func @main()
// CHECK-NEXT: mpi.init
// CHECK-NEXT: mpi.finalize
// CHECK-NEXT: return
// CHECK-LABEL: func.func @collectives
// The encodings are gone from every type, the future too.
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<4xf32>) -> (tensor<2x3xf32>, tensor<4xf32>, index)
// CHECK:      %[[WORLD:.*]] = mpi.comm_world : !mpi.comm
// CHECK:      %[[RANK:.*]] = mpi.comm_rank(%[[WORLD]]) : i32
// CHECK:      %[[R:.*]] = arith.index_cast %[[RANK]] : i32 to index
// CHECK:      %[[TABLE:.*]] = arith.constant dense<[3, 2, 1, 0]> : tensor<4xindex>
// CHECK:      %[[POS:.*]] = tensor.extract %[[TABLE]][%[[R]]]
// CHECK:      %[[D0:.*]] = arith.divui %[[POS]], %{{.*}} : index
// CHECK:      %[[DP:.*]] = arith.remui %[[D0]], %{{.*}} : index
// CHECK:      %[[D1:.*]] = arith.divui %[[POS]], %{{.*}} : index
// CHECK:      %[[MP:.*]] = arith.remui %[[D1]], %{{.*}} : index
// CHECK:      %[[COMM:.*]] = mpi.comm_split(%[[WORLD]], %{{.*}}, %{{.*}}) : !mpi.comm
// 1-D buffers: MLIR 22's MPI lowering counts only the first dimension.
// CHECK:      %[[IN:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<2x3xf32> to memref<2x3xf32>
// CHECK-NEXT: %[[FLAT:.*]] = memref.collapse_shape %[[IN]] {{\[\[}}0, 1]] : memref<2x3xf32> into memref<6xf32>
// CHECK-NEXT: %[[OUT:.*]] = memref.alloc() : memref<6xf32>
// CHECK-NEXT: mpi.allreduce(%[[FLAT]], %[[OUT]], MPI_SUM, %[[COMM]]) : memref<6xf32>, memref<6xf32>
// CHECK-NEXT: memref.expand_shape %[[OUT]] {{\[\[}}0, 1]] output_shape [2, 3]
// CHECK-NEXT: %[[SUM:.*]] = bufferization.to_tensor {{.*}} restrict writable
// avg: the sum divided by the group size.
// CHECK:      %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:      linalg.generic
// CHECK:      arith.mulf
// The asynchronous broadcast: the root contributes its value, everyone else
// zeros, into a non-blocking sum (MPI_Iallreduce in libdist_runtime) issued
// here on a copy of the send buffer, and completed (MPI_Wait) where the
// dist.wait was.
// CHECK:      %[[RCOMM:.*]] = call @dist_comm_split(%{{.*}}, %{{.*}}) : (i64, i64) -> i64
// CHECK:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[ISROOT:.*]] = arith.cmpi eq, %{{.*}}, %[[ONE]] : index
// CHECK:      %[[CONTRIB:.*]] = arith.select %[[ISROOT]], %[[Y]], %{{.*}} : tensor<4xf32>
// CHECK:      %[[SBUF:.*]] = bufferization.to_buffer %[[CONTRIB]] read_only
// CHECK:      %[[SEND:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[SBUF]], %[[SEND]]
// CHECK-NEXT: %[[RECV:.*]] = memref.alloc() : memref<4xf32>
// CHECK:      %[[REQ:.*]] = call @dist_iallreduce_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[RCOMM]])
// CHECK:      call @dist_wait(%[[REQ]]) : (i64) -> ()
// CHECK-NEXT: bufferization.to_tensor %[[RECV]] restrict writable
// CHECK:      return %{{.*}}, %{{.*}}, %[[MP]]
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

// Reductions map to MPI's; default process ids need no table; c_identity is
// the identity.
// CHECK-LABEL: func.func @kinds
// CHECK-NOT: arith.constant dense
// CHECK: mpi.allreduce({{.*}}, MPI_MAX,
// CHECK: mpi.allreduce({{.*}}, MPI_MIN,
// CHECK: mpi.allreduce({{.*}}, MPI_PROD,
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %arg0
#mesh = #dist.mesh<shape = [4]>
func.func @kinds(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %a = dist.allreduce %x on #mesh axes = [0] reduce = max : tensor<4xi32> -> tensor<4xi32>
  %b = dist.allreduce %x on #mesh axes = [0] reduce = min : tensor<4xi32> -> tensor<4xi32>
  %c = dist.allreduce %x on #mesh axes = [0] reduce = prod : tensor<4xi32> -> tensor<4xi32>
  %d = dist.c_identity %x on #mesh axes = [0] : tensor<4xi32> -> tensor<4xi32>
  return %a, %b, %c, %d : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}
