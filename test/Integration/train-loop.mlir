// REQUIRES: mpich
// A training loop as an scf.for: each iteration feeds the step a slice of
// the data that depends on the step and on the process, and carries the
// step's new parameter (a call result) into the next iteration. The
// lowering bufferizes the loop that yields those buffers
// (allow-return-allocs-from-loops). Step k's loss is the dp-allreduced sum
// of data[4k, 4k + 4); the parameter is halved each step.
// RUN: dist-run -n 2 %s --pass-flags=--dist-auto-parallel | FileCheck %s
// CHECK-LABEL: == rank 0 ==
// CHECK: data =
// CHECK-NEXT: [10]
// CHECK: data =
// CHECK-NEXT: [26]
// CHECK: data =
// CHECK-NEXT: [42]
// CHECK: sizes = [4]
// CHECK-NEXT: [0.125,  0.25,  0.375,  0.5]
// CHECK-LABEL: == rank 1 ==
// CHECK: data =
// CHECK-NEXT: [10]
// CHECK: data =
// CHECK-NEXT: [26]
// CHECK: data =
// CHECK-NEXT: [42]
// CHECK: sizes = [4]
// CHECK-NEXT: [0.125,  0.25,  0.375,  0.5]

#mesh = #dist.mesh<shape = [2], names = ["dp"]>
func.func @step(%w: tensor<4xf32, #dist.tensor<#mesh, [-1]>>, %x: tensor<2xf32, #dist.tensor<#mesh, [0]>>) -> (tensor<f32, #dist.tensor<#mesh, []>>, tensor<4xf32, #dist.tensor<#mesh, [-1]>>) attributes {dist.complete} {
  %e = tensor.empty() : tensor<f32>
  %c0 = arith.constant 0.0 : f32
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<2xf32, #dist.tensor<#mesh, [0]>>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %sc = dist.constraint %s : tensor<f32> -> tensor<f32, #dist.tensor<#mesh, []>>
  %w2 = dist.scale %w by 5.0e-01 : tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  return %sc, %w2 : tensor<f32, #dist.tensor<#mesh, []>>, tensor<4xf32, #dist.tensor<#mesh, [-1]>>
}
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %c = dist.process_coord #mesh axis = 0
  %w0 = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  %data = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]> : tensor<12xf32>
  %lb = arith.constant 0 : index
  %ub = arith.constant 3 : index
  %one = arith.constant 1 : index
  %four = arith.constant 4 : index
  %two = arith.constant 2 : index
  %r = scf.for %k = %lb to %ub step %one iter_args(%w = %w0) -> (tensor<4xf32, #dist.tensor<#mesh, [-1]>>) {
    %o1 = arith.muli %k, %four : index
    %o2 = arith.muli %c, %two : index
    %o = arith.addi %o1, %o2 : index
    %xs = tensor.extract_slice %data[%o] [2] [1] : tensor<12xf32> to tensor<2xf32>
    %x = tensor.cast %xs : tensor<2xf32> to tensor<2xf32, #dist.tensor<#mesh, [0]>>
    %l, %wn = func.call @step(%w, %x) : (tensor<4xf32, #dist.tensor<#mesh, [-1]>>, tensor<2xf32, #dist.tensor<#mesh, [0]>>) -> (tensor<f32, #dist.tensor<#mesh, []>>, tensor<4xf32, #dist.tensor<#mesh, [-1]>>)
    %lp = tensor.cast %l : tensor<f32, #dist.tensor<#mesh, []>> to tensor<f32>
    %buf = bufferization.to_buffer %lp : tensor<f32> to memref<f32>
    %u = memref.cast %buf : memref<f32> to memref<*xf32>
    func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    scf.yield %wn : tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  }
  %rp = tensor.cast %r : tensor<4xf32, #dist.tensor<#mesh, [-1]>> to tensor<4xf32>
  %buf = bufferization.to_buffer %rp : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %buf : memref<4xf32> to memref<*xf32>
  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
