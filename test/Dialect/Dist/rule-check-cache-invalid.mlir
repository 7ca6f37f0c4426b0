// RUN: dist-opt %s --dist-verify-distributions -verify-diagnostics -split-input-file
// The distribution check remembers a rule's success per op signature (its
// types and the attributes the rule reads). A linalg op's rule also reads
// its body and the constants of its inits, a tensor.pad's its padding
// value: an op that differs from a checked one only there is checked anew.
// Each case first has the correct op, then the same signature wrong.

#mesh = #dist.mesh<shape = [2]>
!P = tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
!X = tensor<4x4xf32, #dist.tensor<#mesh, [-1, 0]>>

// A row sum over split columns is partial (sum); a row max is not.
func.func @sum_then_max(%x: !X) -> (!P, !P) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : !P
  %f = linalg.fill ins(%z : f32) outs(%e : !P) -> !P
  %s = linalg.reduce ins(%x : !X) outs(%f : !P) dimensions = [1]
    (%in: f32, %acc: f32) {
      %c = arith.addf %in, %acc : f32
      linalg.yield %c : f32
    }
  // expected-error @+1 {{'linalg.reduce' op has no correct distribution: operand #1 is partial (sum) over mesh axis 0: result #0 combines with max, which does not commute with a pending sum}}
  %m = linalg.reduce ins(%x : !X) outs(%f : !P) dimensions = [1]
    (%in: f32, %acc: f32) {
      %c = arith.maximumf %in, %acc : f32
      linalg.yield %c : f32
    }
  return %s, %m : !P, !P
}

// -----

#mesh = #dist.mesh<shape = [2]>
!P = tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>

// A fill of zeros may be declared a partial sum (its sum is zeros); a fill
// of another value may not.
func.func @fill_zero_then_other() -> (!P, !P) {
  %e = tensor.empty() : !P
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : !P) -> !P
  %low = arith.constant -3.0e+38 : f32
  // expected-error @+1 {{'linalg.fill' op result #0 is declared #dist.tensor<#dist.mesh<shape = [2]>, [-1], partial = [0 : sum]> but computes #dist.tensor<#dist.mesh<shape = [2]>, [-1]>: the partial axes differ (declare it as computed, or redistribute)}}
  %g = linalg.fill ins(%low : f32) outs(%e : !P) -> !P
  return %f, %g : !P, !P
}

// -----

#mesh = #dist.mesh<shape = [2]>
!P = tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>

// A sum of two partial sums is one; their product is not.
func.func @add_then_mul(%a: !P, %b: !P) -> (!P, !P) {
  %e = tensor.empty() : !P
  %s = linalg.map ins(%a, %b : !P, !P) outs(%e : !P)
    (%x: f32, %y: f32, %o: f32) {
      %r = arith.addf %x, %y : f32
      linalg.yield %r : f32
    }
  // expected-error @+1 {{'linalg.map' op has no correct distribution}}
  %p = linalg.map ins(%a, %b : !P, !P) outs(%e : !P)
    (%x: f32, %y: f32, %o: f32) {
      %r = arith.mulf %x, %y : f32
      linalg.yield %r : f32
    }
  return %s, %p : !P, !P
}

// -----

#mesh = #dist.mesh<shape = [2]>
!P = tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
!Q = tensor<6xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>

// Padding a partial sum with zeros keeps it partial; with ones every
// process would add its padding.
func.func @pad_zero_then_one(%a: !P) -> (!Q, !Q) {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %a low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %z : f32
  } : !P to !Q
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{'tensor.pad' op has no correct distribution: the source is partial (sum) over mesh axis 0 and the padding is not a constant zero: every process would add it}}
  %q = tensor.pad %a low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %one : f32
  } : !P to !Q
  return %p, %q : !Q, !Q
}
