// The estimate beside a measured trace (Inputs/measured-trace.json, by
// hand). Estimates with 1 flop/us, 10 us latency and 1 byte/us, as in
// dist-overlap-report.mlir: @schedule compute 16, comm 148, exposed 132,
// makespan 148; @no_comm compute 16.
// Measured, per call on the slowest rank: rank 0 calls @schedule twice, for
// 200 us (issue 10 + wait 20 + blocking 40 = 70 exposed) and 100 us (10
// exposed): 150 us and 40 us per call; the allreduce at 700 us is outside
// both calls. Rank 1 calls it once for 250 us with 150 exposed: it is the
// slowest, so compute 250 - 150 = 100, comm and exposed 150, makespan 250.
// @no_comm: rank 1 only, 32 us without communication. @main only calls:
// nothing to compare.
// RUN: dist-opt %s --dist-overlap-report="measured-trace=%S/Inputs/measured-trace.json peak-tflops=0.000001 link-latency-us=10 link-bandwidth-gbps=0.001" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TABLE
// TABLE:      @schedule 16.000 148.000 132.000 10.8% 148.000
// TABLE:      measured in {{.*}}measured-trace.json (per call, slowest rank):
// TABLE-NEXT: function estimate (us) measured (us) error
// TABLE-NEXT: @schedule compute 16.000 100.000 -84.0%
// TABLE-NEXT: @schedule comm 148.000 150.000 -1.3%
// TABLE-NEXT: @schedule exposed comm 132.000 150.000 -12.0%
// TABLE-NEXT: @schedule makespan 148.000 250.000 -40.8%
// TABLE-NEXT: @no_comm compute 16.000 32.000 -50.0%
// TABLE-NEXT: @no_comm comm 0.000 0.000 -
// TABLE-NEXT: @no_comm exposed comm 0.000 0.000 -
// TABLE-NEXT: @no_comm makespan 16.000 32.000 -50.0%
// TABLE-NOT: @main

// RUN: dist-opt %s --dist-overlap-report="format=json measured-trace=%S/Inputs/measured-trace.json peak-tflops=0.000001 link-latency-us=10 link-bandwidth-gbps=0.001" -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// JSON: {"name":"schedule","compute_us":16.000,"comm_us":148.000,"exposed_comm_us":132.000,"makespan_us":148.000,{{.*}}"measured":{"compute_us":100.000,"comm_us":150.000,"exposed_comm_us":150.000,"makespan_us":250.000,"calls":1,"ranks":2},"error_pct":{"compute":-84.0,"comm":-1.3,"exposed_comm":-12.0,"makespan":-40.8}}
// JSON-SAME: {"name":"no_comm",{{.*}}"measured":{"compute_us":32.000,"comm_us":0.000,"exposed_comm_us":0.000,"makespan_us":32.000,"calls":1,"ranks":1},"error_pct":{"compute":-50.0,"comm":null,"exposed_comm":null,"makespan":-50.0}}
// A function the trace did not call has no measurement.
// JSON-SAME: {"name":"not_called","compute_us":16.000,"comm_us":0.000,"exposed_comm_us":0.000,"makespan_us":16.000,"collectives":{},"peak_live_bytes":16,"argument_bytes":32,"state_bytes":0,"unsharded_state_bytes":0}

// Traces that cannot be compared are errors at the file.
// RUN: not dist-opt %s --dist-overlap-report="measured-trace=%t.none.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: none.json:0:0: error: cannot read the measured trace: No such file or directory
// RUN: printf '{"traceEvents": [' > %t.trunc.json
// RUN: not dist-opt %s --dist-overlap-report="measured-trace=%t.trunc.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC: error: invalid measured trace: [1:17, byte=17]: Unexpected EOF
// RUN: printf '{"functions": []}' > %t.report.json
// RUN: not dist-opt %s --dist-overlap-report="measured-trace=%t.report.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTRACE
// NOTRACE: error: invalid measured trace: no 'traceEvents' array (write one with dist-run --trace)
// RUN: printf '{"traceEvents": [{"ph": "X", "name": "compute", "cat": "compute", "ts": 0, "dur": 5, "pid": 0, "tid": 0}]}' > %t.nocalls.json
// RUN: not dist-opt %s --dist-overlap-report="measured-trace=%t.nocalls.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOCALLS
// NOCALLS: error: invalid measured trace: no function calls in the trace (record one with dist-run --trace)
// RUN: printf '{"traceEvents": [{"ph": "X", "name": "f", "cat": "function", "ts": 0, "dur": -5, "pid": 0, "tid": 0}]}' > %t.negative.json
// RUN: not dist-opt %s --dist-overlap-report="measured-trace=%t.negative.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EVENT
// RUN: printf '{"traceEvents": [{"ph": "X", "name": "f", "cat": "function", "ts": 0, "dur": 5, "pid": 0}]}' > %t.notid.json
// RUN: not dist-opt %s --dist-overlap-report="measured-trace=%t.notid.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EVENT
// EVENT: error: invalid measured trace: event 0 lacks a name, category, time, duration, process or thread
// A trace of another format version is refused, not misread.
// RUN: printf '{"dist-trace": 2, "traceEvents": []}' > %t.v2.json
// RUN: not dist-opt %s --dist-overlap-report="measured-trace=%t.v2.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=VERSION
// RUN: printf '{"dist-trace": "1", "traceEvents": []}' > %t.vstr.json
// RUN: not dist-opt %s --dist-overlap-report="measured-trace=%t.vstr.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=VSTR
// VERSION: v2.json:0:0: error: invalid measured trace: trace format version 2; this dist reads version 1
// VSTR: error: invalid measured trace: trace format version "1"; this dist reads version 1

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
  %m = dist.matmul %x, %y : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  return %m : tensor<2x2xf32>
}

func.func @not_called(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %m = dist.matmul %x, %y : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  return %m : tensor<2x2xf32>
}

func.func @main() {
  return
}
