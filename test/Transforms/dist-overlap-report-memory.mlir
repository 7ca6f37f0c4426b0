// The memory-bound ops (those that are not products) cost the bytes they
// read and write over the memory bandwidth, a constant or the file's
// "memory-gbps"; without either they cost nothing, as before.
// RUN: dist-opt %s --dist-overlap-report="memory-bandwidth-gbps=0.001" -o /dev/null 2>&1 | FileCheck %s
// RUN: sed 's/"allreduce": \[/"memory-gbps": 0.002, "allreduce": [/' %S/Inputs/cost-model.json > %t.json
// RUN: dist-opt %s --dist-overlap-report="cost-model=%t.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FILE
// RUN: dist-opt %s --dist-overlap-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: dist-opt %s --dist-overlap-report="cost-model=%S/Inputs/cost-model.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE

// At 1 byte/us: the sum reads a and b and writes its result, not its
// init (3 x 64 B); the fill writes 16 B; the row sum reads the 64 B sum and
// its accumulator and writes 16 B; the scale reads and writes 64 B; the
// lookup reads the ids (32 B) and the rows it gathers, not the table, and
// writes them (2 x 64 B). 192 + 16 + 96 + 128 + 160 = 592.
// CHECK: @memory 592.000 0.000 0.000 - 592.000
// FILE: @memory 296.000 0.000 0.000 - 296.000
// NONE: @memory 0.000 0.000 0.000 - 0.000
// Packing copies: 7 + 1 floats into a 2x5 buffer (32 + 40 B) and back
// (40 + 32 B).
// CHECK: @packing 144.000 0.000 0.000 - 144.000
// NONE: @packing 0.000 0.000 0.000 - 0.000

// The estimated schedule has a compute slice per priced op, in order.
// RUN: dist-opt %s --dist-overlap-report="memory-bandwidth-gbps=0.001 trace-file=%t.trace.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=TRACE < %t.trace.json
// TRACE: "name":"linalg.generic","cat":"compute",{{.*}}"dur":192.000
// TRACE-SAME: "name":"linalg.fill","cat":"compute",{{.*}}"dur":16.000
// TRACE-SAME: "name":"linalg.generic","cat":"compute",{{.*}}"dur":96.000
// TRACE-SAME: "name":"dist.scale","cat":"compute",{{.*}}"dur":128.000
// TRACE-SAME: "name":"dist.embedding","cat":"compute",{{.*}}"dur":160.000
// Without a bandwidth they are not compute the model knows: no slices.
// RUN: dist-opt %s --dist-overlap-report="trace-file=%t.none.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=NOSLICE < %t.none.json
// NOSLICE-NOT: "cat":"compute"

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @memory(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %ids: tensor<4xi64>, %table: tensor<16x4xf32>)
    -> (tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %r0 = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%r0 : tensor<4xf32>) -> tensor<4xf32>
  %rows = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sum : tensor<4x4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %scaled = dist.scale %sum by 2.0 : tensor<4x4xf32>
  %rows_of = dist.embedding %ids, %table : tensor<4xi64>, tensor<16x4xf32> -> tensor<4x4xf32>
  return %scaled, %rows, %sum, %rows_of : tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

func.func @packing(%a: tensor<7xf32>, %b: tensor<f32>) -> (tensor<7xf32>, tensor<f32>) {
  %buffer = dist.pack %a, %b : tensor<7xf32>, tensor<f32> -> tensor<2x5xf32>
  %x, %y = dist.unpack %buffer : tensor<2x5xf32> -> tensor<7xf32>, tensor<f32>
  return %x, %y : tensor<7xf32>, tensor<f32>
}
