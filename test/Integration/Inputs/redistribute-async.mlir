// The redistributions issued on a stream, completed by their waits after
// other work: the global tensor is [[1, 2, 3, 4], [11, 12, 13, 14]], its
// columns split over 2 processes.
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func private @printMemrefF32(memref<*xf32>)
func.func @print(%t: tensor<?x?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?x?xf32> to memref<?x?xf32>
  %u = memref.cast %m : memref<?x?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
func.func @main() {
  %c = dist.process_coord #mesh axis = 0
  %ci = arith.index_cast %c : index to i32
  %cf = arith.sitofp %ci : i32 to f32
  %two = arith.constant 2.0 : f32
  %off = arith.mulf %cf, %two : f32
  %offs = tensor.splat %off : tensor<2x2xf32>
  %base = arith.constant dense<[[1.0, 2.0], [11.0, 12.0]]> : tensor<2x2xf32>
  %local = arith.addf %base, %offs : tensor<2x2xf32>
  %x = tensor.cast %local : tensor<2x2xf32> to tensor<2x2xf32, #dist.tensor<#mesh, [-1, 0]>>
  %one = arith.constant 1.0 : f32
  %cp1 = arith.addf %cf, %one : f32
  %p = tensor.splat %cp1 : tensor<2x4xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>

  %fg = dist.all_gather %x on #mesh axes = [0] stream = mp : tensor<2x2xf32, #dist.tensor<#mesh, [-1, 0]>> -> !dist.future<tensor<2x4xf32, #dist.tensor<#mesh, [-1, -1]>>>
  %fs = dist.reduce_scatter %p on #mesh axes = [0] reduce = sum stream = mp : tensor<2x4xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> !dist.future<tensor<1x4xf32, #dist.tensor<#mesh, [0, -1]>>>
  %fa = dist.all_to_all %x on #mesh axes = [0] stream = mp : tensor<2x2xf32, #dist.tensor<#mesh, [-1, 0]>> -> !dist.future<tensor<1x4xf32, #dist.tensor<#mesh, [0, -1]>>>
  // Work while they are in flight.
  %busy = arith.addf %local, %local : tensor<2x2xf32>
  %g = dist.wait %fg : !dist.future<tensor<2x4xf32, #dist.tensor<#mesh, [-1, -1]>>>
  %s = dist.wait %fs : !dist.future<tensor<1x4xf32, #dist.tensor<#mesh, [0, -1]>>>
  %a = dist.wait %fa : !dist.future<tensor<1x4xf32, #dist.tensor<#mesh, [0, -1]>>>

  %gp = tensor.cast %g : tensor<2x4xf32, #dist.tensor<#mesh, [-1, -1]>> to tensor<?x?xf32>
  %sp = tensor.cast %s : tensor<1x4xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<?x?xf32>
  %ap = tensor.cast %a : tensor<1x4xf32, #dist.tensor<#mesh, [0, -1]>> to tensor<?x?xf32>
  %bp = tensor.cast %busy : tensor<2x2xf32> to tensor<?x?xf32>
  call @print(%gp) : (tensor<?x?xf32>) -> ()
  call @print(%sp) : (tensor<?x?xf32>) -> ()
  call @print(%ap) : (tensor<?x?xf32>) -> ()
  call @print(%bp) : (tensor<?x?xf32>) -> ()
  return
}
