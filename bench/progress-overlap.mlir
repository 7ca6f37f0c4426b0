// A 4 MiB allreduce in flight while a 1024 x 1024 x 1024 product runs: how
// much of it progress hides (docs/benchmarks.md, "Progress on an emulated
// cluster"). Run it traced, with and without polling:
//   DIST_RUNTIME_PROGRESS=poll dist-run -n 2 [--emulated-cluster] \
//       --trace t.json bench/progress-overlap.mlir
// and read the compute between the issue and the wait, and the wait.
#mesh = #dist.mesh<shape = [2], names = ["tp"]>
func.func @main() {
  %one = arith.constant 1.0 : f32
  %g = tensor.splat %one : tensor<1048576xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
  %x = tensor.splat %one : tensor<1024x1024xf32>
  %w = tensor.splat %one : tensor<1024x1024xf32>
  %f = dist.allreduce %g on #mesh axes = [0] reduce = sum stream = mp : tensor<1048576xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> !dist.future<tensor<1048576xf32, #dist.tensor<#mesh, [-1]>>>
  %y = dist.matmul %x, %w : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  %r = dist.wait %f : !dist.future<tensor<1048576xf32, #dist.tensor<#mesh, [-1]>>>
  %c = tensor.extract_slice %y[0, 0] [1, 1] [1, 1] : tensor<1024x1024xf32> to tensor<1x1xf32>
  %d = tensor.extract_slice %r[0] [1] [1] : tensor<1048576xf32, #dist.tensor<#mesh, [-1]>> to tensor<1xf32, #dist.tensor<#mesh, [-1]>>
  %p = dist.make_partial %d on #mesh axes = [0] reduce = max : tensor<1xf32, #dist.tensor<#mesh, [-1]>> -> tensor<1xf32, #dist.tensor<#mesh, [-1], partial = [0 : max]>>
  %q = dist.allreduce %p on #mesh axes = [0] reduce = max : tensor<1xf32, #dist.tensor<#mesh, [-1], partial = [0 : max]>> -> tensor<1xf32, #dist.tensor<#mesh, [-1]>>
  return
}
