// RUN: dist-opt %s --ownership-based-buffer-deallocation --buffer-deallocation-simplification --canonicalize --split-input-file --verify-diagnostics | FileCheck %s

// The memory effects dist gives the upstream mpi ops that declare none
// (MPIMemoryEffects.cpp): with them, buffer deallocation frees the buffers
// of a function that initialises MPI and communicates, after the last
// transfer; init and finalize stay where they are.
// CHECK-LABEL: func.func @blocking
// CHECK:      mpi.init
// CHECK:      %[[SEND:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: %[[RECV:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: mpi.allreduce(%[[SEND]], %[[RECV]], MPI_SUM, %{{.*}})
// CHECK-NEXT: mpi.send(%[[SEND]],
// CHECK-NEXT: mpi.recv(%[[RECV]],
// CHECK-NEXT: mpi.finalize
// CHECK-NEXT: bufferization.dealloc (%[[SEND]] : memref<4xf32>)
// CHECK-NEXT: bufferization.dealloc (%[[RECV]] : memref<4xf32>)
// CHECK-NEXT: return
func.func @blocking() {
  mpi.init
  %comm = mpi.comm_world : !mpi.comm
  %tag = arith.constant 0 : i32
  %send = memref.alloc() : memref<4xf32>
  %recv = memref.alloc() : memref<4xf32>
  mpi.allreduce(%send, %recv, MPI_SUM, %comm) : memref<4xf32>, memref<4xf32>
  mpi.send(%send, %tag, %tag, %comm) : memref<4xf32>, i32, i32
  mpi.recv(%recv, %tag, %tag, %comm) : memref<4xf32>, i32, i32
  mpi.finalize
  return
}

// -----

// A non-blocking send reads its buffer until a wait it does not name: it
// keeps unknown effects, and deallocation refuses the function instead of
// freeing the buffer while MPI reads it.
func.func @nonblocking() {
  %comm = mpi.comm_world : !mpi.comm
  %tag = arith.constant 0 : i32
  %send = memref.alloc() : memref<4xf32>
  // expected-error @below {{ops with unknown memory side effects are not supported}}
  %req = mpi.isend(%send, %tag, %tag, %comm) : memref<4xf32>, i32, i32 -> !mpi.request
  return
}
