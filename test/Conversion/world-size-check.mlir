// With world-size, the entry checks the process count at run time, right
// after MPI_Init: a launcher's -n is not known when the program is lowered.
// RUN: dist-opt %s --convert-dist-to-mpi="world-size=4" -split-input-file | FileCheck %s
// RUN: dist-opt %s --convert-dist-to-mpi -split-input-file | FileCheck %s --check-prefix=NONE
// The runtime's name for the check is reserved.
// RUN: not dist-opt %s --convert-dist-to-mpi="world-size=4 entry=reserved" -split-input-file 2>&1 | FileCheck %s --check-prefix=RESERVED

// CHECK: func.func private @dist_check_world_size(i64)
// CHECK-LABEL: func.func @main
// CHECK-NEXT: mpi.init
// CHECK-NEXT: %[[N:.*]] = arith.constant 4 : i64
// CHECK-NEXT: call @dist_check_world_size(%[[N]]) : (i64) -> ()
// CHECK-NEXT: mpi.finalize
// CHECK-NEXT: return
// NONE-NOT: call @dist_check_world_size
// NONE-NOT: private @dist_check_world_size
func.func @main() {
  return
}

// -----

// RESERVED: error: the module defines 'dist_check_world_size', a name the dist runtime reserves, as something else
func.func @reserved() {
  return
}
func.func @dist_check_world_size() {
  return
}
