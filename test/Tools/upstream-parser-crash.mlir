// Input MLIR 22's own op parsers crash on instead of diagnosing (upstream
// mlir-opt segfaults on each part): linalg.transpose, linalg.reduce and
// linalg.broadcast with a malformed dimension list (a null attribute is
// handed on after the error); linalg.generic with an integer where an
// iterator type belongs is upstream-parser-crash-generic.mlir. These are
// every class a 10-minute run of dist-fuzz-parse with the guard off found
// (docs/reliability.md). dist's tools parse inside a crash guard
// (ParserCrashGuard.h): the crash is reported as an error at the place the
// parser crashed, naming the upstream op, and the tool fails, on every route
// that parses: dist-opt (one file, split, with passes), dist-reduce, the C
// API (test/CAPI/dist-capi.c) and Python. dist-lsp-server: lsp-refused.test.
// RUN: not dist-opt %s -split-input-file 2>&1 | FileCheck %s
// RUN: not dist-opt %s -split-input-file --dist-auto-parallel 2>&1 | FileCheck %s
// RUN: not dist-reduce %s --test=true -o %t.reduced 2>&1 | FileCheck %s --check-prefix=FIRST
// RUN: %python %S/Inputs/parse_all.py %s | FileCheck %s --check-prefix=PY
// Without the guard the crash is upstream's (a signal; under ASan, its
// report).
// RUN: (env DIST_PARSER_CRASH_GUARD=0 dist-opt %s -o /dev/null 2>&1 || true) | FileCheck %s --check-prefix=UNGUARDED
// UNGUARDED: {{Stack dump:|ERROR: AddressSanitizer: SEGV}}

// The parser's own error comes first, then the crash, just before it.
// CHECK: :[[@LINE+7]]:91: error: expected '['
// CHECK: :[[@LINE+6]]:90: error: MLIR's parser of 'linalg.transpose' crashed here
// FIRST: :[[@LINE+5]]:90: error: MLIR's parser of 'linalg.transpose' crashed here
// PY: part 0: refused
// PY-NEXT: <string>:[[@LINE+3]]:91: error: expected '['
// PY-NEXT: <string>:[[@LINE+2]]:90: error: MLIR's parser of 'linalg.transpose' crashed here
func.func @transpose(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0 = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = 5
  return %0 : tensor<3x2xf32>
}

// -----

// CHECK: :[[@LINE+5]]:87: error: custom op 'linalg.reduce' expected integer value
// CHECK: :[[@LINE+4]]:84: error: MLIR's parser of 'linalg.reduce' crashed here
// PY: part 1: refused
// PY: <string>:[[@LINE+2]]:84: error: MLIR's parser of 'linalg.reduce' crashed here
func.func @reduce(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = linalg.reduce ins(%a : tensor<2x3xf32>) outs(%b : tensor<2xf32>) dimensions = [x]
    (%x: f32, %y: f32) {
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
  return %0 : tensor<2xf32>
}

// -----

// CHECK: :[[@LINE+4]]:87: error: MLIR's parser of 'linalg.broadcast' crashed here
// PY: part 2: refused
// PY: <string>:[[@LINE+2]]:87: error: MLIR's parser of 'linalg.broadcast' crashed here
func.func @broadcast(%a: tensor<2xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = linalg.broadcast ins(%a : tensor<2xf32>) outs(%b : tensor<2x3xf32>) dimensions = "a"
  return %0 : tensor<2x3xf32>
}

// -----

// A part after a crash is read as usual: the guard leaves the parser whole.
// CHECK: :[[@LINE+5]]:8: error: 'linalg.generic' op attribute 'iterator_types' failed to satisfy constraint: Iterator type should be an enum.
// CHECK-NOT: crashed
// PY: part 3: refused
// PY-NEXT: <string>:[[@LINE+2]]:8: error: 'linalg.generic' op attribute 'iterator_types' failed to satisfy constraint
func.func @generic_form(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = "linalg.generic"(%a, %a) <{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [7, #linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%x: f32, %y: f32):
    "linalg.yield"(%x) : (f32) -> ()
  }) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// PY: part 4: parsed
func.func @fine() {
  return
}
