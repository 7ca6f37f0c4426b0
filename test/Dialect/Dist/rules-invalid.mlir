// RUN: dist-opt %s --dist-verify-distributions -split-input-file -verify-diagnostics
// One case per rejection of the distribution rules, with its diagnostic.

// The issue's first case: X is split on dp along the rows that dY
// contracts over, so each process holds a dp-partial dY, declared
// replicated: the data-parallel allreduce is missing.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @missing_dp_allreduce(%x: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>, %w: tensor<16x32xf32, #dist.tensor<#mesh, [-1, -1]>>, %d: tensor<8x32xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // expected-error @+1 {{'dist.matmul_grad' op result #1 is declared #dist.tensor<#dist.mesh<shape = [2, 4], names = ["dp", "mp"]>, [-1, -1]> but computes #dist.tensor<#dist.mesh<shape = [2, 4], names = ["dp", "mp"]>, [-1, -1], partial = [0 : sum]>: partial over axis 0 (dp): insert dist.allreduce ... axes = [0] reduce = sum}}
  %dx, %dw = dist.matmul_grad %x, %w, %d
    : tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<16x32xf32, #dist.tensor<#mesh, [-1, -1]>>,
      tensor<8x32xf32, #dist.tensor<#mesh, [0, -1]>>
    -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<16x32xf32, #dist.tensor<#mesh, [-1, -1]>>
  return
}

// -----

// The issue's second case: [0, -1] by [-1, 1] is [0, 1].
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @misdeclared_matmul(%x: tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>, %y: tensor<16x8xf32, #dist.tensor<#mesh, [-1, 1]>>) {
  // expected-error @+1 {{'dist.matmul' op result #0 is declared #dist.tensor<#dist.mesh<shape = [2, 4], names = ["dp", "mp"]>, [0, -1]> but computes #dist.tensor<#dist.mesh<shape = [2, 4], names = ["dp", "mp"]>, [0, 1]>: the dims mapping differs (declare it as computed, or redistribute)}}
  %0 = dist.matmul %x, %y : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<16x8xf32, #dist.tensor<#mesh, [-1, 1]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
  return
}

// -----

// The issue's third case: the product of two partial sums is not the sum of
// the local products.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @product_of_partials(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) {
  // expected-error @+1 {{'arith.mulf' op has no correct distribution: two operands are partial over mesh axis 1 (mp): the product of two sums is not the sum of the local products}}
  %0 = arith.mulf %p, %p : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @contracted_split_two_ways(%x: tensor<4x8xf32, #dist.tensor<#mesh, [-1, 0]>>, %y: tensor<8x4xf32, #dist.tensor<#mesh, [1, -1]>>) {
  // expected-error @+1 {{'dist.matmul' op has no correct distribution: the dim that operands #0 and #1 share is split over mesh axis 0 in operand #0 but split over mesh axis 1 in operand #1}}
  %0 = dist.matmul %x, %y : tensor<4x8xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<8x4xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x4xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @contracted_split_once(%x: tensor<4x8xf32, #dist.tensor<#mesh, [-1, 1]>>, %y: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.matmul' op has no correct distribution: the dim that operands #0 and #1 share is split over mesh axis 1 in operand #0 but replicated in operand #1}}
  %0 = dist.matmul %x, %y : tensor<4x8xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<8x4xf32> -> tensor<4x4xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @axis_splits_two_dims(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>, %y: tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>) {
  // expected-error @+1 {{'dist.matmul' op has no correct distribution: mesh axis 0 would split both dim 0 and dim 1 of the result}}
  %0 = dist.matmul %x, %y : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>> -> tensor<4x4xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @partial_max_matmul(%x: tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : max]>>, %y: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.matmul' op has no correct distribution: operand #0 is partial (max) over mesh axis 0, which does not pass through a contraction}}
  %0 = dist.matmul %x, %y : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : max]>>, tensor<8x4xf32> -> tensor<4x4xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @partial_times_partial(%x: tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>, %y: tensor<8x4xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>) {
  // expected-error @+1 {{'dist.matmul' op has no correct distribution: two operands are partial over mesh axis 0: the product of two sums is not the sum of the local products}}
  %0 = dist.matmul %x, %y : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>, tensor<8x4xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<4x4xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @split_and_partial(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>, %y: tensor<8x4xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>) {
  // expected-error @+1 {{'dist.matmul' op has no correct distribution: mesh axis 0 would both split dim 0 of the result and leave it partial}}
  %0 = dist.matmul %x, %y : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<8x4xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<4x4xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @matmul_grad_x_grad(%x: tensor<4x8xf32>, %y: tensor<8x4xf32, #dist.tensor<#mesh, [-1, 1]>>, %d: tensor<4x4xf32, #dist.tensor<#mesh, [-1, 0]>>) {
  // expected-error @+1 {{'dist.matmul_grad' op has no correct distribution: x_grad: the dim that operands #0 and #1 share is split over mesh axis 0 in operand #0 but split over mesh axis 1 in operand #1}}
  %dx, %dy = dist.matmul_grad %x, %y, %d : tensor<4x8xf32>, tensor<8x4xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<4x4xf32, #dist.tensor<#mesh, [-1, 0]>> -> tensor<4x8xf32>, tensor<8x4xf32, #dist.tensor<#mesh, [-1, 1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @partial_plus_whole(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>>) {
  // expected-error @+1 {{'arith.addf' op has no correct distribution: only some operands are partial over mesh axis 1 (or not as a sum): the others would be added once per process}}
  %0 = arith.addf %p, %p : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @divisor_partial(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) {
  // expected-error @+1 {{'arith.divf' op has no correct distribution: two operands are partial over mesh axis 1}}
  %0 = arith.divf %p, %p : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @max_of_partial_sums(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) {
  // expected-error @+1 {{'arith.maximumf' op has no correct distribution: an operand is partial (sum) over mesh axis 1, which does not pass through a max: reduce it first (dist.allreduce)}}
  %0 = arith.maximumf %p, %p : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @min_of_partial_maxima(%p: tensor<4xi32, #dist.tensor<#mesh, [-1], partial = [1 : max]>>) {
  // expected-error @+1 {{'arith.minsi' op has no correct distribution: an operand is partial (max) over mesh axis 1, which does not pass through a min: reduce it first (dist.allreduce)}}
  %0 = arith.minsi %p, %p : tensor<4xi32, #dist.tensor<#mesh, [-1], partial = [1 : max]>>
  return
}

// -----

// Integer division truncates: (3 + 3) / 4 is 1, 3 / 4 + 3 / 4 is 0.
#mesh = #dist.mesh<shape = [2, 4]>
func.func @integer_quotient_of_partial_sum(%p: tensor<4xi32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) {
  // expected-error @+1 {{'arith.divsi' op has no correct distribution: an operand is partial over mesh axis 1 and the op is not linear: reduce it first (dist.allreduce)}}
  %0 = arith.divsi %p, %p : tensor<4xi32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @rounding_a_sum(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) {
  // expected-error @+1 {{'arith.truncf' op has no correct distribution: the operand is partial (sum) over mesh axis 1: rounding does not commute with the pending reduction}}
  %0 = arith.truncf %p : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>> to tensor<4xf16, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
#other = #dist.mesh<shape = [8]>
func.func @meshes_differ(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>, %y: tensor<8x4xf32, #dist.tensor<#other, [-1, 0]>>) {
  // expected-error @+1 {{'dist.matmul' op has no correct distribution: its tensors are distributed on different meshes}}
  %0 = dist.matmul %x, %y : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<8x4xf32, #dist.tensor<#other, [-1, 0]>> -> tensor<4x4xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @collapse_inner_split(%x: tensor<2x3xf32, #dist.tensor<#mesh, [-1, 0]>>) {
  // expected-error @+1 {{'tensor.collapse_shape' op has no correct distribution: dim 1 is split over mesh axis 0 but is not the outermost of the dims collapsed with it}}
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<2x3xf32, #dist.tensor<#mesh, [-1, 0]>> into tensor<6xf32, #dist.tensor<#mesh, [0]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @expand_wrong_dim(%x: tensor<6xf32, #dist.tensor<#mesh, [0]>>) {
  // expected-error @+1 {{'tensor.expand_shape' op result #0 is declared #dist.tensor<#dist.mesh<shape = [2, 4]>, [-1, 0]> but computes #dist.tensor<#dist.mesh<shape = [2, 4]>, [0, -1]>}}
  %e = tensor.expand_shape %x [[0, 1]] output_shape [2, 3] : tensor<6xf32, #dist.tensor<#mesh, [0]>> into tensor<2x3xf32, #dist.tensor<#mesh, [-1, 0]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @lookup_of_split_rows(%ids: tensor<4xi64>, %w: tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>) {
  // The logical lookup of a row-split table is whole: it is not split
  // (or partial) over the row axis.
  // expected-error @+1 {{'dist.embedding' op result #0 is declared #dist.tensor<#dist.mesh<shape = [2, 4]>, [1, -1]> but computes #dist.tensor<#dist.mesh<shape = [2, 4]>, [-1, -1]>}}
  %e = dist.embedding %ids, %w : tensor<4xi64>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @partial_ids(%ids: tensor<4xi64, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>, %w: tensor<100x16xf32>) {
  // expected-error @+1 {{'dist.embedding' op has no correct distribution: the ids are partial; an id must be a whole value}}
  %e = dist.embedding %ids, %w : tensor<4xi64, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>, tensor<100x16xf32> -> tensor<4x16xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @table_partial_max(%ids: tensor<4xi64>, %w: tensor<100x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : max]>>) {
  // expected-error @+1 {{'dist.embedding' op has no correct distribution: the table is partial (max) over mesh axis 0, which does not pass through a lookup}}
  %e = dist.embedding %ids, %w : tensor<4xi64>, tensor<100x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : max]>> -> tensor<4x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : max]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @shard_lookup_not_partial(%ids: tensor<4xi64>, %w: tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>, %start: index) {
  // expected-error @+1 {{'dist.c_embedding' op result #0 is declared #dist.tensor<#dist.mesh<shape = [2, 4]>, [-1, -1]> but computes #dist.tensor<#dist.mesh<shape = [2, 4]>, [-1, -1], partial = [1 : sum]>: partial over axis 1: insert dist.allreduce ... axes = [1] reduce = sum}}
  %e = dist.c_embedding %ids, %w start = %start : tensor<4xi64>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x16xf32, #dist.tensor<#mesh, [-1, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @shard_lookup_ids_on_row_axis(%ids: tensor<4xi64, #dist.tensor<#mesh, [1]>>, %w: tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>, %start: index) {
  // expected-error @+1 {{'dist.c_embedding' op has no correct distribution: mesh axis 1 splits both the table's rows and the ids}}
  %e = dist.c_embedding %ids, %w start = %start : tensor<4xi64, #dist.tensor<#mesh, [1]>>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<4x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @shard_grad_missing_partial(%ids: tensor<4x8xi64, #dist.tensor<#mesh, [-1, 0]>>, %w: tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>, %g: tensor<4x8x16xf32, #dist.tensor<#mesh, [-1, 0, -1]>>, %start: index) {
  // Ids split over the sequence: every process saw other ids.
  // expected-error @+1 {{'dist.c_embedding_grad' op result #0 is declared #dist.tensor<#dist.mesh<shape = [2, 4]>, [1, -1]> but computes #dist.tensor<#dist.mesh<shape = [2, 4]>, [1, -1], partial = [0 : sum]>: partial over axis 0: insert dist.allreduce ... axes = [0] reduce = sum}}
  %dw = dist.c_embedding_grad %ids, %w, %g start = %start : tensor<4x8xi64, #dist.tensor<#mesh, [-1, 0]>>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>, tensor<4x8x16xf32, #dist.tensor<#mesh, [-1, 0, -1]>> -> tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @dropout_of_partial_max(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>>) {
  // expected-error @+1 {{'dist.dropout' op has no correct distribution: the operand is partial (max) over mesh axis 1, which does not pass through this op}}
  %0 = dist.dropout %p prob = 5.000000e-01 : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @found_inf_replicated(%g: tensor<8xf32, #dist.tensor<#mesh, [1]>>, %s: tensor<1xf32>) {
  // expected-error @+1 {{'dist.check_finite_and_unscale' op result #1 is declared without a distribution (replicated) but computes #dist.tensor<#dist.mesh<shape = [2, 4]>, [-1], partial = [1 : max]>: partial over axis 1: insert dist.allreduce ... axes = [1] reduce = max}}
  %0:2 = dist.check_finite_and_unscale %g scale %s : (tensor<8xf32, #dist.tensor<#mesh, [1]>>, tensor<1xf32>) -> (tensor<8xf32, #dist.tensor<#mesh, [1]>>, tensor<1xi1>)
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @redistributing_cast(%s: tensor<4xf32, #dist.tensor<#mesh, [0]>>) {
  // expected-error @+1 {{'tensor.cast' op changes the distribution from #dist.tensor<#dist.mesh<shape = [2, 4]>, [0]> to #dist.tensor<#dist.mesh<shape = [2, 4]>, [1]> without communication}}
  %0 = tensor.cast %s : tensor<4xf32, #dist.tensor<#mesh, [0]>> to tensor<4xf32, #dist.tensor<#mesh, [1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @no_rule(%s: tensor<4xf32, #dist.tensor<#mesh, [0]>>) {
  // expected-error @+1 {{'tensor.bitcast' op has no distribution rule, so it cannot take or make distributed tensors (#dist.tensor)}}
  %0 = tensor.bitcast %s : tensor<4xf32, #dist.tensor<#mesh, [0]>> to tensor<4xi32, #dist.tensor<#mesh, [0]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @partial_gradient(%w: tensor<8xf32> {dist.param = "w"}, %g: tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>)
    -> (tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> {dist.grad = "w"}) {
  // expected-error @+1 {{gradient sync incomplete: the gradient of "w" (result #0) is partial over axis 0 (dp): insert dist.allreduce ... axes = [0] reduce = sum}}
  return %g : tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @gradient_unlike_parameter(%w: tensor<8xf32, #dist.tensor<#mesh, [1]>> {dist.param = "w"}, %g: tensor<8xf32, #dist.tensor<#mesh, [0]>>)
    -> (tensor<8xf32, #dist.tensor<#mesh, [0]>> {dist.grad = "w"}) {
  // expected-error @+1 {{the gradient of "w" (result #0) is distributed as #dist.tensor<#dist.mesh<shape = [2, 4]>, [0]> but its parameter (argument #0) as #dist.tensor<#dist.mesh<shape = [2, 4]>, [1]>}}
  return %g : tensor<8xf32, #dist.tensor<#mesh, [0]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @divergent_if(%p: tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) {
  // expected-note @+1 {{it differs along mesh axis 1 from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 1
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %c, %c0 : index
  // expected-note @+1 {{the 'scf.if' is here}}
  scf.if %first {
    // expected-error @+1 {{'dist.allreduce' op is issued under a condition that differs along mesh axis 1 between the processes of its group: those that do not take this 'scf.if' would not issue it, and the group would deadlock}}
    %r = dist.allreduce %p on #mesh axes = [1] reduce = sum : tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>> -> tensor<8xf32, #dist.tensor<#mesh, [-1]>>
  }
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @divergent_loop(%p: tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) {
  // expected-note @+1 {{it differs along mesh axis 1 from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 1
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.addi %c, %c1 : index
  // expected-note @+1 {{the 'scf.for' is here}}
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{'dist.allreduce' op is issued under a condition that differs along mesh axis 1 between the processes of its group: those that do not take this 'scf.for' would not issue it}}
    %r = dist.allreduce %p on #mesh axes = [1] reduce = sum : tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>> -> tensor<8xf32, #dist.tensor<#mesh, [-1]>>
  }
  return
}

// -----

// A lookup gradient over data-parallel ids is a partial sum; declared whole
// it is Paddle's data-parallel form, which only --dist-parallel-embedding
// reduces, and only for a row-split table. Here the table is replicated:
// nothing would sum the replicas' rows.
#mesh = #dist.mesh<shape = [2], names = ["dp"]>
func.func @lookup_grad_unsplit_table_whole(%ids: tensor<2x4xi64, #dist.tensor<#mesh, [0, -1]>>, %w: tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>, %g: tensor<2x4x16xf32, #dist.tensor<#mesh, [0, -1, -1]>>) {
  // expected-error @+1 {{'dist.embedding_grad' op result #0 is declared #dist.tensor<#dist.mesh<shape = [2], names = ["dp"]>, [-1, -1]> but computes #dist.tensor<#dist.mesh<shape = [2], names = ["dp"]>, [-1, -1], partial = [0 : sum]>: partial over axis 0 (dp): insert dist.allreduce ... axes = [0] reduce = sum}}
  %dw = dist.embedding_grad %ids, %w, %g : tensor<2x4xi64, #dist.tensor<#mesh, [0, -1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<2x4x16xf32, #dist.tensor<#mesh, [0, -1, -1]>> -> tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>
  return
}

// -----

// The ids split over the axis that splits the table's rows: each process's
// rows would need every process's ids.
#mesh = #dist.mesh<shape = [2, 4]>
func.func @lookup_grad_rows_and_ids_same_axis(%ids: tensor<4xi64, #dist.tensor<#mesh, [1]>>, %w: tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>, %g: tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>>) {
  // expected-error @+1 {{'dist.embedding_grad' op has no correct distribution: mesh axis 1 splits both the table's rows and the ids}}
  %dw = dist.embedding_grad %ids, %w, %g : tensor<4xi64, #dist.tensor<#mesh, [1]>>, tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>, tensor<4x16xf32, #dist.tensor<#mesh, [1, -1]>> -> tensor<100x16xf32, #dist.tensor<#mesh, [1, -1]>>
  return
}
