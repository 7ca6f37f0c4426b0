// Cost model options that describe no machine are errors, not INF or NaN
// in the report.
// RUN: not dist-opt %s --dist-overlap-report="peak-tflops=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PEAK
// RUN: not dist-opt %s --dist-overlap-report="link-latency-us=nan" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LAT
// RUN: not dist-opt %s --dist-overlap-report="link-bandwidth-gbps=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BW
// RUN: not dist-opt %s --dist-overlap-report="peak-tflops=inf" -o /dev/null 2>&1 | FileCheck %s --check-prefix=INF
// RUN: not dist-opt %s --dist-matmul-grad-overlap="min-overlap-ratio=-0.5" -o /dev/null 2>&1 | FileCheck %s --check-prefix=RATIO
// RUN: not dist-opt %s --dist-matmul-grad-overlap="link-bandwidth-gbps=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BW
// RUN: not dist-opt %s --dist-auto-parallel="peak-tflops=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PEAK
// RUN: not dist-opt %s --dist-overlap-report="format=xml" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not dist-opt %s --dist-overlap-report="memory-bandwidth-gbps=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MEM
// RUN: not dist-opt %s --dist-auto-parallel="memory-bandwidth-gbps=nan" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MEM
// RUN: not dist-opt %s --dist-complete="memory-bandwidth-gbps=inf" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MEM
// PEAK: error: cost model option peak-tflops=0.000000e+00 must be positive and finite
// LAT: error: cost model option link-latency-us=nan must be non-negative and finite
// BW: error: cost model option link-bandwidth-gbps={{.*}} must be positive and finite
// INF: error: cost model option peak-tflops=INF must be positive and finite
// RATIO: error: min-overlap-ratio=-5.000000e-01 must be non-negative and finite
// FORMAT: error: unknown overlap report format 'xml'; expected table or json
// MEM: error: cost model option memory-bandwidth-gbps={{.*}} must be non-negative and finite (0: not priced)

// A cost-model file is checked as it is read; the error points at the file.
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.none.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: none.json:0:0: error: cannot read the cost-model file: No such file or directory
// RUN: printf '{"dist-cost-model": 1,' > %t.trunc.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.trunc.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC: trunc.json:0:0: error: invalid cost-model file: [1:22, byte=22]: Expected object key
// RUN: printf '[1]' > %t.array.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.array.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ARRAY
// ARRAY: error: invalid cost-model file: the file must hold a JSON object
// RUN: sed 's/"dist-cost-model": 1/"dist-cost-model": 2/' %S/Inputs/cost-model.json > %t.v2.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.v2.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=VERSION
// VERSION: error: invalid cost-model file: 'dist-cost-model' must be 1 (the format this dist-opt reads)
// RUN: sed 's/"broadcast"/"brodcast"/' %S/Inputs/cost-model.json > %t.typo.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.typo.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TYPO
// TYPO: error: invalid cost-model file: the object: unknown key 'brodcast'
// RUN: sed 's/"matmul-grad": 2e-6/"matmul-grad": 0/' %S/Inputs/cost-model.json > %t.rate.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.rate.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=RATE
// RATE: error: invalid cost-model file: matmul-tflops: 'matmul-grad' is 0.000000e+00; it must be positive and finite
// RUN: sed 's/, "matmul-grad": 2e-6//' %S/Inputs/cost-model.json > %t.norate.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.norate.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NORATE
// NORATE: error: invalid cost-model file: matmul-tflops: 'matmul-grad' must be a number
// RUN: sed 's/"latency-us": 10,/"latency-us": -1,/' %S/Inputs/cost-model.json > %t.latency.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.latency.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LATENCY
// LATENCY: error: invalid cost-model file: allreduce[1]: 'latency-us' must be a non-negative finite number
// RUN: sed 's/"group-size": 16/"group-size": 1/' %S/Inputs/cost-model.json > %t.group.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.group.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GROUP
// GROUP: error: invalid cost-model file: allreduce[0]: 'group-size' must be an integer of at least 2
// RUN: sed 's/"group-size": 16/"group-size": 2/' %S/Inputs/cost-model.json > %t.twice.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.twice.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: invalid cost-model file: allreduce[1]: group size 2 is measured twice
// RUN: sed 's/"broadcast": \[.*\]/"broadcast": []/' %S/Inputs/cost-model.json > %t.empty.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.empty.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: invalid cost-model file: 'broadcast' must be a non-empty array of measurements
// The redistributions' links are optional (a file from before they were
// measured), but present, they are checked as the others are.
// RUN: sed 's/"broadcast": \[/"all-to-all": [], "broadcast": [/' %S/Inputs/cost-model.json > %t.a2a.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.a2a.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=A2A
// A2A: error: invalid cost-model file: 'all-to-all' must be a non-empty array of measurements
// RUN: sed 's/"broadcast": \[/"all-gather": [{"group-size": 2, "latency-us": 1, "bandwidth-gbps": 0}], "broadcast": [/' %S/Inputs/cost-model.json > %t.gather.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.gather.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GATHER
// GATHER: error: invalid cost-model file: all-gather[0]: 'bandwidth-gbps' is 0.000000e+00; it must be positive and finite
// RUN: sed 's/"broadcast": \[.*\]/"broadcast": [3]/' %S/Inputs/cost-model.json > %t.entry.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.entry.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: error: invalid cost-model file: broadcast[0] must be an object
// RUN: sed 's/"latency-us": 5,/"latency-us": 5, "jitter-us": 1,/' %S/Inputs/cost-model.json > %t.key.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.key.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=KEY
// KEY: error: invalid cost-model file: broadcast[0]: unknown key 'jitter-us'
// The memory rate is optional (a file from before it was measured), but
// present, it is a positive number.
// RUN: sed 's/"allreduce": \[/"memory-gbps": 0, "allreduce": [/' %S/Inputs/cost-model.json > %t.memory.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.memory.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MEMFILE
// MEMFILE: error: invalid cost-model file: the object: 'memory-gbps' is 0.000000e+00; it must be positive and finite
// RUN: sed 's/"allreduce": \[/"memory-gbps": "fast", "allreduce": [/' %S/Inputs/cost-model.json > %t.memtext.json
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%t.memtext.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MEMTEXT
// MEMTEXT: error: invalid cost-model file: the object: 'memory-gbps' must be a number
// The file replaces the constants: both is an error, in every pass that
// estimates (once, not per function).
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%S/Inputs/cost-model.json peak-tflops=5" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not dist-opt %s --dist-matmul-grad-overlap="cost-model=%S/Inputs/cost-model.json peak-tflops=5" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOTH --implicit-check-not=error
// RUN: not dist-opt %s --dist-auto-parallel="cost-model=%S/Inputs/cost-model.json peak-tflops=5" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOTH --implicit-check-not=error
// BOTH: error: cost model option peak-tflops=5.000000e+00 and cost-model={{.*}}cost-model.json both given; the file replaces the constants
// RUN: not dist-opt %s --dist-overlap-report="cost-model=%S/Inputs/cost-model.json memory-bandwidth-gbps=10" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOTHMEM
// BOTHMEM: error: cost model option memory-bandwidth-gbps=1.000000e+01 and cost-model={{.*}}cost-model.json both given; the file replaces the constants

func.func @f() {
  return
}

func.func @g() {
  return
}
