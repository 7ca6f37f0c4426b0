// RUN: dist-opt %s --convert-dist-to-mpi="trace-events=1 world-size=2" | FileCheck %s
// RUN: dist-opt %s --convert-dist-to-mpi="trace-collectives=1 world-size=2" | FileCheck %s --check-prefix=OFF
// RUN: dist-opt %s --convert-dist-to-mpi="world-size=2" | FileCheck %s --check-prefix=OFF

// With trace-events, every function with a body tells the runtime when a
// call begins (1) and ends (0), with its name as a constant string: the
// trace gets one interval per call. An external declaration has no body to
// bracket; a function with two returns ends before each.
// CHECK-DAG: func.func private @dist_trace_function(memref<?xi8>, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG: memref.global "private" constant @__dist_str_{{[0-9A-F]+}} : memref<4xi8> = dense<[115, 116, 101, 112]>
// CHECK-DAG: memref.global "private" constant @__dist_str_{{[0-9A-F]+}} : memref<9xi8> = dense<[116, 119, 111, 95, 101, 120, 105, 116, 115]>
// CHECK-DAG: memref.global "private" constant @__dist_str_{{[0-9A-F]+}} : memref<4xi8> = dense<[109, 97, 105, 110]>
// CHECK-NOT: call @dist_trace_function{{.*}}
// CHECK-LABEL: func.func private @external(
// CHECK-LABEL: func.func @step(
// CHECK:      %[[NAME:.*]] = memref.cast %{{.*}} : memref<4xi8> to memref<?xi8>
// CHECK-NEXT: %[[BEGIN:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @dist_trace_function(%[[NAME]], %[[BEGIN]])
// CHECK:      mpi.allreduce
// CHECK:      %[[END:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @dist_trace_function(%{{.*}}, %[[END]])
// CHECK-NEXT: return
// CHECK-LABEL: func.func @two_exits(
// CHECK:      arith.constant 1 : i64
// CHECK-NEXT: call @dist_trace_function
// CHECK:      cf.cond_br
// CHECK:      ^bb1:
// CHECK:      arith.constant 0 : i64
// CHECK-NEXT: call @dist_trace_function
// CHECK-NEXT: return
// CHECK:      ^bb2:
// CHECK:      arith.constant 0 : i64
// CHECK-NEXT: call @dist_trace_function
// CHECK-NEXT: return
// The entry's call lies inside MPI_Init .. MPI_Finalize, where the runtime
// writes the timeline.
// CHECK-LABEL: func.func @main()
// CHECK:      mpi.init
// CHECK:      call @dist_check_world_size(
// CHECK:      call @dist_trace_function(%{{.*}}, %{{.*}})
// CHECK:      call @step(
// CHECK:      call @dist_trace_function(%{{.*}}, %{{.*}})
// CHECK:      mpi.finalize
// CHECK-NEXT: return
// OFF-NOT: dist_trace_function

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func private @external(tensor<4xf32>) -> tensor<4xf32>

func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<4xf32> -> tensor<4xf32>
  return %a : tensor<4xf32>
}

func.func @two_exits(%c: i1, %x: tensor<4xf32>) -> tensor<4xf32> {
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  return %x : tensor<4xf32>
^bb2:
  %y = func.call @external(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

func.func @main() {
  %x = arith.constant dense<1.0> : tensor<4xf32>
  %r = func.call @step(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
