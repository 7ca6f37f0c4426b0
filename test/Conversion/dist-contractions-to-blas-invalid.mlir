// RUN: dist-opt %s --dist-contractions-to-blas --split-input-file --verify-diagnostics

// The runtime's name taken by a function of another type: an error at the
// contraction, not a call of the wrong function.
func.func private @dist_gemm_f32(memref<?x?xf32>)

func.func @clash(%a: memref<8x4xf32>, %b: memref<4x16xf32>, %c: memref<8x16xf32>) {
  // expected-error @below {{the module defines 'dist_gemm_f32', a name the dist runtime reserves, as something else}}
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  return
}

// -----

// Taken by a global.
memref.global "private" @dist_gemm_f64 : memref<2xf64>

func.func @clash_global(%a: memref<8x4xf64>, %b: memref<4x16xf64>, %c: memref<8x16xf64>) {
  // expected-error @below {{the module defines 'dist_gemm_f64', a name the dist runtime reserves, as something else}}
  linalg.matmul ins(%a, %b : memref<8x4xf64>, memref<4x16xf64>) outs(%c : memref<8x16xf64>)
  return
}
