// The redistributions in the overlap report: priced as the planner prices
// them, drawn as bars in the SVG, on a stream when asynchronous. With 10 us
// latency and 1 byte/us on a group of 4: the all-gather to 512 bytes and
// the reduce-scatter from 512 bytes move 3/4 of them (10 + 384 us), the
// all-to-all 3/4 of its 128-byte shard (10 + 96 us); the 1024-flop matmul
// takes 1024 us at 1 flop/us and hides the asynchronous all-gather.
// RUN: dist-opt %s --dist-overlap-report="svg-file=%t.svg peak-tflops=0.000001 link-latency-us=10 link-bandwidth-gbps=0.001" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TABLE
// TABLE: @redistribute 1024.000 894.000 500.000 44.1% 1524.000
// RUN: FileCheck %s < %t.svg
// CHECK:      <g class="process" data-name="@redistribute">
// CHECK-NEXT: @redistribute: makespan 1524.000 us, exposed communication 500.000 of 894.000 us
// CHECK-NEXT: compute stream
// CHECK-NEXT: <line
// CHECK-NEXT: <rect {{.*}} class="function"><title>@redistribute: 1524.000 us at 0.000 us</title></rect>
// CHECK-NEXT: <rect {{.*}} fill="#4c8bd6" {{.*}}class="compute"><title>dist.matmul: 1024.000 us at 0.000 us</title></rect>
// CHECK-NEXT: <rect {{.*}} fill="#d64c4c" {{.*}}class="collective"><title>dist.reduce_scatter: 394.000 us at 1024.000 us</title></rect>
// CHECK-NEXT: <rect {{.*}} fill="#d64c4c" {{.*}}class="collective"><title>dist.all_to_all: 106.000 us at 1418.000 us</title></rect>
// CHECK-NEXT: dp stream
// CHECK-NEXT: <line
// CHECK-NEXT: <rect {{.*}} fill="#4caf50" {{.*}}class="collective"><title>dist.all_gather: 394.000 us at 0.000 us</title></rect>

#mesh = #dist.mesh<shape = [4]>
func.func @redistribute(
    %x: tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>>,
    %a: tensor<8x8xf32>, %b: tensor<8x8xf32>,
    %p: tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>)
    -> (tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<8x8xf32>,
        tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>) {
  %f = dist.all_gather %x on #mesh axes = [0] stream = dp
      : tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>>
      -> !dist.future<tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>>
  %m = dist.matmul %a, %b : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %s = dist.reduce_scatter %p on #mesh axes = [0] reduce = sum
      : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
      -> tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>>
  %t = dist.all_to_all %s on #mesh axes = [0]
      : tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>>
      -> tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>
  %g = dist.wait %f : !dist.future<tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>>
  return %g, %m, %t : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<8x8xf32>,
                      tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>
}
