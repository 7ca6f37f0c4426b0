// RUN: dist-opt %s --dist-parallel-embedding="require-row-split=true" -verify-diagnostics
// With require-row-split, an embedding whose rows are not split is an error
// rather than a local lookup left alone.
#mesh = #dist.mesh<shape = [2, 4]>
func.func @not_split(%ids: tensor<4xi64>, %w: tensor<100x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{weight rows are not split over a mesh axis; nothing to lower to a vocab-parallel embedding}}
  %e = dist.embedding %ids, %w : tensor<4xi64>, tensor<100x16xf32> -> tensor<4x16xf32>
  return %e : tensor<4x16xf32>
}

