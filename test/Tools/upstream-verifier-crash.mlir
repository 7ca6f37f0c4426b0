// Input MLIR 22's own verifiers crash on instead of diagnosing: the
// expand_shape and collapse_shape verifiers (tensor and memref) read the
// first dim of every reassociation group. dist's tools refuse an empty group
// at the op before verifying (dist::verifyInput), on every route that
// parses: dist-opt (text and bytecode, with or without passes), the C API
// and Python. Found by mutfuzz on examples/gpt_layer.mlir.
// RUN: not dist-opt %s -split-input-file 2>&1 | FileCheck %s
// RUN: not dist-opt %s -split-input-file --dist-auto-parallel 2>&1 | FileCheck %s
// RUN: dist-opt %s --mlir-very-unsafe-disable-verifier-on-parsing --emit-bytecode -o %t.bc 2>&1 | FileCheck %s --allow-empty --check-prefix=NONE
// RUN: not dist-opt %t.bc 2>&1 | FileCheck %s --check-prefix=FIRST
// NONE-NOT: error
// RUN: not dist-reduce %s --test=true -o %t.reduced 2>&1 | FileCheck %s --check-prefix=FIRST
// RUN: %python %S/Inputs/parse_all.py %s | FileCheck %s --check-prefix=PY

// CHECK: :[[@LINE+5]]:8: error: 'tensor.expand_shape' op reassociation group #0 is empty: every group must name at least one dim
// FIRST: error: 'tensor.expand_shape' op reassociation group #0 is empty
// PY: part 0: refused
// PY-NEXT: <string>:[[@LINE+2]]:8: error: 'tensor.expand_shape' op reassociation group #0 is empty: every group must name at least one dim
func.func @expand(%x: tensor<4x8xf32>) -> tensor<4x2x4xf32> {
  %e = tensor.expand_shape %x [[], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  return %e : tensor<4x2x4xf32>
}

// -----

// CHECK: :[[@LINE+4]]:8: error: 'tensor.collapse_shape' op reassociation group #1 is empty
// PY: part 1: refused
// PY-NEXT: <string>:[[@LINE+2]]:8: error: 'tensor.collapse_shape' op reassociation group #1 is empty
func.func @collapse(%x: tensor<4x2x4xf32>) -> tensor<4x8xf32> {
  %c = tensor.collapse_shape %x [[0], [], [1, 2]] : tensor<4x2x4xf32> into tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// CHECK: :[[@LINE+4]]:8: error: 'memref.collapse_shape' op reassociation group #0 is empty
// PY: part 2: refused
// PY-NEXT: <string>:[[@LINE+2]]:8: error: 'memref.collapse_shape' op reassociation group #0 is empty
func.func @memref(%x: memref<4x2x4xf32>) -> memref<32xf32> {
  %c = memref.collapse_shape %x [[], [0, 1, 2]] : memref<4x2x4xf32> into memref<32xf32>
  return %c : memref<32xf32>
}

// PY-NOT: parsed
