// The two lowerings claim disjoint ops and share their type conversion, so
// they give the same program in either order and as one conversion (the
// exported pattern sets under upstream's applyPartialConversion).
// RUN: dist-opt %s --convert-dist-to-linalg --convert-dist-to-mpi | FileCheck %s --implicit-check-not="dist." --implicit-check-not="#dist"
// RUN: dist-opt %s --convert-dist-to-mpi --convert-dist-to-linalg | FileCheck %s --implicit-check-not="dist." --implicit-check-not="#dist"
// RUN: dist-opt %s --test-dist-lower-as-one | FileCheck %s --implicit-check-not="dist." --implicit-check-not="#dist"
// A second pass over lowered code changes nothing (one mpi.init).
// RUN: dist-opt %s --test-dist-lower-as-one --convert-dist-to-mpi --convert-dist-to-linalg | FileCheck %s --implicit-check-not="dist." --implicit-check-not="#dist"

// CHECK-LABEL: func.func @main()
// CHECK:       mpi.init
// The split dropout's coordinate, and the allreduce's communicator.
// CHECK-DAG:   affine.delinearize_index %{{.*}} into (2, 2)
// CHECK-DAG:   call @dist_comm_get
// CHECK:       linalg.generic
// CHECK:       linalg.index 1
// CHECK:       arith.cmpf oge
// CHECK:       mpi.allreduce({{.*}}, MPI_SUM
// CHECK:       call @dist_iallreduce_f32
// CHECK:       call @dist_wait
// CHECK:       call @dist_runtime_finalize()
// CHECK-NEXT:  mpi.finalize
#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "mp"]>
func.func @main() {
  %x = arith.constant dense<1.0> : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>
  %s = dist.seed 5 : tensor<1xi32>
  %d = dist.dropout %x seed(%s : tensor<1xi32>) prob = 5.000000e-01 : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>> -> tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>
  // Re-annotated through an unannotated tensor (a trusted assertion), to
  // have something partial to reduce.
  %dp = tensor.cast %d : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>> to tensor<4x4xf32>
  %p = tensor.cast %dp : tensor<4x4xf32> to tensor<4x4xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<4x4xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<4x4xf32, #dist.tensor<#mesh, [-1, -1]>>
  %rp = tensor.cast %r : tensor<4x4xf32, #dist.tensor<#mesh, [-1, -1]>> to tensor<4x4xf32>
  %q = tensor.cast %rp : tensor<4x4xf32> to tensor<4x4xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>
  %f = dist.allreduce %q on #mesh axes = [1] reduce = sum stream = mp : tensor<4x4xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>> -> !dist.future<tensor<4x4xf32, #dist.tensor<#mesh, [-1, -1]>>>
  %w = dist.wait %f : !dist.future<tensor<4x4xf32, #dist.tensor<#mesh, [-1, -1]>>>
  return
}
