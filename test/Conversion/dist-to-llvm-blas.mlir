// How --dist-to-llvm computes contractions: by default through the
// runtime's BLAS GEMM, transposed operands read in place; with blas=false in
// loops, with the transposed operand copied first.
// RUN: dist-opt %s --dist-to-llvm="entry=none" --mlir-print-ir-after=dist-contractions-to-blas -o /dev/null 2>&1 | FileCheck %s --check-prefix=BLAS
// RUN: dist-opt %s --dist-to-llvm="entry=none" | FileCheck %s --check-prefix=LLVM
// RUN: dist-opt %s --dist-to-llvm="entry=none blas=false" | FileCheck %s --check-prefix=LOOPS --implicit-check-not=gemm
// RUN: dist-opt %s --convert-dist-to-linalg=copy-transposed=false | FileCheck %s --check-prefix=INPLACE --implicit-check-not=linalg.transpose
// RUN: dist-opt %s --convert-dist-to-linalg | FileCheck %s --check-prefix=COPY

// BLAS-LABEL: func.func @grad
// BLAS-SAME: (%[[X:.*]]: memref<8x4xf32>, %[[Y:.*]]: memref<16x4xf32>, %[[DOUT:.*]]: memref<8x16xf32>)
// BLAS-NOT: linalg.fill
// BLAS: %[[DX:.*]] = memref.alloc() {{.*}} : memref<8x4xf32>
// BLAS: %[[OVERWRITE:.*]] = arith.constant 0 : i64
// BLAS: %[[A1:.*]] = memref.cast %[[DOUT]]
// BLAS: %[[B1:.*]] = memref.cast %[[Y]]
// BLAS: %[[C1:.*]] = memref.cast %[[DX]]
// BLAS: call @dist_gemm_f32(%[[A1]], %[[B1]], %[[C1]], %[[OVERWRITE]])
// BLAS: %[[DY:.*]] = memref.alloc() {{.*}} : memref<16x4xf32>
// BLAS: %[[XT:.*]] = memref.transpose %[[X]] (d0, d1) -> (d1, d0)
// BLAS: %[[DYT:.*]] = memref.transpose %[[DY]] (d0, d1) -> (d1, d0)
// BLAS: call @dist_gemm_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// BLAS-NOT: linalg.
// BLAS: return %[[DX]], %[[DY]]

// LLVM: llvm.func private @dist_gemm_f32(
// LLVM: llvm.call @_mlir_ciface_dist_gemm_f32({{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
// LLVM: llvm.func @_mlir_ciface_dist_gemm_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64)
// LLVM-LABEL: llvm.func @grad
// LLVM-COUNT-2: llvm.call @dist_gemm_f32(

// LOOPS-LABEL: llvm.func @grad

// INPLACE-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// INPLACE-DAG: #[[YT:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// INPLACE-DAG: #[[X:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// INPLACE-LABEL: func.func @grad
// INPLACE-SAME: (%[[XV:.*]]: tensor<8x4xf32>, %[[YV:.*]]: tensor<16x4xf32>, %[[DOUT:.*]]: tensor<8x16xf32>)
// INPLACE: linalg.generic {indexing_maps = [#[[OUT]], #[[YT]], #[[X]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[DOUT]], %[[YV]] : tensor<8x16xf32>, tensor<16x4xf32>)
// INPLACE: linalg.generic {indexing_maps = [#[[X]], #[[OUT]], #[[YT]]], iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[XV]], %[[DOUT]] : tensor<8x4xf32>, tensor<8x16xf32>)

// dX = dY y^T: the loop lowering copies y^T; in place, y is read as it is.
// COPY-LABEL: func.func @plain_grad
// COPY-SAME: (%{{.*}}: tensor<8x4xf32>, %[[Y:.*]]: tensor<4x16xf32>, %{{.*}}: tensor<8x16xf32>)
// COPY: %[[YT:.*]] = linalg.transpose ins(%[[Y]] : tensor<4x16xf32>)
// COPY: linalg.generic {{.*}} ins(%{{.*}}, %[[YT]] : tensor<8x16xf32>, tensor<16x4xf32>)
// COPY: linalg.generic
// INPLACE-LABEL: func.func @plain_grad
// INPLACE-SAME: (%{{.*}}: tensor<8x4xf32>, %[[Y:.*]]: tensor<4x16xf32>, %[[DOUT:.*]]: tensor<8x16xf32>)
// INPLACE: linalg.generic {{.*}} ins(%[[DOUT]], %[[Y]] : tensor<8x16xf32>, tensor<4x16xf32>)
func.func @grad(%x: tensor<8x4xf32>, %y: tensor<16x4xf32>, %dout: tensor<8x16xf32>) -> (tensor<8x4xf32>, tensor<16x4xf32>) {
  %dx, %dy = dist.matmul_grad %x, %y, %dout {transpose_y} : tensor<8x4xf32>, tensor<16x4xf32>, tensor<8x16xf32> -> tensor<8x4xf32>, tensor<16x4xf32>
  return %dx, %dy : tensor<8x4xf32>, tensor<16x4xf32>
}

func.func @plain_grad(%x: tensor<8x4xf32>, %y: tensor<4x16xf32>, %dout: tensor<8x16xf32>) -> (tensor<8x4xf32>, tensor<4x16xf32>) {
  %dx, %dy = dist.matmul_grad %x, %y, %dout : tensor<8x4xf32>, tensor<4x16xf32>, tensor<8x16xf32> -> tensor<8x4xf32>, tensor<4x16xf32>
  return %dx, %dy : tensor<8x4xf32>, tensor<4x16xf32>
}
