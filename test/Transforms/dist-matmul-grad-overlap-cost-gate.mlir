// The optional cost gate: split only when the dY matmul hides enough of the
// allreduce. dY here is 2*64*64*64 = 524288 flops; the ring allreduce moves
// 2*(4-1)/4 * 64*64*4 = 24576 bytes per process among 4 processes.
// Off by default:
// RUN: dist-opt %s --dist-matmul-grad-overlap --dist-verify-distributions | FileCheck %s --check-prefix=SPLIT
// At 100 TFLOP/s the matmul takes ~0.005 us; at 100 GB/s and 10 us latency
// the allreduce takes 10 + 0.246 us:
// RUN: dist-opt %s --dist-matmul-grad-overlap="min-overlap-ratio=0.5 remarks=true" -verify-diagnostics | FileCheck %s --check-prefix=KEEP
// On a slow processor (0.0001 TFLOP/s: ~5243 us) and a fast link (0.1 us
// latency: ~0.346 us), the matmul hides the whole allreduce:
// RUN: dist-opt %s --dist-matmul-grad-overlap="min-overlap-ratio=1.0 peak-tflops=0.0001 link-latency-us=0.1" | FileCheck %s --check-prefix=SPLIT

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>

// SPLIT-LABEL: func @gate
// SPLIT-NOT: dist.matmul_grad
// SPLIT: stream = mp
// KEEP-LABEL: func @gate
// KEEP-NEXT: dist.matmul_grad
func.func @gate(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>,
    %dout: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-remark @+1 {{not split: the dY matmul (~0.005 us) would hide less than 0.50 of the dist.allreduce (~10.246 us)}}
  %dx, %dy = dist.matmul_grad %x, %y, %dout
      : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
      -> tensor<64x64xf32>, tensor<64x64xf32>
  %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum : tensor<64x64xf32> -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
