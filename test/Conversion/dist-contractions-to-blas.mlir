// RUN: dist-opt %s --dist-contractions-to-blas --split-input-file | FileCheck %s

// A matmul into a zero fill: the fill goes, and the GEMM overwrites C.
// CHECK: func.func private @dist_gemm_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @matmul_into_zeros
// CHECK-SAME: (%[[A:.*]]: memref<8x4xf32>, %[[B:.*]]: memref<4x16xf32>, %[[C:.*]]: memref<8x16xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[OVERWRITE:.*]] = arith.constant 0 : i64
// CHECK: %[[VA:.*]] = memref.cast %[[A]] : memref<8x4xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[VB:.*]] = memref.cast %[[B]] : memref<4x16xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[VC:.*]] = memref.cast %[[C]] : memref<8x16xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: call @dist_gemm_f32(%[[VA]], %[[VB]], %[[VC]], %[[OVERWRITE]])
// CHECK-NOT: linalg.
// CHECK: return
func.func @matmul_into_zeros(%a: memref<8x4xf32>, %b: memref<4x16xf32>, %c: memref<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x16xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  return
}

// -----

// Without a zero fill right before it, the GEMM adds into C: a fill of one,
// and a zero fill with another op between, stay.
// CHECK-LABEL: func.func @matmul_accumulates
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[C:.*]] : memref<8x16xf32>)
// CHECK: %[[ADD:.*]] = arith.constant 1 : i64
// CHECK: call @dist_gemm_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ADD]])
// CHECK: linalg.fill
// CHECK: memref.store
// CHECK: call @dist_gemm_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ADD2:.*]])
// CHECK-NOT: linalg.matmul
func.func @matmul_accumulates(%a: memref<8x4xf32>, %b: memref<4x16xf32>, %c: memref<8x16xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %i = arith.constant 0 : index
  linalg.fill ins(%one : f32) outs(%c : memref<8x16xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<8x16xf32>)
  memref.store %one, %c[%i, %i] : memref<8x16xf32>
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  return
}

// -----

// What --convert-dist-to-linalg=copy-transposed=false builds for dX = dY W^T
// and dW = X^T dY: the operands read across their rows are transposed views,
// not copies.
#x = affine_map<(m, k, n) -> (m, k)>
#xt = affine_map<(m, k, n) -> (k, m)>
#y = affine_map<(m, k, n) -> (k, n)>
#yt = affine_map<(m, k, n) -> (n, k)>
#out = affine_map<(m, k, n) -> (m, n)>
// CHECK-LABEL: func.func @transposed_operands
// CHECK-SAME: (%[[DY:.*]]: memref<8x16xf32>, %[[W:.*]]: memref<4x16xf32>, %[[X:.*]]: memref<8x4xf32>, %[[DX:.*]]: memref<8x4xf32>, %[[DW:.*]]: memref<4x16xf32>)
// CHECK: %[[WT:.*]] = memref.transpose %[[W]] (d0, d1) -> (d1, d0) : memref<4x16xf32> to memref<16x4xf32, strided<[1, 16]>>
// CHECK: %[[VWT:.*]] = memref.cast %[[WT]]
// CHECK: call @dist_gemm_f32(%{{.*}}, %[[VWT]], %{{.*}}, %{{.*}})
// CHECK: %[[XT:.*]] = memref.transpose %[[X]] (d0, d1) -> (d1, d0) : memref<8x4xf32> to memref<4x8xf32, strided<[1, 4]>>
// CHECK: %[[VXT:.*]] = memref.cast %[[XT]]
// CHECK: call @dist_gemm_f32(%[[VXT]], %{{.*}}, %{{.*}}, %{{.*}})
func.func @transposed_operands(%dy: memref<8x16xf32>, %w: memref<4x16xf32>, %x: memref<8x4xf32>, %dx: memref<8x4xf32>, %dw: memref<4x16xf32>) {
  // dX[m, k] += dY[m, n] W[k, n]
  linalg.generic {indexing_maps = [#out, #y, #x], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %w : memref<8x16xf32>, memref<4x16xf32>) outs(%dx : memref<8x4xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  // dW[k, n] += X[m, k] dY[m, n]
  linalg.generic {indexing_maps = [#x, #out, #y], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%x, %dy : memref<8x4xf32>, memref<8x16xf32>) outs(%dw : memref<4x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %q, %p : f32
    %1 = arith.addf %0, %acc : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A batched matmul: a loop over the batch around the call, on rank-reducing
// subviews; each GEMM overwrites its own batch of C.
// CHECK: func.func private @dist_gemm_f64
// CHECK-LABEL: func.func @batch_matmul
// CHECK-SAME: (%[[A:.*]]: memref<3x8x4xf64>, %[[B:.*]]: memref<3x4x16xf64>, %[[C:.*]]: memref<3x8x16xf64>)
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[OVERWRITE:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[C3]] step %[[C1]] {
// CHECK: %[[SA:.*]] = memref.subview %[[A]][%[[I]], 0, 0] [1, 8, 4] [1, 1, 1] : memref<3x8x4xf64> to memref<8x4xf64, strided<[4, 1], offset: ?>>
// CHECK: %[[VA:.*]] = memref.cast %[[SA]]
// CHECK: %[[SB:.*]] = memref.subview %[[B]][%[[I]], 0, 0] [1, 4, 16] [1, 1, 1]
// CHECK: %[[VB:.*]] = memref.cast %[[SB]]
// CHECK: %[[SC:.*]] = memref.subview %[[C]][%[[I]], 0, 0] [1, 8, 16] [1, 1, 1]
// CHECK: %[[VC:.*]] = memref.cast %[[SC]]
// CHECK: func.call @dist_gemm_f64(%[[VA]], %[[VB]], %[[VC]], %[[OVERWRITE]]) : (memref<?x?xf64, strided<[?, ?], offset: ?>>, memref<?x?xf64, strided<[?, ?], offset: ?>>, memref<?x?xf64, strided<[?, ?], offset: ?>>, i64) -> ()
// CHECK-NEXT: }
func.func @batch_matmul(%a: memref<3x8x4xf64>, %b: memref<3x4x16xf64>, %c: memref<3x8x16xf64>) {
  %zero = arith.constant 0.0 : f64
  linalg.fill ins(%zero : f64) outs(%c : memref<3x8x16xf64>)
  linalg.batch_matmul ins(%a, %b : memref<3x8x4xf64>, memref<3x4x16xf64>) outs(%c : memref<3x8x16xf64>)
  return
}

// -----

// The gradient of a 2-D y broadcast over a batch: dY[k, n] sums X^T dY over
// the batch, so the batch loop's GEMMs add into the same C and the zero fill
// stays.
#x3 = affine_map<(b, m, k, n) -> (b, m, k)>
#o3 = affine_map<(b, m, k, n) -> (b, m, n)>
#y2 = affine_map<(b, m, k, n) -> (k, n)>
// CHECK-LABEL: func.func @batch_summed
// CHECK: linalg.fill
// CHECK: %[[ADD:.*]] = arith.constant 1 : i64
// CHECK: scf.for %[[I:.*]] =
// CHECK: memref.subview %{{.*}}[%[[I]], 0, 0] [1, 8, 4] [1, 1, 1]
// CHECK: memref.transpose
// CHECK: memref.subview %{{.*}}[%[[I]], 0, 0] [1, 8, 16] [1, 1, 1]
// CHECK-NOT: memref.subview
// CHECK: call @dist_gemm_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ADD]])
func.func @batch_summed(%x: memref<2x8x4xf32>, %dout: memref<2x8x16xf32>, %dy: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dy : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#x3, #o3, #y2], iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %dout : memref<2x8x4xf32>, memref<2x8x16xf32>) outs(%dy : memref<4x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Dynamic sizes: the batch loop's bound is read from the operand.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<?x?x?xf32>
// CHECK: %[[N:.*]] = memref.dim %[[A]], %{{.*}} : memref<?x?x?xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]]
// CHECK: memref.subview %[[A]]
// CHECK: call @dist_gemm_f32
func.func @dynamic(%a: memref<?x?x?xf32>, %b: memref<?x?x?xf32>, %c: memref<?x?x?xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<?x?x?xf32>, memref<?x?x?xf32>) outs(%c : memref<?x?x?xf32>)
  return
}

// -----

// Left for the loop lowering: f16 and bf16 (BLAS has no GEMM for them),
// integers, mixed element types, a matrix-vector product (no N loop), a
// body that is not a multiply-add, a result that is also an input, and
// tensors (not yet bufferized).
// CHECK-LABEL: func.func @not_gemms
// CHECK-NOT: call
// CHECK-COUNT-7: linalg.
// CHECK-NOT: call
// CHECK: return
#a2 = affine_map<(m, k, n) -> (m, k)>
#b2 = affine_map<(m, k, n) -> (k, n)>
#c2 = affine_map<(m, k, n) -> (m, n)>
func.func @not_gemms(%h: memref<8x4xf16>, %hb: memref<4x16xf16>, %hc: memref<8x16xf16>,
                     %bf: memref<8x4xbf16>, %bfb: memref<4x16xbf16>, %bfc: memref<8x16xbf16>,
                     %i: memref<8x4xi32>, %ib: memref<4x16xi32>, %ic: memref<8x16xi32>,
                     %f: memref<8x4xf32>, %fb: memref<4x16xf32>, %fc: memref<8x16xf32>, %v: memref<4xf32>, %w: memref<8xf32>,
                     %sq: memref<8x8xf32>, %t: tensor<8x4xf32>, %tb: tensor<4x16xf32>, %tc: tensor<8x16xf32>) -> tensor<8x16xf32> {
  linalg.matmul ins(%h, %hb : memref<8x4xf16>, memref<4x16xf16>) outs(%hc : memref<8x16xf16>)
  linalg.matmul ins(%bf, %bfb : memref<8x4xbf16>, memref<4x16xbf16>) outs(%bfc : memref<8x16xbf16>)
  linalg.matmul ins(%i, %ib : memref<8x4xi32>, memref<4x16xi32>) outs(%ic : memref<8x16xi32>)
  linalg.matvec ins(%f, %v : memref<8x4xf32>, memref<4xf32>) outs(%w : memref<8xf32>)
  linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%f, %fb : memref<8x4xf32>, memref<4x16xf32>) outs(%fc : memref<8x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.subf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.matmul ins(%sq, %sq : memref<8x8xf32>, memref<8x8xf32>) outs(%sq : memref<8x8xf32>)
  %r = linalg.matmul ins(%t, %tb : tensor<8x4xf32>, tensor<4x16xf32>) outs(%tc : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// A mixed-precision matmul (f16 operands, f32 result) stays too.
// CHECK-LABEL: func.func @mixed
// CHECK: linalg.matmul
// CHECK-NOT: call
func.func @mixed(%a: memref<8x4xf16>, %b: memref<4x16xf16>, %c: memref<8x16xf32>) {
  linalg.matmul ins(%a, %b : memref<8x4xf16>, memref<4x16xf16>) outs(%c : memref<8x16xf32>)
  return
}

// -----

// In a loop, in a function's second block, on a strided slice: the call
// replaces the op where it is and takes the slice's view as it is. The loop
// carries no zero fill, so the GEMM adds into C.
// CHECK-LABEL: func.func @in_loop
// CHECK: cf.cond_br %{{.*}}, ^bb1, ^bb2
// CHECK: ^bb1:
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: %[[S:.*]] = memref.subview %{{.*}}[%[[I]], 0, 0] [1, 8, 4] [1, 1, 1]
// CHECK-NEXT: %[[ADD:.*]] = arith.constant 1 : i64
// CHECK-NEXT: %[[VS:.*]] = memref.cast %[[S]] : memref<8x4xf32, strided<[4, 1], offset: ?>> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: func.call @dist_gemm_f32(%[[VS]], %{{.*}}, %{{.*}}, %[[ADD]])
// CHECK-NOT: linalg.matmul
// CHECK: ^bb2:
func.func @in_loop(%a: memref<4x8x4xf32>, %b: memref<4x16xf32>, %c: memref<8x16xf32>, %n: index, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  cf.cond_br %flag, ^bb1, ^bb2
^bb1:
  scf.for %i = %c0 to %n step %c1 {
    %s = memref.subview %a[%i, 0, 0] [1, 8, 4] [1, 1, 1] : memref<4x8x4xf32> to memref<8x4xf32, strided<[4, 1], offset: ?>>
    linalg.matmul ins(%s, %b : memref<8x4xf32, strided<[4, 1], offset: ?>>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  }
  cf.br ^bb2
^bb2:
  return
}
