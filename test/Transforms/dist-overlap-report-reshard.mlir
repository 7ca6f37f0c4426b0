// A dist.reshard that is not lowered yet is priced by its plan, as the
// collectives --dist-lower-reshard would put in its place: the report
// before the lowering equals the report after it. With 10 us latency and
// 1 byte/us on a group of 4, the all-gather to 512 bytes and the
// reduce-scatter from 512 bytes each move 3/4 of them (10 + 384 us); the
// local slice costs nothing.
// RUN: dist-opt %s --dist-overlap-report="svg-file=%t.svg peak-tflops=0.000001 link-latency-us=10 link-bandwidth-gbps=0.001" -o /dev/null 2>&1 | FileCheck %s
// RUN: dist-opt %s --dist-lower-reshard --dist-overlap-report="peak-tflops=0.000001 link-latency-us=10 link-bandwidth-gbps=0.001" -o /dev/null 2>&1 | FileCheck %s
// CHECK: @reshard 0.000 788.000 788.000 0.0% 788.000
// CHECK: @reshard per process: 1 x dist.all_gather (512 B), 1 x dist.reduce_scatter (512 B);
// RUN: FileCheck %s --check-prefix=SVG < %t.svg
// SVG: <title>dist.reshard: all_gather: 394.000 us at 0.000 us</title>
// SVG: <title>dist.reshard: reduce_scatter: 394.000 us at 394.000 us</title>

#mesh = #dist.mesh<shape = [4]>
func.func @reshard(
    %x: tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>>,
    %p: tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>,
    %r: tensor<8x16xf32>)
    -> (tensor<8x16xf32>, tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>,
        tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>>) {
  %g = dist.reshard %x : tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x16xf32>
  %s = dist.reshard %p : tensor<8x16xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
      -> tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>
  %l = dist.reshard %r : tensor<8x16xf32> -> tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>>
  return %g, %s, %l : tensor<8x16xf32>, tensor<8x4xf32, #dist.tensor<#mesh, [-1, 0]>>,
                      tensor<2x16xf32, #dist.tensor<#mesh, [0, -1]>>
}
