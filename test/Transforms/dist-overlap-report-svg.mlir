// svg-file: a picture of the estimated schedule, drawn from the estimate in
// the run trace format by the drawer that draws a run's trace. The schedule of
// dist-overlap-report.mlir (1 flop/us, 10 us latency, 1 byte/us): the async
// dp allreduce on the dp lane from 0 to 74 us, the matmul on the compute
// lane from 0 to 16 us, the wait's stall from 16 to 74 us and the blocking
// allreduce from 74 to 148 us, both exposed (red). The x scale is
// (1100 - 190 - 20) / 148 px per us, for every function (148 us is the
// longest makespan).
// RUN: dist-opt %s --dist-overlap-report="svg-file=%t.svg peak-tflops=0.000001 link-latency-us=10 link-bandwidth-gbps=0.001" -o /dev/null 2>/dev/null
// RUN: FileCheck %s < %t.svg
// CHECK:      <svg xmlns="http://www.w3.org/2000/svg"
// CHECK:      >dist-overlap-report: estimated schedule</text>
// A group per function, headed by its figures; a lane per stream, the
// function's span a thin bracket above its compute lane.
// CHECK:      <g class="process" data-name="@schedule">
// CHECK-NEXT: @schedule: makespan 148.000 us, exposed communication 132.000 of 148.000 us</text>
// CHECK-NEXT: compute stream</text>
// CHECK-NEXT: <line
// CHECK-NEXT: <rect x="190.00" y="{{[0-9]+}}" width="890.00" height="2" fill="#333" class="function"><title>@schedule: 148.000 us at 0.000 us</title></rect>
// CHECK-NEXT: <rect x="190.00" y="{{[0-9]+}}" width="96.22" height="18" fill="#4c8bd6" {{.*}}class="compute"><title>dist.matmul: 16.000 us at 0.000 us</title></rect>
// CHECK-NEXT: <rect x="286.22" y="{{[0-9]+}}" width="348.78" height="18" fill="#d64c4c" {{.*}}class="wait"><title>dist.wait: 58.000 us at 16.000 us</title></rect>
// CHECK-NEXT: <rect x="635.00" y="{{[0-9]+}}" width="445.00" height="18" fill="#d64c4c" {{.*}}class="collective"><title>dist.allreduce: 74.000 us at 74.000 us</title></rect>
// CHECK-NEXT: dp stream</text>
// CHECK-NEXT: <line
// CHECK-NEXT: <rect x="190.00" y="{{[0-9]+}}" width="445.00" height="18" fill="#4caf50" {{.*}}class="collective"><title>dist.allreduce: 74.000 us at 0.000 us</title></rect>
// CHECK-NEXT: </g>
// A function's name is escaped; a function without estimated ops has no
// lanes. Every function is drawn on one scale: this 16 us matmul is as wide
// as the one above.
// CHECK-NEXT: <g class="process" data-name="@we&quot;ird&lt;&amp;&gt;">
// CHECK-NEXT: @we&quot;ird&lt;&amp;&gt;: makespan 16.000 us
// CHECK:      <rect x="190.00" y="{{[0-9]+}}" width="96.22" height="18" fill="#4c8bd6"
// CHECK-NOT:  data-name="@nothing"
// One time axis under the lanes: ticks every 20 us (a 1-2-5 step, four to
// ten ticks) up to the longest makespan.
// CHECK:      <g class="axis">
// CHECK-NEXT: <line x1="190" y1="[[AXIS:[0-9]+]]" x2="1080.00" y2="[[AXIS]]" stroke="#444"/>
// CHECK-NEXT: <line x1="190.00"
// CHECK-NEXT: <text x="190.00" y="{{[0-9]+}}" text-anchor="middle">0 us</text>
// CHECK-NEXT: <line x1="310.27"
// CHECK-NEXT: <text x="310.27" y="{{[0-9]+}}" text-anchor="middle">20 us</text>
// CHECK:      <text x="1031.89" y="{{[0-9]+}}" text-anchor="middle">140 us</text>
// CHECK-NEXT: </g>
// CHECK:      compute</text>
// CHECK:      exposed communication</text>
// CHECK:      communication on a stream</text>
// CHECK:      </svg>
// The file is valid XML.
// RUN: %python -c "import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])" %t.svg
// One drawer: the estimate's trace-file drawn by dist.run.timeline is the
// svg-file, byte for byte.
// RUN: dist-opt %s --dist-overlap-report="trace-file=%t.trace.json peak-tflops=0.000001 link-latency-us=10 link-bandwidth-gbps=0.001" -o /dev/null 2>/dev/null
// RUN: %python -m dist.run.timeline %t.trace.json -o %t.drawn.svg
// RUN: diff %t.svg %t.drawn.svg
// RUN: not dist-opt %s --dist-overlap-report="svg-file=%t/no/such/dir.svg" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WRITE
// WRITE: error: cannot write the overlap report: {{.*}}

#mesh = #dist.mesh<shape = [2], names = ["dp"]>
func.func @schedule(%a: tensor<4x4xf32>, %x: tensor<2x2xf32>, %y: tensor<2x2xf32>)
    -> (tensor<2x2xf32>, tensor<4x4xf32>) {
  %f = dist.allreduce %a on #mesh axes = [0] reduce = sum stream = dp
      : tensor<4x4xf32> -> !dist.future<tensor<4x4xf32>>
  %m = dist.matmul %x, %y : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %r = dist.wait %f : !dist.future<tensor<4x4xf32>>
  %s = dist.allreduce %r on #mesh axes = [0] reduce = sum : tensor<4x4xf32> -> tensor<4x4xf32>
  return %m, %s : tensor<2x2xf32>, tensor<4x4xf32>
}

func.func @"we\"ird<&>"(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %m = dist.matmul %x, %y : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  return %m : tensor<2x2xf32>
}

func.func @nothing() {
  return
}
