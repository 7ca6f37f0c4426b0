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
