// MLIR 22's linalg.generic parser crashes on an integer where an iterator
// type belongs: dist's tools report it at the place (ParserCrashGuard.h).
// The crash is a huge allocation from garbage, which the plain build turns
// into an exception that the guard catches; under ASan, the allocator
// reports it and ends the process before anything can recover, so the
// sanitizer build does not run this file (upstream-parser-crash.mlir covers
// the crashes that are signals there too).
// UNSUPPORTED: sanitizers
// RUN: not dist-opt %s 2>&1 | FileCheck %s
// RUN: not dist-reduce %s --test=true -o %t.reduced 2>&1 | FileCheck %s --check-prefix=FIRST
// RUN: %python %S/Inputs/parse_all.py %s | FileCheck %s --check-prefix=PY

// CHECK: :[[@LINE+8]]:95: error: MLIR's parser of 'linalg.generic' crashed here: the input is malformed, and this is a bug in MLIR 22 itself (upstream mlir-opt crashes too), not in dist; nothing was read
// CHECK-NEXT: iterator_types = [4294967296, "parallel"]
// CHECK-NEXT: {{^ +}}^{{$}}
// FIRST: :[[@LINE+5]]:95: error: MLIR's parser of 'linalg.generic' crashed here
// PY: part 0: refused
// PY-NEXT: <string>:[[@LINE+3]]:95: error: MLIR's parser of 'linalg.generic' crashed here
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @generic(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = [4294967296, "parallel"]} ins(%a : tensor<2x2xf32>) outs(%a : tensor<2x2xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

