// The shipped example parses, verifies and round-trips (text, generic and
// bytecode forms), and keeps the structure the passes rely on.
// RUN: dist-opt %examples/gpt_block.mlir --verify-roundtrip | FileCheck %s
// RUN: dist-opt %examples/gpt_block.mlir --mlir-print-op-generic | dist-opt | FileCheck %s

// CHECK: #mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// CHECK-LABEL: func.func @train_step
// CHECK:       dist.embedding
// CHECK:       dist.dropout
// CHECK:       dist.matmul
// CHECK:       dist.matmul
// CHECK:       dist.allreduce {{.*}} axes = [1] reduce = sum
// CHECK:       dist.dropout
// CHECK:       dist.matmul_grad
// CHECK:       %[[DX:.*]], %{{.*}} = dist.matmul_grad
// CHECK-NEXT:  dist.allreduce %[[DX]] on #mesh axes = [1] reduce = sum
// CHECK:       dist.embedding_grad
// CHECK:       dist.check_finite_and_unscale
// CHECK:       dist.allreduce {{.*}} axes = [0, 1] reduce = max

// The README's main command splits the column-parallel matmul_grad: the dX
// allreduce moves above the dW matmul. The row-parallel one has no allreduce
// of dX and stays.
// RUN: dist-opt %examples/gpt_block.mlir --dist-matmul-grad-overlap | FileCheck %s --check-prefix=OVERLAP
// OVERLAP-LABEL: func.func @train_step
// OVERLAP:       dist.matmul_grad
// OVERLAP:       %[[DX:.*]] = dist.matmul %{{.*}}, %arg2 transpose_y
// OVERLAP-NEXT:  dist.allreduce %[[DX]] on #mesh axes = [1] reduce = sum stream = mp
// OVERLAP-NEXT:  tensor.collapse_shape
// OVERLAP-NEXT:  tensor.collapse_shape
// OVERLAP-NEXT:  dist.matmul {{.*}} transpose_x
// OVERLAP-NOT:   dist.matmul_grad

// The vocab-parallel embedding: forward and backward lowered, the table
// broadcast along dp at startup. Specialised for rank 6 (coordinate (1, 2)),
// start_index is 2 * 256 local rows = 512.
// RUN: dist-opt %examples/gpt_block.mlir --dist-parallel-embedding | FileCheck %s --check-prefix=EMB
// RUN: dist-opt %examples/gpt_block.mlir --dist-parallel-embedding --dist-specialize-rank=rank=6 | FileCheck %s --check-prefix=RANK6
// EMB-LABEL:  func.func @train_step
// EMB:        %[[C:.*]] = dist.process_coord #mesh axis = 1
// EMB:        dist.c_embedding %arg0, %arg1 start = %{{.*}} : {{.*}} -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1], partial = [1 : sum]>>
// EMB-NEXT:   dist.allreduce {{.*}} axes = [1] reduce = sum
// EMB:        dist.c_identity %{{.*}} on #mesh axes = [1]
// EMB-NEXT:   dist.c_embedding_grad {{.*}} -> tensor<256x64xf32, #dist.tensor<#mesh, [1, -1], partial = [0 : sum]>>
// EMB-NEXT:   dist.allreduce {{.*}} axes = [0] reduce = sum
// EMB-NEXT:   dist.scale {{.*}} by 5.000000e-01
// EMB-NOT:    dist.embedding
// EMB-LABEL:  func.func @startup
// EMB-NEXT:   dist.broadcast %arg0 on #mesh axes = [0] root = 0
// RANK6-LABEL: func.func @train_step
// RANK6-NOT:   dist.process_coord
// RANK6:       %[[S:.*]] = arith.constant 512 : index
// RANK6:       dist.c_embedding %arg0, %arg1 start = %[[S]]
// RANK6:       dist.c_embedding_grad {{.*}} start = %[[S]]
