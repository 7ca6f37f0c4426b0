// An allreduce in flight while a 256 x 256 x 256 product runs: with
// DIST_RUNTIME_PROGRESS=poll the product is cut into row blocks, MPI
// progressing between them. Each process contributes its coordinate + 1 to
// the allreduce (3 everywhere) and multiplies x (row i: i + 1) by w (all
// 0.5): row i of the product is 128 (i + 1). Both print the allreduce's
// first element and the product's rows 0, 17 and 255 at column 3.
#mesh = #dist.mesh<shape = [2], names = ["tp"]>
#row = affine_map<(d0, d1) -> (d0, d1)>
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c17 = arith.constant 17 : index
  %c255 = arith.constant 255 : index
  %c = dist.process_coord #mesh axis = 0
  %ci = arith.index_cast %c : index to i32
  %cf = arith.sitofp %ci : i32 to f32
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %v = arith.addf %cf, %one : f32
  %g = tensor.splat %v : tensor<65536xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
  %e = tensor.empty() : tensor<256x256xf32>
  %x = linalg.generic {indexing_maps = [#row], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<256x256xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %if = arith.sitofp %ii : i32 to f32
    %r = arith.addf %if, %one : f32
    linalg.yield %r : f32
  } -> tensor<256x256xf32>
  %w = tensor.splat %half : tensor<256x256xf32>
  %f = dist.allreduce %g on #mesh axes = [0] reduce = sum stream = mp : tensor<65536xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> !dist.future<tensor<65536xf32, #dist.tensor<#mesh, [-1]>>>
  %y = dist.matmul %x, %w : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  %r = dist.wait %f : !dist.future<tensor<65536xf32, #dist.tensor<#mesh, [-1]>>>
  %rp = tensor.cast %r : tensor<65536xf32, #dist.tensor<#mesh, [-1]>> to tensor<65536xf32>
  %y0 = tensor.extract %y[%c0, %c3] : tensor<256x256xf32>
  %y1 = tensor.extract %y[%c17, %c3] : tensor<256x256xf32>
  %y2 = tensor.extract %y[%c255, %c3] : tensor<256x256xf32>
  %a = tensor.extract %rp[%c0] : tensor<65536xf32>
  %out = tensor.from_elements %a, %y0, %y1, %y2 : tensor<4xf32>
  %m = bufferization.to_buffer %out : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
