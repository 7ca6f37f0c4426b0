// RUN: dist-opt %s --dist-to-llvm -split-input-file -verify-diagnostics
// Without -verify-diagnostics the error fails the run: no error exits 0.
// RUN: not dist-opt %s --dist-to-llvm -split-input-file -o /dev/null

// A #dist.tensor is a tensor's distribution, not a memref memory space:
// refused at the op that holds it (upstream's LLVM conversion would report
// it without a location and leave the op unconverted).
#mesh = #dist.mesh<shape = [2]>
func.func @main() {
  // expected-error @+1 {{'memref.alloc' op result #0 has the type 'memref<4xf32, #dist.tensor<#dist.mesh<shape = [2]>, [0]>>', whose memory space #dist.tensor<#dist.mesh<shape = [2]>, [0]> has no LLVM address space (an integer): a dist distribution describes a tensor, not a memref}}
  %m = memref.alloc() : memref<4xf32, #dist.tensor<#mesh, [0]>>
  return
}

// -----

// In a signature.
#mesh = #dist.mesh<shape = [2]>
// expected-error @+1 {{'func.func' op its signature has the type 'memref<4xf32, #dist.tensor<#dist.mesh<shape = [2]>, [0]>>'}}
func.func @main(%a: memref<4xf32, #dist.tensor<#mesh, [0]>>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<4xf32, #dist.tensor<#mesh, [0]>>
  return %v : f32
}

// -----

// Any memory space other than an integer, nested in another type too.
// expected-error @+1 {{'func.func' op its signature has the type 'memref<2xf32, "shared">', whose memory space "shared" has no LLVM address space (an integer)}}
func.func private @ext(tuple<i32, memref<2xf32, "shared">>)
func.func @main() {
  return
}
