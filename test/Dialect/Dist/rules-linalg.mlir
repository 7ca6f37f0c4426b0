// RUN: dist-opt %s --dist-verify-distributions -split-input-file | FileCheck %s
// The linalg structured ops' rule (LinalgRuleModel.cpp): loops from the
// indexing maps, a split reduction loop leaves a partial result with the
// combiner the region yields, and partial sums pass only through bodies
// that are linear in them. Each case declares what the rule computes.

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// A matmul over a contracted dim split on mp: a partial sum, accumulated
// into a fill of zeros (which may be declared partial: the sum of zeros is
// zero).
// CHECK-LABEL: func @matmul_split_k
// CHECK: linalg.matmul
func.func @matmul_split_k(%x: tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>,
                          %w: tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>>)
    -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>> {
  %e = tensor.empty() : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>) -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>
  %m = linalg.matmul ins(%x, %w : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>>)
                     outs(%f : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>) -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>
  return %m : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>
}

// -----

// Batch and row splits follow the loops; a transpose permutes them.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// CHECK-LABEL: func @batch_matmul_and_transpose
func.func @batch_matmul_and_transpose(%a: tensor<1x8x4xf32, #dist.tensor<#mesh, [0, -1, -1]>>,
                                      %b: tensor<1x4x2xf32, #dist.tensor<#mesh, [0, -1, 1]>>,
                                      %c: tensor<1x8x2xf32, #dist.tensor<#mesh, [0, -1, 1]>>)
    -> tensor<2x1x8xf32, #dist.tensor<#mesh, [1, 0, -1]>> {
  %m = linalg.batch_matmul ins(%a, %b : tensor<1x8x4xf32, #dist.tensor<#mesh, [0, -1, -1]>>, tensor<1x4x2xf32, #dist.tensor<#mesh, [0, -1, 1]>>)
                           outs(%c : tensor<1x8x2xf32, #dist.tensor<#mesh, [0, -1, 1]>>) -> tensor<1x8x2xf32, #dist.tensor<#mesh, [0, -1, 1]>>
  %e = tensor.empty() : tensor<2x1x8xf32, #dist.tensor<#mesh, [1, 0, -1]>>
  // (A transpose as a generic: MLIR 22's parser of the named transpose crashes
  // on a malformed permutation, which the fuzzer would reach from here.)
  %t = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (b, c, a)>, affine_map<(a, b, c) -> (a, b, c)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%m : tensor<1x8x2xf32, #dist.tensor<#mesh, [0, -1, 1]>>)
      outs(%e : tensor<2x1x8xf32, #dist.tensor<#mesh, [1, 0, -1]>>) {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
    } -> tensor<2x1x8xf32, #dist.tensor<#mesh, [1, 0, -1]>>
  return %t : tensor<2x1x8xf32, #dist.tensor<#mesh, [1, 0, -1]>>
}

// -----

// A softmax over rows split on dp: every reduction is over an unsplit dim,
// so nothing is partial.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// CHECK-LABEL: func @softmax_rows
func.func @softmax_rows(%x: tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32, #dist.tensor<#mesh, [0]>>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4xf32, #dist.tensor<#mesh, [0]>>) -> tensor<4xf32, #dist.tensor<#mesh, [0]>>
  %m = linalg.reduce ins(%x : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>) outs(%m0 : tensor<4xf32, #dist.tensor<#mesh, [0]>>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %e2 = tensor.empty() : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>
  %ex = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<4xf32, #dist.tensor<#mesh, [0]>>)
      outs(%e2 : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      %y = math.exp %d : f32
      linalg.yield %y : f32
    } -> tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32, #dist.tensor<#mesh, [0]>>) -> tensor<4xf32, #dist.tensor<#mesh, [0]>>
  %s = linalg.reduce ins(%ex : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>) outs(%s0 : tensor<4xf32, #dist.tensor<#mesh, [0]>>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ex, %s : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>, tensor<4xf32, #dist.tensor<#mesh, [0]>>)
      outs(%e2 : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %q = arith.divf %a, %b : f32
      linalg.yield %q : f32
    } -> tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>
  return %p : tensor<4x16xf32, #dist.tensor<#mesh, [0, -1]>>
}

// -----

// The same softmax over columns split on mp: the row max is a partial max
// and the row sum a partial sum over mp, each completed by its allreduce
// before the elementwise step that needs it (rules-linalg-invalid.mlir has
// it without them).
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// CHECK-LABEL: func @softmax_columns
// CHECK: dist.allreduce {{.*}} reduce = max
// CHECK: dist.allreduce {{.*}} reduce = sum
func.func @softmax_columns(%x: tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>) -> tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>>
  %mp = linalg.reduce ins(%x : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>) outs(%m0 : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %m = dist.allreduce %mp on #mesh axes = [1] reduce = max : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  %e2 = tensor.empty() : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>
  %ex = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<4xf32, #dist.tensor<#mesh, [-1]>>)
      outs(%e2 : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      %y = math.exp %d : f32
      linalg.yield %y : f32
    } -> tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>
  %e3 = tensor.empty() : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  %s0 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) -> tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  %sp = linalg.reduce ins(%ex : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>) outs(%s0 : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %s = dist.allreduce %sp on #mesh axes = [1] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ex, %s : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>, tensor<4xf32, #dist.tensor<#mesh, [-1]>>)
      outs(%e2 : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %q = arith.divf %a, %b : f32
      linalg.yield %q : f32
    } -> tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>
  return %p : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 1]>>
}

// -----

// GeLU (tanh form) on a tensor split both ways: elementwise, any split.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// CHECK-LABEL: func @gelu
func.func @gelu(%x: tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>) -> tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>> {
  %e = tensor.empty() : tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>
  %g = linalg.map ins(%x : tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>) outs(%e : tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>)
    (%v: f32, %o: f32) {
      %half = arith.constant 0.5 : f32
      %one = arith.constant 1.0 : f32
      %c = arith.constant 0.7978845608 : f32
      %k = arith.constant 0.044715 : f32
      %v2 = arith.mulf %v, %v : f32
      %v3 = arith.mulf %v2, %v : f32
      %kv3 = arith.mulf %k, %v3 : f32
      %inner = arith.addf %v, %kv3 : f32
      %arg = arith.mulf %c, %inner : f32
      %t = math.tanh %arg : f32
      %onet = arith.addf %one, %t : f32
      %hv = arith.mulf %half, %v : f32
      %r = arith.mulf %hv, %onet : f32
      linalg.yield %r : f32
    }
  return %g : tensor<4x4xf32, #dist.tensor<#mesh, [0, 1]>>
}

// -----

// Partial sums pass through linear bodies: a scale, a transpose, a sum of
// two partial values, a reduction by sum into a partial accumulator; a
// partial max through a max reduction.
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
#P = #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>
#P1 = #dist.tensor<#mesh, [-1], partial = [1 : sum]>
#M = #dist.tensor<#mesh, [-1, -1], partial = [1 : max]>
#M1 = #dist.tensor<#mesh, [-1], partial = [1 : max]>
// CHECK-LABEL: func @linear_bodies
func.func @linear_bodies(%p: tensor<4x8xf32, #P>, %q: tensor<4x8xf32, #P>, %acc: tensor<4xf32, #P1>,
                         %mx: tensor<4x8xf32, #M>, %macc: tensor<4xf32, #M1>)
    -> (tensor<4x8xf32, #P>, tensor<8x4xf32, #P>, tensor<4x8xf32, #P>, tensor<4xf32, #P1>, tensor<4xf32, #M1>) {
  %e = tensor.empty() : tensor<4x8xf32, #P>
  %scaled = linalg.map ins(%p : tensor<4x8xf32, #P>) outs(%e : tensor<4x8xf32, #P>)
    (%v: f32, %o: f32) {
      %c = arith.constant 0.125 : f32
      %r = arith.mulf %v, %c : f32
      linalg.yield %r : f32
    }
  %et = tensor.empty() : tensor<8x4xf32, #P>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<4x8xf32, #P>) outs(%et : tensor<8x4xf32, #P>) {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
    } -> tensor<8x4xf32, #P>
  %sum = linalg.map ins(%p, %q : tensor<4x8xf32, #P>, tensor<4x8xf32, #P>) outs(%e : tensor<4x8xf32, #P>)
    (%a: f32, %b: f32, %o: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  %red = linalg.reduce ins(%p : tensor<4x8xf32, #P>) outs(%acc : tensor<4xf32, #P1>) dimensions = [1]
    (%in: f32, %a: f32) {
      %r = arith.addf %in, %a : f32
      linalg.yield %r : f32
    }
  %mred = linalg.reduce ins(%mx : tensor<4x8xf32, #M>) outs(%macc : tensor<4xf32, #M1>) dimensions = [1]
    (%in: f32, %a: f32) {
      %r = arith.maximumf %in, %a : f32
      linalg.yield %r : f32
    }
  return %scaled, %t, %sum, %red, %mred : tensor<4x8xf32, #P>, tensor<8x4xf32, #P>, tensor<4x8xf32, #P>, tensor<4xf32, #P1>, tensor<4xf32, #M1>
}

// -----

// A causal mask whose indexed loops are whole: the indices are global (the
// batch loop, which the body does not index, may be split).
#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// CHECK-LABEL: func @index_of_whole_loops
func.func @index_of_whole_loops(%x: tensor<2x8x8xf32, #dist.tensor<#mesh, [0, -1, -1]>>, %e: tensor<2x8x8xf32, #dist.tensor<#mesh, [0, -1, -1]>>) -> tensor<2x8x8xf32, #dist.tensor<#mesh, [0, -1, -1]>> {
  %r = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x8x8xf32, #dist.tensor<#mesh, [0, -1, -1]>>) outs(%e : tensor<2x8x8xf32, #dist.tensor<#mesh, [0, -1, -1]>>) {
    ^bb0(%a: f32, %o: f32):
      %i = linalg.index 1 : index
      %j = linalg.index 2 : index
      %keep = arith.cmpi ule, %j, %i : index
      %ninf = arith.constant 0xFF800000 : f32
      %m = arith.select %keep, %a, %ninf : f32
      linalg.yield %m : f32
    } -> tensor<2x8x8xf32, #dist.tensor<#mesh, [0, -1, -1]>>
  return %r : tensor<2x8x8xf32, #dist.tensor<#mesh, [0, -1, -1]>>
}

// -----

// A body may read a value from outside that is the same on every process.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// CHECK-LABEL: func @captured_uniform
func.func @captured_uniform(%x: tensor<4xf32, #dist.tensor<#mesh, [0]>>, %e: tensor<4xf32, #dist.tensor<#mesh, [0]>>, %k: f32) -> tensor<4xf32, #dist.tensor<#mesh, [0]>> {
  %r = linalg.map ins(%x : tensor<4xf32, #dist.tensor<#mesh, [0]>>) outs(%e : tensor<4xf32, #dist.tensor<#mesh, [0]>>)
    (%v: f32, %o: f32) {
      %s = arith.mulf %v, %k : f32
      linalg.yield %s : f32
    }
  return %r : tensor<4xf32, #dist.tensor<#mesh, [0]>>
}
