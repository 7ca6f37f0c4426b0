// RUN: dist-opt %s --convert-dist-to-linalg -split-input-file -verify-diagnostics

#mesh = #dist.mesh<shape = [2]>
func.func @row_split(%ids: tensor<2xi64>, %w: tensor<4x3xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<2x3xf32> {
  // expected-error @+2 {{the table's rows are split over mesh axis 0: run --dist-parallel-embedding before lowering}}
  // expected-error @+1 {{failed to legalize operation 'dist.embedding'}}
  %e = dist.embedding %ids, %w : tensor<2xi64>, tensor<4x3xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<2x3xf32>
  return %e : tensor<2x3xf32>
}

// -----

func.func @broadcast_batch(%x: tensor<1x4x3xf32>, %y: tensor<2x3x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+2 {{cannot lower a 'dist.matmul' whose batch dims broadcast (size 1 against a larger size) to the runtime}}
  // expected-error @+1 {{failed to legalize operation 'dist.matmul'}}
  %r = dist.matmul %x, %y : tensor<1x4x3xf32>, tensor<2x3x8xf32> -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

// -----

func.func @broadcast_batch_grad(%x: tensor<1x4x3xf32>, %y: tensor<2x3x8xf32>, %dout: tensor<2x4x8xf32>) -> (tensor<1x4x3xf32>, tensor<2x3x8xf32>) {
  // expected-error @+2 {{cannot lower a 'dist.matmul_grad' whose batch dims broadcast (size 1 against a larger size) to the runtime}}
  // expected-error @+1 {{failed to legalize operation 'dist.matmul_grad'}}
  %dx, %dy = dist.matmul_grad %x, %y, %dout : tensor<1x4x3xf32>, tensor<2x3x8xf32>, tensor<2x4x8xf32> -> tensor<1x4x3xf32>, tensor<2x3x8xf32>
  return %dx, %dy : tensor<1x4x3xf32>, tensor<2x3x8xf32>
}

// -----

func.func @dynamic_dropout(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+2 {{cannot lower 'dist.dropout' with the dynamic shape 'tensor<?xf32>': the lowering needs static shapes}}
  // expected-error @+1 {{failed to legalize operation 'dist.dropout'}}
  %y = dist.dropout %x prob = 5.000000e-01 : tensor<?xf32> -> tensor<?xf32>
  return %y : tensor<?xf32>
}
