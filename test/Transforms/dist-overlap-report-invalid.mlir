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
// PEAK: error: cost model option peak-tflops=0.000000e+00 must be positive and finite
// LAT: error: cost model option link-latency-us=nan must be non-negative and finite
// BW: error: cost model option link-bandwidth-gbps={{.*}} must be positive and finite
// INF: error: cost model option peak-tflops=INF must be positive and finite
// RATIO: error: min-overlap-ratio=-5.000000e-01 must be non-negative and finite
// FORMAT: error: unknown overlap report format 'xml'; expected table or json

func.func @f() {
  return
}
