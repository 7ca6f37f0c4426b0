// RUN: dist-opt %s --convert-dist-to-linalg -split-input-file | FileCheck %s

// A batched matmul with a 2-D y: one contraction over (b, m, k, n), n
// innermost (contiguous in y and the result).
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[Y:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @matmul
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[Y]], #[[O]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%arg0, %arg1 : {{.*}}) outs(%[[Z]] : tensor<2x4x8xf32>)
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK-NOT: dist.matmul
func.func @matmul(%x: tensor<2x4x3xf32>, %y: tensor<3x8xf32>) -> tensor<2x4x8xf32> {
  %r = dist.matmul %x, %y : tensor<2x4x3xf32>, tensor<3x8xf32> -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

// -----

// dX = dY y^T is a plain matmul of dY and a copy of y^T (n innermost, where
// the copy and dX are contiguous); dY keeps the forward loops and y's dims,
// so the batch dim y lacks is summed.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[Y:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @matmul_grad
// CHECK: %[[YT:.*]] = linalg.transpose ins(%arg1 : tensor<3x8xf32>) outs(%{{.*}} : tensor<8x3xf32>) permutation = [1, 0]
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[Y]], #[[O]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%arg2, %[[YT]] : tensor<2x4x8xf32>, tensor<8x3xf32>) outs(%{{.*}} : tensor<2x4x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[O]], #[[Y]]], iterator_types = ["reduction", "reduction", "parallel", "parallel"]} ins(%arg0, %arg2
func.func @matmul_grad(%x: tensor<2x4x3xf32>, %y: tensor<3x8xf32>, %d: tensor<2x4x8xf32>) -> (tensor<2x4x3xf32>, tensor<3x8xf32>) {
  %dx, %dy = dist.matmul_grad %x, %y, %d : tensor<2x4x3xf32>, tensor<3x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x3xf32>, tensor<3x8xf32>
  return %dx, %dy : tensor<2x4x3xf32>, tensor<3x8xf32>
}

// -----

// With transpose_x, dX (k x m) = y dY^T: a copy of dY^T, y as it is.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[Y:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @matmul_grad_transpose_x
// CHECK: %[[DT:.*]] = linalg.transpose ins(%arg2 : tensor<4x8xf32>) outs(%{{.*}} : tensor<8x4xf32>) permutation = [1, 0]
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[Y]], #[[O]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg1, %[[DT]] : tensor<3x8xf32>, tensor<8x4xf32>) outs(%{{.*}} : tensor<3x4xf32>)
func.func @matmul_grad_transpose_x(%x: tensor<3x4xf32>, %y: tensor<3x8xf32>, %d: tensor<4x8xf32>) -> (tensor<3x4xf32>, tensor<3x8xf32>) {
  %dx, %dy = dist.matmul_grad %x, %y, %d transpose_x : tensor<3x4xf32>, tensor<3x8xf32>, tensor<4x8xf32> -> tensor<3x4xf32>, tensor<3x8xf32>
  return %dx, %dy : tensor<3x4xf32>, tensor<3x8xf32>
}

// -----

// An x without out_grad's batch dim sums dX over it: one contraction over the
// forward loops, no copy.
// CHECK-LABEL: func.func @matmul_grad_broadcast_x
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel", "reduction"]} ins(%arg2, %arg1
func.func @matmul_grad_broadcast_x(%x: tensor<4x3xf32>, %y: tensor<2x3x8xf32>, %d: tensor<2x4x8xf32>) -> (tensor<4x3xf32>, tensor<2x3x8xf32>) {
  %dx, %dy = dist.matmul_grad %x, %y, %d : tensor<4x3xf32>, tensor<2x3x8xf32>, tensor<2x4x8xf32> -> tensor<4x3xf32>, tensor<2x3x8xf32>
  return %dx, %dy : tensor<4x3xf32>, tensor<2x3x8xf32>
}

// -----

// A transposed y is copied back first: the matmul reads it contiguously.
// CHECK-LABEL: func.func @matmul_transpose_y
// CHECK: %[[YT:.*]] = linalg.transpose ins(%arg1 : tensor<8x3xf32>) outs(%{{.*}} : tensor<3x8xf32>) permutation = [1, 0]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg0, %[[YT]] : tensor<4x3xf32>, tensor<3x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
func.func @matmul_transpose_y(%x: tensor<4x3xf32>, %y: tensor<8x3xf32>) -> tensor<4x8xf32> {
  %r = dist.matmul %x, %y transpose_y : tensor<4x3xf32>, tensor<8x3xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// c_embedding: the local row is id - start; ids outside [0, rows) read row 0
// and yield zero.
// CHECK-LABEL: func.func @c_embedding
// CHECK: linalg.generic
// CHECK: ^bb0(%[[ID:.*]]: i64, %[[OUT:.*]]: f32):
// CHECK:   %[[I:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:   %[[L:.*]] = arith.subi %[[I]], %arg2 : index
// CHECK:   %[[GE:.*]] = arith.cmpi sge, %[[L]], %{{.*}}
// CHECK:   %[[LT:.*]] = arith.cmpi slt, %[[L]], %{{.*}}
// CHECK:   %[[IN:.*]] = arith.andi %[[GE]], %[[LT]]
// CHECK:   %[[ROW:.*]] = arith.select %[[IN]], %[[L]], %{{.*}} : index
// CHECK:   %[[V:.*]] = tensor.extract %arg1[%[[ROW]], %{{.*}}] : tensor<4x3xf32>
// CHECK:   %[[R:.*]] = arith.select %[[IN]], %[[V]], %[[OUT]] : f32
// CHECK:   linalg.yield %[[R]]
func.func @c_embedding(%ids: tensor<5xi64>, %w: tensor<4x3xf32>, %start: index) -> tensor<5x3xf32> {
  %e = dist.c_embedding %ids, %w start = %start : tensor<5xi64>, tensor<4x3xf32> -> tensor<5x3xf32>
  return %e : tensor<5x3xf32>
}

// -----

// Without an encoding, a c_embedding's global table is unknown: its ids are
// not checked (it still reads only its shard).
// CHECK-LABEL: func.func @c_embedding_unchecked
// CHECK-NOT: dist_index_error
func.func @c_embedding_unchecked(%ids: tensor<5xi64>, %w: tensor<4x3xf32>, %start: index) -> tensor<5x3xf32> {
  %e = dist.c_embedding %ids, %w start = %start : tensor<5xi64>, tensor<4x3xf32> -> tensor<5x3xf32>
  return %e : tensor<5x3xf32>
}

// -----

// A lookup checks every id against the table's rows (unsigned: a negative
// id is out too) and calls the runtime's dist_index_error, with the op's
// location as a string, for one outside; the read is clamped to row 0.
// CHECK-COUNT-3: memref.global "private" constant @__dist_str_{{[0-9A-F]+}} : memref<{{[0-9]+}}xi8> = dense<
// CHECK: func.func private @dist_index_error(memref<?xi8>, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @embedding_checked
// CHECK: %[[ROWS:.*]] = arith.constant 4 : index
// CHECK: %[[G:.*]] = memref.get_global @__dist_str_{{[0-9A-F]+}} : memref<[[LEN:[0-9]+]]xi8>
// CHECK: %[[S:.*]] = memref.cast %[[G]] : memref<[[LEN]]xi8> to memref<?xi8>
// CHECK: linalg.generic
// CHECK: ^bb0(%[[ID:.*]]: i32, %{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-NEXT: %[[BAD:.*]] = arith.cmpi uge, %[[I]], %[[ROWS]] : index
// CHECK-NEXT: scf.if %[[BAD]] {
// CHECK-NEXT:   %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT:   %[[R64:.*]] = arith.index_cast %[[ROWS]] : index to i64
// CHECK-NEXT:   func.call @dist_index_error(%[[S]], %[[I64]], %[[R64]]) : (memref<?xi8>, i64, i64) -> ()
// CHECK-NEXT: }
// CHECK:      %[[ROW:.*]] = arith.select %[[BAD]], %{{.*}}, %{{.*}} : index
// CHECK-NEXT: tensor.extract %arg1[%[[ROW]], %{{.*}}] : tensor<4x3xf32>
// The gradient checks too, with the same site string.
// CHECK: linalg.generic
// CHECK: arith.cmpi uge
// CHECK: func.call @dist_index_error
// The vocab-parallel lookup checks against the global rows: 4 x 2.
// CHECK-LABEL: func.func @c_embedding_checked
// CHECK: %[[GROWS:.*]] = arith.constant 8 : index
// CHECK: linalg.generic
// CHECK: arith.cmpi uge, %{{.*}}, %[[GROWS]] : index
// CHECK: func.call @dist_index_error
func.func @embedding_checked(%ids: tensor<5xi32>, %w: tensor<4x3xf32>, %g: tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<4x3xf32>) {
  %e = dist.embedding %ids, %w : tensor<5xi32>, tensor<4x3xf32> -> tensor<5x3xf32>
  %dw = dist.embedding_grad %ids, %w, %g : tensor<5xi32>, tensor<4x3xf32>, tensor<5x3xf32> -> tensor<4x3xf32>
  return %e, %dw : tensor<5x3xf32>, tensor<4x3xf32>
}
#mesh = #dist.mesh<shape = [2]>
func.func @c_embedding_checked(%ids: tensor<5xi64>, %w: tensor<4x3xf32, #dist.tensor<#mesh, [0, -1]>>, %start: index) -> tensor<5x3xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> {
  %e = dist.c_embedding %ids, %w start = %start : tensor<5xi64>, tensor<4x3xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<5x3xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
  return %e : tensor<5x3xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
}

// -----

// Seed 0 and a dropout with no seed at all draw at run time: the runtime's
// dist_random_seed, keyed by the op's site (a hash of its location and
// name); a dist.seed draws once, and its dropouts share the value. A fixed
// seed is a constant.
// CHECK: func.func private @dist_random_seed(i64) -> i64
// CHECK-LABEL: func.func @runtime_seeds
// CHECK:      %[[SITE:.*]] = arith.constant {{-?[0-9]+}} : i64
// CHECK-NEXT: %[[D:.*]] = call @dist_random_seed(%[[SITE]]) : (i64) -> i64
// CHECK-NEXT: %[[T:.*]] = arith.trunci %[[D]] : i64 to i32
// CHECK-NEXT: %[[S:.*]] = tensor.splat %[[T]] : tensor<1xi32>
// CHECK:      tensor.extract %[[S]]
// CHECK:      } -> tensor<8xf32>
// CHECK-NEXT: %[[SITE2:.*]] = arith.constant {{-?[0-9]+}} : i64
// CHECK-NEXT: call @dist_random_seed(%[[SITE2]]) : (i64) -> i64
// CHECK:      } -> tensor<8xf32>
// CHECK-NEXT: arith.constant 9 : i64
// CHECK-NOT:  dist_random_seed
// CHECK:      return
func.func @runtime_seeds(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %s = dist.seed 0 : tensor<1xi32>
  %a = dist.dropout %x seed(%s : tensor<1xi32>) prob = 5.000000e-01 : tensor<8xf32> -> tensor<8xf32>
  %b = dist.dropout %x prob = 5.000000e-01 : tensor<8xf32> -> tensor<8xf32>
  %c = dist.dropout %x prob = 5.000000e-01 {fix_seed = 9 : i32} : tensor<8xf32> -> tensor<8xf32>
  return %a, %b, %c : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// The dropout mask hashes the element's global index: a dim split over the
// mesh is offset by coord * local size, the coordinate unravelled from the
// MPI rank. The encodings leave the signature.
// CHECK-LABEL: func.func @dropout(%{{.*}}: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[WORLD:.*]] = mpi.comm_world
// CHECK: %[[RANK:.*]] = mpi.comm_rank(%[[WORLD]]) : i32
// CHECK: %[[R:.*]] = arith.index_cast %[[RANK]] : i32 to index
// CHECK: %[[C:.*]] = affine.delinearize_index %[[R]] into (2) : index
// CHECK: %[[OFF:.*]] = arith.muli %[[C]], %{{.*}} : index
// CHECK: linalg.generic
// CHECK:   linalg.index 1
// CHECK:   arith.addi %{{.*}}, %[[OFF]] : index
// CHECK:   arith.cmpf oge
// CHECK:   arith.select
// CHECK-NOT: dist.
#mesh = #dist.mesh<shape = [2]>
func.func @dropout(%x: tensor<4x8xf32, #dist.tensor<#mesh, [-1, 0]>>) -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, 0]>> {
  %s = dist.seed 3 : tensor<1xi32>
  %y = dist.dropout %x seed(%s : tensor<1xi32>) prob = 5.000000e-01 : tensor<4x8xf32, #dist.tensor<#mesh, [-1, 0]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, 0]>>
  return %y : tensor<4x8xf32, #dist.tensor<#mesh, [-1, 0]>>
}

// -----

// AMP: gradients times 1/scale; found_inf is whether x - x is not 0 anywhere.
// CHECK-LABEL: func.func @amp
// CHECK: %[[S:.*]] = tensor.extract %arg1
// CHECK: %[[INV:.*]] = arith.divf %{{.*}}, %[[S]] : f32
// CHECK: linalg.generic {{.*}} ins(%arg0
// CHECK:   arith.mulf %{{.*}}, %[[INV]]
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK:   %[[D:.*]] = arith.subf
// CHECK:   arith.cmpf une, %[[D]]
// CHECK: tensor.from_elements %{{.*}} : tensor<1xi1>
func.func @amp(%g: tensor<4xf32>, %s: tensor<1xf32>) -> (tensor<4xf32>, tensor<1xi1>) {
  %u, %inf = dist.check_finite_and_unscale %g scale %s : (tensor<4xf32>, tensor<1xf32>) -> (tensor<4xf32>, tensor<1xi1>)
  return %u, %inf : tensor<4xf32>, tensor<1xi1>
}

// -----

// f16 gradients are multiplied by 1/scale in f32 and rounded once, as
// Paddle's kernel does: an f16 1/2^25 would be 0. An f16 scale is widened
// before it is inverted; f64 gradients make the inverse f64.
// CHECK-LABEL: func.func @amp_f16
// CHECK: %[[S:.*]] = tensor.extract %arg2
// CHECK: %[[WS:.*]] = arith.extf %[[S]] : f16 to f64
// CHECK: %[[INV:.*]] = arith.divf %{{.*}}, %[[WS]] : f64
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<2xf16>)
// CHECK:   %[[W:.*]] = arith.extf %{{.*}} : f16 to f64
// CHECK:   %[[P:.*]] = arith.mulf %[[W]], %[[INV]] : f64
// CHECK:   %[[T:.*]] = arith.truncf %[[P]] : f64 to f16
// CHECK:   linalg.yield %[[T]] : f16
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<2xf64>)
// CHECK:   %[[P64:.*]] = arith.mulf %{{.*}}, %[[INV]] : f64
// CHECK:   linalg.yield %[[P64]] : f64
func.func @amp_f16(%g: tensor<2xf16>, %h: tensor<2xf64>, %s: tensor<1xf16>) -> (tensor<2xf16>, tensor<2xf64>, tensor<1xi1>) {
  %u, %v, %inf = dist.check_finite_and_unscale %g, %h scale %s : (tensor<2xf16>, tensor<2xf64>, tensor<1xf16>) -> (tensor<2xf16>, tensor<2xf64>, tensor<1xi1>)
  return %u, %v, %inf : tensor<2xf16>, tensor<2xf64>, tensor<1xi1>
}

// -----

// Only the compute ops are this pass's: a collective stays, its operand cast
// back to the encoded type it declares, for --convert-dist-to-mpi.
// CHECK-LABEL: func.func @collective_stays(%{{.*}}: tensor<2x4xf32>, %{{.*}}: tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[MM:.*]] = linalg.generic
// CHECK: %[[ENC:.*]] = tensor.cast %[[MM]] : tensor<2x3xf32> to tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
// CHECK: %[[AR:.*]] = dist.allreduce %[[ENC]] on #mesh axes = [0] reduce = sum
// CHECK: %[[PLAIN:.*]] = tensor.cast %[[AR]] : tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1]>> to tensor<2x3xf32>
// CHECK: return %[[PLAIN]] : tensor<2x3xf32>
#mesh = #dist.mesh<shape = [2]>
func.func @collective_stays(%x: tensor<2x4xf32, #dist.tensor<#mesh, [-1, 0]>>, %w: tensor<4x3xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1]>> {
  %p = dist.matmul %x, %w : tensor<2x4xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<4x3xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1]>>
  return %r : tensor<2x3xf32, #dist.tensor<#mesh, [-1, -1]>>
}
