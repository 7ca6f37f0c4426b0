// RUN: dist-opt %s --dist-verify-distributions -split-input-file | FileCheck %s
// One case per branch of the distribution rules that accepts: each op
// declares what its rule computes, and the check passes.

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// Matmul: rows follow x, columns follow y; a contracted dim split alike on
// both sides leaves a partial sum; partial sums and averages pass through;
// a 2-D y broadcasts over the batch; transposes move the loops.
// CHECK-LABEL: func @matmul
func.func @matmul(
    %x: tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>,
    %y: tensor<16x8xf32, #dist.tensor<#mesh, [-1, 1]>>,
    %h: tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>,
    %w: tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>,
    %p: tensor<4x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : avg]>>,
    %b: tensor<2x4x16xf32, #dist.tensor<#mesh, [0, -1, -1]>>,
    %yt: tensor<8x16xf32, #dist.tensor<#mesh, [1, -1]>>) {
  // CHECK: -> tensor<4x8xf32, #dist.tensor<#mesh, [0, 1]>>
  %0 = dist.matmul %x, %y : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<16x8xf32, #dist.tensor<#mesh, [-1, 1]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [0, 1]>>
  // CHECK: -> tensor<4x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
  %1 = dist.matmul %h, %w : tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>, tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
  // CHECK: -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : avg]>>
  %2 = dist.matmul %p, %y : tensor<4x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : avg]>>, tensor<16x8xf32, #dist.tensor<#mesh, [-1, 1]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : avg]>>
  // CHECK: -> tensor<2x4x8xf32, #dist.tensor<#mesh, [0, -1, 1]>>
  %3 = dist.matmul %b, %y : tensor<2x4x16xf32, #dist.tensor<#mesh, [0, -1, -1]>>, tensor<16x8xf32, #dist.tensor<#mesh, [-1, 1]>> -> tensor<2x4x8xf32, #dist.tensor<#mesh, [0, -1, 1]>>
  // CHECK: transpose_y {{.*}} -> tensor<4x8xf32, #dist.tensor<#mesh, [0, 1]>>
  %4 = dist.matmul %x, %yt transpose_y : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [0, 1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// Matmul grad, the issue's example made right: x's rows are split on dp,
// which dY contracts over, so dY is partial over dp and an allreduce
// completes it; dX keeps x's distribution.
// CHECK-LABEL: func @matmul_grad
// CHECK: dist.allreduce %{{.*}} on #mesh axes = [0] reduce = sum
func.func @matmul_grad(%x: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>,
    %w: tensor<16x32xf32, #dist.tensor<#mesh, [-1, -1]>>,
    %d: tensor<8x32xf32, #dist.tensor<#mesh, [0, -1]>>)
    -> tensor<16x32xf32, #dist.tensor<#mesh, [-1, -1]>> {
  %dx, %dw = dist.matmul_grad %x, %w, %d
    : tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<16x32xf32, #dist.tensor<#mesh, [-1, -1]>>,
      tensor<8x32xf32, #dist.tensor<#mesh, [0, -1]>>
    -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<16x32xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
  %r = dist.allreduce %dw on #mesh axes = [0] reduce = sum
    : tensor<16x32xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<16x32xf32, #dist.tensor<#mesh, [-1, -1]>>
  return %r : tensor<16x32xf32, #dist.tensor<#mesh, [-1, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// Elementwise (arith, whose operands share one type): sums of partial
// sums, a negation, a widening cast and a rounding cast of a partial max;
// comparisons, selects and maxima of whole values; the op that is the
// pending reduction itself (a product and a quotient of partial products,
// the maximum of partial maxima, the minimum of partial minima).
// CHECK-LABEL: func @elementwise
func.func @elementwise(
    %p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>,
    %q: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>,
    %r: tensor<4xf32, #dist.tensor<#mesh, [-1]>>,
    %u: tensor<4xf32>,
    %m: tensor<4xf16, #dist.tensor<#mesh, [-1], partial = [0 : max]>>,
    %s: tensor<4xf32, #dist.tensor<#mesh, [0]>>,
    %pp: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : prod]>>,
    %mx: tensor<4xf32, #dist.tensor<#mesh, [0], partial = [1 : max]>>,
    %mn: tensor<4xi32, #dist.tensor<#mesh, [-1], partial = [0 : min, 1 : min]>>) {
  %0 = arith.addf %p, %q : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  %3 = arith.negf %p : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  %4 = arith.extf %m : tensor<4xf16, #dist.tensor<#mesh, [-1], partial = [0 : max]>> to tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : max]>>
  %5 = arith.fptosi %4 : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : max]>> to tensor<4xi32, #dist.tensor<#mesh, [-1], partial = [0 : max]>>
  %6 = arith.maximumf %r, %r : tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  %7 = arith.cmpf olt, %s, %s : tensor<4xf32, #dist.tensor<#mesh, [0]>>
  %8 = arith.select %7, %s, %s : tensor<4xi1, #dist.tensor<#mesh, [0]>>, tensor<4xf32, #dist.tensor<#mesh, [0]>>
  // CHECK: arith.mulf %{{.*}} : tensor<4xf32, #dist.tensor<#{{.*}}, [-1], partial = [1 : prod]>>
  // CHECK-NEXT: arith.divf %{{.*}} : tensor<4xf32, #dist.tensor<#{{.*}}, [-1], partial = [1 : prod]>>
  // CHECK-NEXT: arith.maximumf %{{.*}} : tensor<4xf32, #dist.tensor<#{{.*}}, [0], partial = [1 : max]>>
  // CHECK-NEXT: arith.minsi %{{.*}} : tensor<4xi32, #dist.tensor<#{{.*}}, [-1], partial = [0 : min, 1 : min]>>
  %9 = arith.mulf %pp, %pp : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : prod]>>
  %10 = arith.divf %pp, %pp : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : prod]>>
  %11 = arith.maximumf %mx, %mx : tensor<4xf32, #dist.tensor<#mesh, [0], partial = [1 : max]>>
  %12 = arith.minsi %mn, %mn : tensor<4xi32, #dist.tensor<#mesh, [-1], partial = [0 : min, 1 : min]>>
  // CHECK: return
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// Reshapes: a collapsed group is split as its outermost dim; an expanded
// dim's split goes to the outermost of its new dims; partial values pass.
// CHECK-LABEL: func @reshape
func.func @reshape(%x: tensor<2x3x4xf32, #dist.tensor<#mesh, [0, -1, -1], partial = [1 : sum]>>) {
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32, #dist.tensor<#mesh, [0, -1, -1], partial = [1 : sum]>> into tensor<6x4xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
  %e = tensor.expand_shape %c [[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>> into tensor<2x3x4xf32, #dist.tensor<#mesh, [0, -1, -1], partial = [1 : sum]>>
  // CHECK: return
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// Lookups: the logical embedding of a row-split table is the whole lookup;
// its shard (c_embedding) is partial over the row axis; both gradients are
// distributed as the table, partial over every axis that splits an ids
// dim. The logical gradient of a row-split table may also be declared
// whole (%dw): Paddle's data-parallel form, which --dist-parallel-embedding
// reduces.
// CHECK-LABEL: func @lookups
func.func @lookups(%ids: tensor<4x8xi64, #dist.tensor<#mesh, [0, -1]>>,
    %w: tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>,
    %g: tensor<4x8x16xf32, #dist.tensor<#mesh, [0, -1, -1]>>, %start: index) {
  %e = dist.embedding %ids, %w : tensor<4x8xi64, #dist.tensor<#mesh, [0, -1]>>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x8x16xf32, #dist.tensor<#mesh, [0, -1, -1]>>
  %c = dist.c_embedding %ids, %w start = %start : tensor<4x8xi64, #dist.tensor<#mesh, [0, -1]>>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x8x16xf32, #dist.tensor<#mesh, [0, -1, -1], partial = [1 : sum]>>
  %dw = dist.embedding_grad %ids, %w, %g : tensor<4x8xi64, #dist.tensor<#mesh, [0, -1]>>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>, tensor<4x8x16xf32, #dist.tensor<#mesh, [0, -1, -1]>> -> tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>
  %dwp = dist.embedding_grad %ids, %w, %g : tensor<4x8xi64, #dist.tensor<#mesh, [0, -1]>>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>, tensor<4x8x16xf32, #dist.tensor<#mesh, [0, -1, -1]>> -> tensor<100x16xf32, #dist.tensor<#mesh, [1, -1], partial = [0 : sum]>>
  %cw = dist.c_embedding_grad %ids, %w, %g start = %start : tensor<4x8xi64, #dist.tensor<#mesh, [0, -1]>>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>, tensor<4x8x16xf32, #dist.tensor<#mesh, [0, -1, -1]>> -> tensor<100x16xf32, #dist.tensor<#mesh, [1, -1], partial = [0 : sum]>>
  // CHECK: return
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// Dropout and scale are linear: a partial sum passes. found_inf is a
// partial max over the axes that split the gradients; a max over more axes
// is also right (the value is equal there).
// CHECK-LABEL: func @linear
func.func @linear(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>,
    %g: tensor<8xf32, #dist.tensor<#mesh, [1]>>, %s: tensor<1xf32>) {
  %0 = dist.dropout %p prob = 5.000000e-01 {fix_seed = 1 : i32} : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  %1 = dist.scale %p by 2.0 : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  %2:2 = dist.check_finite_and_unscale %g scale %s : (tensor<8xf32, #dist.tensor<#mesh, [1]>>, tensor<1xf32>) -> (tensor<8xf32, #dist.tensor<#mesh, [1]>>, tensor<1xi1, #dist.tensor<#mesh, [-1], partial = [1 : max]>>)
  %3:2 = dist.check_finite_and_unscale %g scale %s : (tensor<8xf32, #dist.tensor<#mesh, [1]>>, tensor<1xf32>) -> (tensor<8xf32, #dist.tensor<#mesh, [1]>>, tensor<1xi1, #dist.tensor<#mesh, [-1], partial = [0 : max, 1 : max]>>)
  // CHECK: return
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// Casts that annotate an unannotated tensor or leave the distributed
// program; a gradient as its parameter; a collective under control flow
// that does not depend on the process.
// CHECK-LABEL: func @conventions
func.func @conventions(%w: tensor<8xf32, #dist.tensor<#mesh, [1]>> {dist.param = "w"},
    %plain: tensor<8xf32>, %n: index)
    -> (tensor<8xf32, #dist.tensor<#mesh, [1]>> {dist.grad = "w"}) {
  %a = tensor.cast %plain : tensor<8xf32> to tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
  %b = tensor.cast %w : tensor<8xf32, #dist.tensor<#mesh, [1]>> to tensor<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %r = dist.allreduce %a on #mesh axes = [0] reduce = sum : tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<8xf32, #dist.tensor<#mesh, [-1]>>
  }
  return %w : tensor<8xf32, #dist.tensor<#mesh, [1]>>
}
