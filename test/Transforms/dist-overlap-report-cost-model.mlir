// A cost-model file (dist-run --calibrate writes one) replaces the three
// constants. Inputs/cost-model.json, by hand: dist.matmul 1 flop/us, with
// transpose_x 0.5 flop/us, with transpose_y (or both) 0.25 flop/us,
// dist.matmul_grad 2 flop/us; an allreduce in a
// group of 2 costs 10 us + 1 byte/us, in a group of 16 100 us + 4 byte/us;
// a broadcast in a group of 2 costs 5 us + 2 byte/us. A group size that was
// not measured uses the nearest measured one (by ratio).
// RUN: dist-opt %s --dist-overlap-report="cost-model=%S/Inputs/cost-model.json" -o /dev/null 2>&1 | FileCheck %s

// Each 2x2x2 matmul is 16 flops: 16 us plain, 32 us with transpose_x, 64 us
// with transpose_y and with both; the matmul_grad's two matmuls 32 flops at
// 2 flop/us: 16 us. 16 + 32 + 64 + 64 + 16.
// CHECK: @matmuls 192.000 0.000 0.000 - 192.000

// 4x4xf32 is 64 bytes. dp (2): 10 + 64 = 74 us. mp (8, nearest 16):
// 100 + 64 / 4 = 116 us. Both (16): 116 us. Broadcasts over dp (2) and mp
// (8, only 2 measured): 5 + 64 / 2 = 37 us each. 74 + 116 + 116 + 37 + 37.
// CHECK: @collectives 0.000 380.000 380.000 0.0% 380.000

// Without the file, the constants (here 1 flop/us, 10 us, 1 byte/us, and a
// ring factor 2(p-1)/p): the same matmuls cost 16 + 16 + 16 + 16 + 32.
// RUN: dist-opt %s --dist-overlap-report="peak-tflops=0.000001 link-latency-us=10 link-bandwidth-gbps=0.001" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CONST
// CONST: @matmuls 96.000 0.000 0.000 - 96.000

// The matmul-grad split's gate estimates the dY matmul (transpose_x) with
// the file's rate: 2x2x2 at 0.5 flop/us is 32 us against the dp allreduce's
// 10 + 16 = 26 us of a 2x2xf32 dX.
// RUN: dist-opt %s --dist-matmul-grad-overlap="cost-model=%S/Inputs/cost-model.json min-overlap-ratio=2 remarks=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GATE
// GATE: remark: not split: the dY matmul (~32.000 us) would hide less than 2.00 of the dist.allreduce (~26.000 us)
// RUN: dist-opt %s --dist-auto-parallel="cost-model=%S/Inputs/cost-model.json min-overlap-ratio=1 remarks=true" 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT-NOT: not split: the dY matmul
// SPLIT: func.func @gate
// SPLIT-NEXT: dist.matmul {{.*}} transpose_y
// SPLIT-NEXT: dist.allreduce {{.*}} stream = mp
// SPLIT-NEXT: dist.matmul {{.*}} transpose_x
// SPLIT-NEXT: dist.wait

#mesh = #dist.mesh<shape = [2, 8], names = ["dp", "mp"]>
func.func @matmuls(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>)
    -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %m = dist.matmul %x, %y : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %t = dist.matmul %x, %y transpose_x : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %ty = dist.matmul %x, %y transpose_y : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %tt = dist.matmul %x, %y transpose_x transpose_y : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %dx, %dy = dist.matmul_grad %x, %y, %m : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>, tensor<2x2xf32>
  return %m, %t, %ty, %tt, %dx, %dy : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

func.func @collectives(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %dp = dist.allreduce %a on #mesh axes = [0] reduce = sum : tensor<4x4xf32> -> tensor<4x4xf32>
  %mp = dist.allreduce %a on #mesh axes = [1] reduce = sum : tensor<4x4xf32> -> tensor<4x4xf32>
  %all = dist.allreduce %a on #mesh axes = [0, 1] reduce = sum : tensor<4x4xf32> -> tensor<4x4xf32>
  %b0 = dist.broadcast %a on #mesh axes = [0] root = 0 : tensor<4x4xf32> -> tensor<4x4xf32>
  %b1 = dist.broadcast %a on #mesh axes = [1] root = 0 : tensor<4x4xf32> -> tensor<4x4xf32>
  return %dp, %mp, %all, %b0, %b1 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

func.func @gate(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>, %dout: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %dx, %dy = dist.matmul_grad %x, %y, %dout : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>, tensor<2x2xf32>
  %r = dist.allreduce %dx on #mesh axes = [0] reduce = sum : tensor<2x2xf32> -> tensor<2x2xf32>
  return %r, %dy : tensor<2x2xf32>, tensor<2x2xf32>
}
