// A program that waits for a non-blocking allreduce with another receive
// buffer than it started it with (the lowering never does; a hand-written
// call might): the runtime stops it instead of letting MPI write into a
// buffer the program may already have freed.
func.func private @dist_comm_get(i64, i64, i64) -> !mpi.comm
func.func private @dist_iallreduce_f32(memref<?xf32>, memref<?xf32>, i64, !mpi.comm) -> i64 attributes {llvm.emit_c_interface}
func.func private @dist_wait_f32(i64, memref<?xf32>) attributes {llvm.emit_c_interface}
func.func @main() {
  %zero = arith.constant 0 : i64
  %sum = arith.constant 1 : i64
  %comm = call @dist_comm_get(%zero, %zero, %zero) : (i64, i64, i64) -> !mpi.comm
  %send = memref.alloc() : memref<4xf32>
  %recv = memref.alloc() : memref<4xf32>
  %other = memref.alloc() : memref<4xf32>
  %s = memref.cast %send : memref<4xf32> to memref<?xf32>
  %r = memref.cast %recv : memref<4xf32> to memref<?xf32>
  %o = memref.cast %other : memref<4xf32> to memref<?xf32>
  %request = call @dist_iallreduce_f32(%s, %r, %sum, %comm) : (memref<?xf32>, memref<?xf32>, i64, !mpi.comm) -> i64
  call @dist_wait_f32(%request, %o) : (i64, memref<?xf32>) -> ()
  return
}
