// RUN: dist-opt %s --dist-specialize-rank="rank=8" -verify-diagnostics
// RUN: not dist-opt %s --dist-specialize-rank 2>&1 | FileCheck %s --check-prefix=NORANK
// NORANK: --dist-specialize-rank needs the process to specialise for: rank=N

#mesh = #dist.mesh<shape = [2, 4]>
func.func @not_in_mesh() -> index {
  // expected-error @+1 {{process 8 is not in mesh #dist.mesh<shape = [2, 4]>}}
  %a = dist.process_coord #mesh axis = 0
  return %a : index
}
