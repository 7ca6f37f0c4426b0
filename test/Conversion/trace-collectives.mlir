// RUN: dist-opt %s --convert-dist-to-mpi=trace-collectives=1 | FileCheck %s
// RUN: dist-opt %s --convert-dist-to-mpi | FileCheck %s --check-prefix=OFF
// RUN: dist-opt %s --convert-dist-to-mpi=trace-events=1 | FileCheck %s --check-prefix=EVENTS

// With trace-collectives, each collective that communicates first calls
// dist_trace_collective with its description (a constant string), the
// signature of what it reduces, its element count, its stream (0: blocking,
// 2: dp) and its communicator; the blocking form then is mpi.allreduce, the
// asynchronous one the runtime's iallreduce. c_identity does not
// communicate: no trace.
// CHECK-COUNT-2: memref.global "private" constant @__dist_str_{{[0-9A-F]+}} : memref<77xi8>
// CHECK-DAG: func.func private @dist_trace_collective(memref<?xi8>, i64, i64, i64, !mpi.comm) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @traced
// CHECK:      %[[COMM:.*]] = call @dist_comm_get(
// CHECK:      %[[S1:.*]] = memref.get_global @__dist_str_{{[0-9A-F]+}} : memref<77xi8>
// CHECK-NEXT: %[[S1C:.*]] = memref.cast %[[S1]] : memref<77xi8> to memref<?xi8>
// CHECK-NEXT: %[[SIG1:.*]] = arith.constant {{[0-9]+}} : i64
// CHECK-NEXT: %[[N1:.*]] = arith.constant 6 : i64
// CHECK-NEXT: %[[ST1:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @dist_trace_collective(%[[S1C]], %[[SIG1]], %[[N1]], %[[ST1]], %[[COMM]])
// CHECK:      mpi.allreduce
// CHECK:      memref.get_global @__dist_str_{{[0-9A-F]+}} : memref<77xi8>
// CHECK:      %[[N2:.*]] = arith.constant 4 : i64
// CHECK-NEXT: %[[ST2:.*]] = arith.constant 2 : i64
// CHECK-NEXT: call @dist_trace_collective(%{{.*}}, %{{.*}}, %[[N2]], %[[ST2]], %[[COMM]])
// CHECK:      call @dist_iallreduce_f32(
// CHECK-NOT:  dist_trace_collective
// CHECK:      return
// OFF-NOT: dist_trace_collective
// trace-events (implies trace-collectives): the runtime is also told when
// each collective has been issued, the blocking one right after
// mpi.allreduce, the asynchronous one after the iallreduce call.
// EVENTS-DAG: func.func private @dist_trace_collective_end()
// EVENTS-LABEL: func.func @traced
// EVENTS:      call @dist_trace_collective(
// EVENTS:      mpi.allreduce
// EVENTS-NEXT: call @dist_trace_collective_end() : () -> ()
// EVENTS:      call @dist_trace_collective(
// EVENTS:      call @dist_iallreduce_f32(
// EVENTS-NEXT: call @dist_trace_collective_end() : () -> ()
// EVENTS-NOT:  dist_trace_collective
// OFF-NOT: __dist_str

// A blocking all-gather (or reduce-scatter, all-to-all) is the runtime's
// start and wait: it is issued, for the timeline, only after the wait,
// since over a network MPI moves most of its data there. The
// asynchronous one is issued after its start.
// EVENTS-LABEL: func.func @gathers
// EVENTS:      call @dist_trace_collective(
// EVENTS:      %[[R:.*]] = call @dist_iallgather_f32(
// EVENTS-NOT:  dist_trace_collective_end
// EVENTS:      call @dist_wait_f32(%[[R]],
// EVENTS-NEXT: call @dist_trace_collective_end() : () -> ()
// EVENTS:      call @dist_trace_collective(
// EVENTS:      call @dist_iallgather_f32(
// EVENTS-NEXT: call @dist_trace_collective_end() : () -> ()
// EVENTS:      call @dist_wait_f32(
// EVENTS-NOT:  dist_trace_collective_end
// EVENTS:      return
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @traced(%x: tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>, %y: tensor<4xf32>) -> (tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<4xf32>, tensor<4xf32>) {
  %a = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1]>>
  %f = dist.allreduce %y on #mesh axes = [0] reduce = max stream = dp : tensor<4xf32> -> !dist.future<tensor<4xf32>>
  %b = dist.wait %f : !dist.future<tensor<4xf32>>
  %i = dist.c_identity %y on #mesh axes = [0] : tensor<4xf32> -> tensor<4xf32>
  return %a, %b, %i : tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<4xf32>, tensor<4xf32>
}

func.func @gathers(%x: tensor<4xf32, #dist.tensor<#mesh, [0]>>) -> (tensor<8xf32, #dist.tensor<#mesh, [-1]>>, tensor<8xf32, #dist.tensor<#mesh, [-1]>>) {
  %a = dist.all_gather %x on #mesh axes = [0] : tensor<4xf32, #dist.tensor<#mesh, [0]>> -> tensor<8xf32, #dist.tensor<#mesh, [-1]>>
  %f = dist.all_gather %x on #mesh axes = [0] stream = dp : tensor<4xf32, #dist.tensor<#mesh, [0]>> -> !dist.future<tensor<8xf32, #dist.tensor<#mesh, [-1]>>>
  %b = dist.wait %f : !dist.future<tensor<8xf32, #dist.tensor<#mesh, [-1]>>>
  return %a, %b : tensor<8xf32, #dist.tensor<#mesh, [-1]>>, tensor<8xf32, #dist.tensor<#mesh, [-1]>>
}
