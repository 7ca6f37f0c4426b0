// RUN: dist-opt %s --dist-verify-distributions -verify-diagnostics
// RUN: dist-opt %s --convert-dist-to-mpi -verify-diagnostics
// RUN: dist-opt %s --convert-dist-to-linalg -verify-diagnostics
// RUN: not dist-opt %s --dist-to-llvm -o /dev/null 2>&1 | FileCheck %s
// And every rewrite that trusts the encodings (a fuzzed marked GPT block
// once reached the embedding lowering's shard rule unchecked):
// RUN: dist-opt %s --dist-parallel-embedding -verify-diagnostics
// RUN: dist-opt %s --dist-amp-check-finite -verify-diagnostics
// RUN: dist-opt %s --dist-specialize-rank=rank=0 -verify-diagnostics
// RUN: dist-opt %s --dist-overlap-report -verify-diagnostics
// RUN: dist-opt %s --dist-lower-reshard -verify-diagnostics
// RUN: dist-opt %s --dist-matmul-grad-overlap -verify-diagnostics
// RUN: dist-opt %s --dist-assign-streams -verify-diagnostics
// RUN: dist-opt %s --dist-dropout-seed -verify-diagnostics
// A function still marked {dist.complete} is neither checked nor lowered
// as if it were complete: its ops with unencoded tensors were never
// checked, and lowering them as replicated would hide a missing collective.
// CHECK: error: 'func.func' op is marked 'dist.complete': its distributions are not complete (run --dist-complete)

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
// expected-error @+1 {{'func.func' op is marked 'dist.complete': its distributions are not complete (run --dist-complete)}}
func.func @still_marked(%x: tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<8x8xf32> attributes {dist.complete} {
  %t = math.tanh %x : tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>
  %c = tensor.cast %t : tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}
