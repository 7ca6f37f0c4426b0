// A hand-computed schedule. With 1 flop/us, 10 us latency and 1 byte/us:
//   the 2x2x2 matmul takes 2*2*2*2 = 16 us;
//   a 4x4 f32 allreduce (64 bytes) in a group of 2 takes 10 + 2*(2-1)/2*64
//   = 74 us.
// The async allreduce starts at 0 and ends at 74; the matmul ends at 16; the
// wait stalls 58 us; the sync allreduce then runs 74 us on compute.
// compute 16, comm 148, exposed 58 + 74 = 132, makespan 148.
// RUN: dist-opt %s --dist-overlap-report="peak-tflops=0.000001 link-latency-us=10 link-bandwidth-gbps=0.001" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TABLE
// RUN: dist-opt %s --dist-overlap-report="format=json peak-tflops=0.000001 link-latency-us=10 link-bandwidth-gbps=0.001" -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: dist-opt %s --dist-overlap-report="output=%t.txt trace-file=%t.trace.json peak-tflops=0.000001 link-latency-us=10 link-bandwidth-gbps=0.001" | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s --check-prefix=TABLE < %t.txt
// RUN: FileCheck %s --check-prefix=TRACE < %t.trace.json
// Both files are valid JSON for the tools that read them.
// RUN: dist-opt %s --dist-overlap-report="format=json output=%t.json" -o /dev/null
// RUN: %python -c "import json, sys; [json.load(open(f)) for f in sys.argv[1:]]" %t.json %t.trace.json

// TABLE: function  compute (us)  comm (us)  exposed comm (us)  hidden  makespan (us)
// TABLE-NEXT: @schedule 16.000 148.000 132.000 10.8% 148.000
// TABLE-NEXT: @no_comm 16.000 0.000 0.000 - 16.000
// What a call moves and holds per process: two allreduces of 64 bytes; at
// the second allreduce %m (16 bytes), %r and %s (64 each) are held at once.
// TABLE-NEXT: @schedule per process: 2 x dist.allreduce (128 B); peak live tensors 144 B, arguments 96 B
// TABLE-NEXT: @no_comm per process: no collectives; peak live tensors 16 B, arguments 32 B

// JSON: {"functions":[
// JSON-SAME: {"name":"schedule","compute_us":16.000,"comm_us":148.000,"exposed_comm_us":132.000,"makespan_us":148.000,"collectives":{"dist.allreduce":{"count":2,"bytes":128}},"peak_live_bytes":144,"argument_bytes":96,"state_bytes":0,"unsharded_state_bytes":0}
// JSON-SAME: {"name":"no_comm","compute_us":16.000,"comm_us":0.000,"exposed_comm_us":0.000,"makespan_us":16.000,"collectives":{},"peak_live_bytes":16,"argument_bytes":32,"state_bytes":0,"unsharded_state_bytes":0}
// JSON-SAME: ]}

// The report leaves the IR unchanged.
// IR-LABEL: func.func @schedule
// IR: dist.wait

// The run trace format (python/dist/run/trace.py): a process per function
// with its figures, a lane per stream it uses (the dp stream's first lane is
// 200), the function's span, an interval per op at its location, the stall
// a wait.
// TRACE: {"dist-trace":1,"displayTimeUnit":"ms","title":"dist-overlap-report: estimated schedule","traceEvents":[
// TRACE-DAG: {"name":"process_name","ph":"M","pid":0,"args":{"name":"@schedule","summary":"makespan 148.000 us, exposed communication 132.000 of 148.000 us"}}
// TRACE-DAG: {"name":"thread_name","ph":"M","pid":0,"tid":0,"args":{"name":"compute stream"}}
// TRACE-DAG: {"name":"thread_name","ph":"M","pid":0,"tid":200,"args":{"name":"dp stream"}}
// TRACE-DAG: {"name":"schedule","cat":"function","ph":"X","pid":0,"tid":0,"ts":0.000,"dur":148.000}
// TRACE-DAG: {"name":"dist.allreduce","cat":"collective","ph":"X","pid":0,"tid":200,"ts":0.000,"dur":74.000,"args":{"file":"{{.*}}dist-overlap-report.mlir","line":65,"col":8}}
// TRACE-DAG: {"name":"dist.matmul","cat":"compute","ph":"X","pid":0,"tid":0,"ts":0.000,"dur":16.000,"args":{"file":"{{.*}}dist-overlap-report.mlir","line":67,"col":8}}
// TRACE-DAG: {"name":"dist.wait","cat":"wait","ph":"X","pid":0,"tid":0,"ts":16.000,"dur":58.000,"args":{"file":"{{.*}}dist-overlap-report.mlir","line":68,"col":8}}
// TRACE-DAG: {"name":"dist.allreduce","cat":"collective","ph":"X","pid":0,"tid":0,"ts":74.000,"dur":74.000,"args":{"file":"{{.*}}dist-overlap-report.mlir","line":69,"col":8}}
// An op a pass made (its location fused with the pass's name) is at the
// line the fused location holds.
// TRACE-DAG: {"name":"dist.matmul","cat":"compute","ph":"X","pid":1,"tid":0,"ts":0.000,"dur":16.000,"args":{"file":"split.mlir","line":7,"col":3}}
// TRACE-DAG: {"name":"process_name","ph":"M","pid":1,"args":{"name":"@no_comm","summary":"makespan 16.000 us, exposed communication 0.000 of 0.000 us"}}
// TRACE: ]}

// Being a run's format, the estimate reads back as a measurement: what the
// compute stream waits for (58 + 74 us) is what a run could see of the
// communication.
// RUN: dist-opt %s --dist-overlap-report="measured-trace=%t.trace.json peak-tflops=0.000001 link-latency-us=10 link-bandwidth-gbps=0.001" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SELF
// SELF:      @schedule compute 16.000 16.000 +0.0%
// SELF-NEXT: @schedule comm 148.000 132.000 +12.1%
// SELF-NEXT: @schedule exposed comm 132.000 132.000 +0.0%
// SELF-NEXT: @schedule makespan 148.000 148.000 +0.0%

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

func.func @no_comm(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %m = dist.matmul %x, %y : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32> loc(fused<"dist-matmul-grad-overlap">["split.mlir":7:3])
  return %m : tensor<2x2xf32>
}
