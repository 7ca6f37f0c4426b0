// --dist-pass-wall-time prints one line per top-level pass, a nested
// pipeline as one line under its textual name without options, then the
// total; the IR is what the pipeline alone produces.
// RUN: dist-opt %s --dist-auto-parallel --dist-pass-wall-time -o %t 2>&1 | FileCheck %s --check-prefix=TIME
// RUN: dist-opt %s --dist-auto-parallel -o %t.ref
// RUN: diff %t %t.ref
// Without the flag nothing is printed.
// RUN: dist-opt %s --dist-auto-parallel -o /dev/null 2>&1 | count 0
// A failing pass is timed too, and dist-opt still fails.
// RUN: not dist-opt %s --dist-parallel-embedding=require-row-split=true --dist-pass-wall-time -o /dev/null 2>&1 | FileCheck %s --check-prefix=FAIL
// The help text documents the flag.
// RUN: dist-opt --help | FileCheck %s --check-prefix=HELP

// TIME:      dist-pass-wall-time: {{[0-9]+\.[0-9]+}} s  dist-complete{{$}}
// TIME-NEXT: dist-pass-wall-time: {{[0-9]+\.[0-9]+}} s  func.func(dist-lower-reshard){{$}}
// TIME-NEXT: dist-pass-wall-time: {{[0-9]+\.[0-9]+}} s  dist-verify-distributions{{$}}
// TIME-NEXT: dist-pass-wall-time: {{[0-9]+\.[0-9]+}} s  func.func(dist-dropout-seed){{$}}
// TIME-NEXT: dist-pass-wall-time: {{[0-9]+\.[0-9]+}} s  dist-parallel-embedding{{$}}
// TIME-NEXT: dist-pass-wall-time: {{[0-9]+\.[0-9]+}} s  dist-amp-check-finite{{$}}
// TIME-NEXT: dist-pass-wall-time: {{[0-9]+\.[0-9]+}} s  func.func(dist-matmul-grad-overlap,dist-assign-streams){{$}}
// TIME-NEXT: dist-pass-wall-time: {{[0-9]+\.[0-9]+}} s  dist-verify-distributions{{$}}
// TIME-NEXT: dist-pass-wall-time: {{[0-9]+\.[0-9]+}} s  total{{$}}
// TIME-NOT:  dist-pass-wall-time

// FAIL: error:
// FAIL: dist-pass-wall-time: {{[0-9]+\.[0-9]+}} s  dist-parallel-embedding{{$}}
// FAIL-NEXT: dist-pass-wall-time: {{[0-9]+\.[0-9]+}} s  total{{$}}

// HELP: --dist-pass-wall-time {{.*}}Print the wall time of each top-level pass

#mesh = #dist.mesh<shape = [1, 2], names = ["dp", "mp"]>
func.func @step(%ids: tensor<4x8xi64, #dist.tensor<#mesh, [0, -1]>>,
                %w: tensor<64x16xf32, #dist.tensor<#mesh, [-1, -1]>> {dist.param = "w"})
    -> tensor<4x8x16xf32, #dist.tensor<#mesh, [0, -1, -1]>> {
  %e = dist.embedding %ids, %w : tensor<4x8xi64, #dist.tensor<#mesh, [0, -1]>>, tensor<64x16xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<4x8x16xf32, #dist.tensor<#mesh, [0, -1, -1]>>
  return %e : tensor<4x8x16xf32, #dist.tensor<#mesh, [0, -1, -1]>>
}
