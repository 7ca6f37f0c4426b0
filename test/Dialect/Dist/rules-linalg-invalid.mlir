// RUN: dist-opt %s --dist-verify-distributions -split-input-file -verify-diagnostics
// What the linalg structured ops' rule rejects, with its reason.

// A split contracted dim leaves a partial sum: declared complete, the
// allreduce is missing.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @matmul_missing_allreduce(%x: tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>,
                                    %w: tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>>,
                                    %e: tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>) {
  %z = arith.constant 0.0 : f32
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>) -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  // expected-error @+1 {{'linalg.matmul' op result #0 is declared #dist.tensor<#dist.mesh<shape = [2, 4], names = ["dp", "mp"]>, [-1, -1]> but computes #dist.tensor<#dist.mesh<shape = [2, 4], names = ["dp", "mp"]>, [-1, -1], partial = [1 : sum]>}}
  %m = linalg.matmul ins(%x, %w : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>>)
                     outs(%c : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>) -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  return
}

// -----

// The same split into an accumulator that is neither zero nor partial:
// every process would add it.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @matmul_into_replicated(%x: tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>,
                                  %w: tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>>,
                                  %c: tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>) {
  // expected-error @+1 {{'linalg.matmul' op has no correct distribution: result #0 reduces over loop 2, which is split over mesh axis 1 (mp), into an initial value that is neither partial nor the identity of its sum: every process would count it once}}
  %m = linalg.matmul ins(%x, %w : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>>)
                     outs(%c : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>) -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  return
}

// -----

// The contracted dim split on one side only.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @matmul_split_one_side(%x: tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>,
                                 %w: tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>,
                                 %c: tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>) {
  // expected-error @+1 {{'linalg.matmul' op has no correct distribution: the dim that operands #0 and #1 share is split over mesh axis 1 (mp) in operand #0 but replicated in operand #1}}
  %m = linalg.matmul ins(%x, %w : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>)
                     outs(%c : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>) -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  return
}

// -----

// exp of a partial sum is not the sum of the exps.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
#P = #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>
func.func @exp_of_partial(%p: tensor<4x8xf32, #P>, %e: tensor<4x8xf32, #P>) {
  // expected-error @+1 {{'linalg.map' op has no correct distribution: operand #0 is partial (sum) over mesh axis 1 (mp): result #0 is not linear in it}}
  %r = linalg.map ins(%p : tensor<4x8xf32, #P>) outs(%e : tensor<4x8xf32, #P>)
    (%v: f32, %o: f32) {
      %x = math.exp %v : f32
      linalg.yield %x : f32
    }
  return
}

// -----

// x + 1 of a partial sum would add 1 once per process.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
#P = #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>
func.func @affine_of_partial(%p: tensor<4x8xf32, #P>, %e: tensor<4x8xf32, #P>) {
  // expected-error @+1 {{result #0 is not linear in it}}
  %r = linalg.map ins(%p : tensor<4x8xf32, #P>) outs(%e : tensor<4x8xf32, #P>)
    (%v: f32, %o: f32) {
      %one = arith.constant 1.0 : f32
      %x = arith.addf %v, %one : f32
      linalg.yield %x : f32
    }
  return
}

// -----

// A product of two partial sums.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
#P = #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>
func.func @product_of_partials(%p: tensor<4x8xf32, #P>, %q: tensor<4x8xf32, #P>, %e: tensor<4x8xf32, #P>) {
  // expected-error @+1 {{result #0 is not linear in it}}
  %r = linalg.map ins(%p, %q : tensor<4x8xf32, #P>, tensor<4x8xf32, #P>) outs(%e : tensor<4x8xf32, #P>)
    (%a: f32, %b: f32, %o: f32) {
      %x = arith.mulf %a, %b : f32
      linalg.yield %x : f32
    }
  return
}

// -----

// The max of a pending sum is not the sum of the maxima.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
#P = #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>
#P1 = #dist.tensor<#mesh, [-1], partial = [1 : sum]>
func.func @max_of_partial_sum(%p: tensor<4x8xf32, #P>, %acc: tensor<4xf32, #P1>) {
  // expected-error @+1 {{'linalg.reduce' op has no correct distribution: operand #0 is partial (sum) over mesh axis 1 (mp): result #0 combines with max, which does not commute with a pending sum}}
  %r = linalg.reduce ins(%p : tensor<4x8xf32, #P>) outs(%acc : tensor<4xf32, #P1>) dimensions = [1]
    (%in: f32, %a: f32) {
      %m = arith.maximumf %in, %a : f32
      linalg.yield %m : f32
    }
  return
}

// -----

// A softmax over columns split on mp without the allreduce of the row max:
// x - max subtracts a partial max from a shard.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @softmax_columns_no_allreduce(%x: tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>,
                                        %m: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>>,
                                        %e: tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>) {
  // expected-error @+1 {{'linalg.generic' op has no correct distribution: operand #1 is partial (max) over mesh axis 1 (mp): result #0 is not linear in it}}
  %ex = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>>)
      outs(%e : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      linalg.yield %d : f32
    } -> tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>
  return
}

// -----

// A fill of ones is not a partial sum (each process would add a one).
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @fill_ones_partial(%e: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) {
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{'linalg.fill' op result #0 is declared #dist.tensor<#dist.mesh<shape = [2, 4], names = ["dp", "mp"]>, [-1], partial = [1 : sum]> but computes #dist.tensor<#dist.mesh<shape = [2, 4], names = ["dp", "mp"]>, [-1]>}}
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  return
}

// -----

// A split reduction by sum into an accumulator partial with another kind.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @split_reduction_into_init(%x: tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>,
                                     %acc: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : prod]>>) {
  // expected-error @+1 {{'linalg.reduce' op has no correct distribution: result #0 reduces over loop 1, which is split over mesh axis 1 (mp), into an initial value that is neither partial nor the identity of its sum}}
  %r = linalg.reduce ins(%x : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>) outs(%acc : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : prod]>>) dimensions = [1]
    (%in: f32, %a: f32) {
      %s = arith.addf %in, %a : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// A reduction over a split dim whose combination is not one the rule knows.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @unknown_combiner(%x: tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>,
                            %acc: tensor<4xf32, #dist.tensor<#mesh, [-1]>>) {
  // expected-error @+1 {{'linalg.reduce' op has no correct distribution: result #0 reduces over loop 1, which is split over mesh axis 1 (mp), with a combination the rule cannot tell}}
  %r = linalg.reduce ins(%x : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>) outs(%acc : tensor<4xf32, #dist.tensor<#mesh, [-1]>>) dimensions = [1]
    (%in: f32, %a: f32) {
      %s = arith.subf %a, %in : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// A dim indexed by a constant cannot be split.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @constant_index(%x: tensor<4x2xf32, #dist.tensor<#mesh, [-1, 1]>>, %e: tensor<4xf32>) {
  // expected-error @+1 {{'linalg.generic' op has no correct distribution: dim 1 of operand #0 is not indexed by one loop, so it cannot be split (it is split over mesh axis 1 (mp))}}
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i, 0)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4x2xf32, #dist.tensor<#mesh, [-1, 1]>>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    } -> tensor<4xf32>
  return
}

// -----

// math ops are elementwise and nonlinear.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @math_of_partial(%p: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) {
  // expected-error @+1 {{'math.tanh' op has no correct distribution}}
  %t = math.tanh %p : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  return
}

// -----

// A causal mask built from linalg.index over split rows: each process would
// compare the indices within its block, not the global ones.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
func.func @index_of_split_loop(%x: tensor<2x8xf32, #dist.tensor<#mesh, [0, -1]>>, %e: tensor<2x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // expected-error @+1 {{'linalg.generic' op has no correct distribution: the body reads the index of loop 0, which is split over mesh axis 0 (dp): each process would see the index within its block, not the global one}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x8xf32, #dist.tensor<#mesh, [0, -1]>>) outs(%e : tensor<2x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
    ^bb0(%a: f32, %o: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %keep = arith.cmpi ule, %j, %i : index
      %ninf = arith.constant 0xFF800000 : f32
      %m = arith.select %keep, %a, %ninf : f32
      linalg.yield %m : f32
    } -> tensor<2x8xf32, #dist.tensor<#mesh, [0, -1]>>
  return
}

// -----

// A body that reads a value differing between processes from outside: the
// rule sees only the op's operands, so the result would be declared alike
// everywhere and differ.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @captured_varying(%x: tensor<4xf32, #dist.tensor<#mesh, [-1]>>, %e: tensor<4xf32, #dist.tensor<#mesh, [-1]>>) {
  // expected-note @+1 {{it differs along mesh axis 0 (mp) from this process's coordinate here}}
  %c = dist.process_coord #mesh axis = 0
  %ci = arith.index_cast %c : index to i32
  %cf = arith.sitofp %ci : i32 to f32
  // expected-error @+1 {{'linalg.map' op reads a value from outside its regions that differs between processes along mesh axis 0 (mp), which its rule does not see: pass it as an operand with its distribution}}
  %r = linalg.map ins(%x : tensor<4xf32, #dist.tensor<#mesh, [-1]>>) outs(%e : tensor<4xf32, #dist.tensor<#mesh, [-1]>>)
    (%v: f32, %o: f32) {
      %s = arith.addf %v, %cf : f32
      linalg.yield %s : f32
    }
  return
}
