// RUN: dist-opt %s --convert-dist-to-linalg -split-input-file -verify-diagnostics

// The runtime's entry points are reserved names: a module that defines one
// as something else is an error, not a call of the wrong function.
func.func @dist_index_error(%x: i32) {
  return
}
func.func @lookup(%ids: tensor<2xi64>, %w: tensor<3x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+2 {{the module defines 'dist_index_error', a name the dist runtime reserves, as something else}}
  // expected-error @+1 {{failed to legalize operation 'dist.embedding'}}
  %e = dist.embedding %ids, %w : tensor<2xi64>, tensor<3x2xf32> -> tensor<2x2xf32>
  return %e : tensor<2x2xf32>
}

// -----

func.func private @dist_random_seed(i32) -> i32
func.func @unseeded(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+2 {{the module defines 'dist_random_seed', a name the dist runtime reserves, as something else}}
  // expected-error @+1 {{failed to legalize operation 'dist.dropout'}}
  %y = dist.dropout %x prob = 5.000000e-01 : tensor<8xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}
