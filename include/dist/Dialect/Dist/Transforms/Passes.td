//===- Passes.td - dist passes -----------------------------*- tablegen -*-===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_PASSES_TD
#define DIST_DIALECT_DIST_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

// Constants of the shared cost model (dist/Analysis/CostModel.h), repeated
// by every pass that estimates time so that they read the same everywhere.
defvar CostModelOptions = [
  Option<"peakTflops", "peak-tflops", "double", "100.0",
         "Peak compute throughput of one process, in TFLOP/s">,
  Option<"linkLatencyUs", "link-latency-us", "double", "10.0",
         "Fixed cost of one collective, in microseconds">,
  Option<"linkBandwidthGBps", "link-bandwidth-gbps", "double", "100.0",
         "Link bandwidth per process, in GB/s">,
];

def DistMatmulGradOverlap
    : Pass<"dist-matmul-grad-overlap", "::mlir::func::FuncOp"> {
  let summary = "Split matmul gradients so the tensor-parallel allreduce "
                "overlaps the weight-gradient matmul";
  let description = [{
    In the backward of a column-parallel linear, the input gradient of
    `dist.matmul_grad` is summed over the model-parallel axis by a
    `dist.allreduce`. This pass splits the matmul_grad so that the allreduce
    can run while the weight gradient is computed:

    ```mlir
    %dx, %dy = dist.matmul_grad %x, %y, %dout : ...
    ...
    %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum : ...
    ```

    becomes, at the position of the matmul_grad,

    ```mlir
    %dx = dist.matmul %dout, %y transpose_y : ...
    %r = dist.allreduce %dx on #mesh axes = [1] reduce = sum stream = mp : ...
    %x2 = tensor.collapse_shape %x [[0, 1], [2]] : ...      // rank > 2 only
    %d2 = tensor.collapse_shape %dout [[0, 1], [2]] : ...
    %dy = dist.matmul %x2, %d2 transpose_x : ...
    ```

    The allreduce comes right after the dX matmul and before the dY matmul,
    and is marked for the model-parallel stream (`stream = mp`) so that it
    overlaps with the dY matmul. Other ops keep their order; every new value
    keeps the distribution encoding of the value it replaces; new ops get a
    `FusedLoc` tagged `dist-matmul-grad-overlap`.

    A matmul_grad is left alone (with a remark under `remarks=true`) when:
    a transpose flag is set; its x_grad is not reduced by exactly one
    `dist.allreduce` with `reduce = sum` in the same block; x_grad is also
    read before that allreduce (those reads keep seeing the unreduced value);
    `y` is not 2-D; the leading dims of `x` and `out_grad` differ; a folded
    dim other than the outermost is split over the mesh; an op between the
    matmul_grad and the allreduce reads the result of an op that reads y_grad
    without reading y_grad itself (Paddle's hazard rule); or the optional
    cost gate says the dY matmul hides too little of the allreduce.

    The rewrite is available without the pass through
    `populateMatmulGradOverlapPatterns`.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark for every matmul_grad that is not split, saying why">,
    Option<"minOverlapRatio", "min-overlap-ratio", "double", "0.0",
           "Split only when the estimated dY matmul time is at least this "
           "fraction of the estimated allreduce time (0 disables the gate)">,
  ] # CostModelOptions;
  let statistics = [
    Statistic<"numSplit", "num-split", "Number of matmul_grads split">,
    Statistic<"numSkipped", "num-skipped",
              "Number of matmul_grads left as they were">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

#endif // DIST_DIALECT_DIST_TRANSFORMS_PASSES_TD
