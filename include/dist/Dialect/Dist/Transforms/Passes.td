//===- Passes.td - dist passes -----------------------------*- tablegen -*-===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_PASSES_TD
#define DIST_DIALECT_DIST_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

// Constants of the shared cost model (dist/Analysis/CostModel.h), offered by
// every pass that estimates time, with the model's own defaults, or the file
// of measured costs that replaces them.
defvar CostModelOptions = [
  Option<"peakTflops", "peak-tflops", "double",
         "::mlir::dist::CostModelOptions().peakTflops",
         "Peak compute throughput of one process, in TFLOP/s">,
  Option<"linkLatencyUs", "link-latency-us", "double",
         "::mlir::dist::CostModelOptions().linkLatencyUs",
         "Fixed cost of one collective, in microseconds">,
  Option<"linkBandwidthGBps", "link-bandwidth-gbps", "double",
         "::mlir::dist::CostModelOptions().linkBandwidthGBps",
         "Link bandwidth per process, in GB/s">,
  Option<"memoryBandwidthGBps", "memory-bandwidth-gbps", "double",
         "::mlir::dist::CostModelOptions().memoryBandwidthGBps",
         "Memory bandwidth of one process, in GB/s, at which the ops that "
         "are not products read and write their tensors; 0: they cost "
         "nothing">,
  Option<"costModelFile", "cost-model", "std::string", "\"\"",
         "A cost-model file written by dist-run --calibrate: what this "
         "machine measured, in place of the constants">,
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
    overlaps with the dY matmul. A `dist.reduce_scatter` that sums x_grad
    (sequence parallelism's reduction of a row-parallel dX onto sequence
    shards) is moved the same way. Other ops keep their order; every new value
    keeps the distribution encoding of the value it replaces; new ops get a
    `FusedLoc` tagged `dist-matmul-grad-overlap`.

    A matmul_grad is left alone (with a remark under `remarks=true`) when:
    a transpose flag is set; its x_grad is not reduced by exactly one
    `dist.allreduce` or `dist.reduce_scatter` with `reduce = sum` in the
    same block; x_grad is also read before that collective (those reads keep seeing the unreduced value);
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

def DistParallelEmbedding
    : Pass<"dist-parallel-embedding", "::mlir::ModuleOp"> {
  let summary = "Lower embeddings with row-split (vocab-parallel) tables";
  let description = [{
    Lowers `dist.embedding` and `dist.embedding_grad` whose weight's rows are
    split over mesh axis `a` (columns replicated), as Paddle's row-parallel
    embedding does, with the rank-dependent offset computed in the IR:

    ```mlir
    %c = dist.process_coord #mesh axis = a
    %start = arith.muli %c, %local_rows : index
    ```

    * Forward: `dist.c_embedding(ids, W, start)`, partial (sum) over `a`,
      then `dist.allreduce` (sum) over `a`; when the lookup's one use is a
      `dist.all_slice` along `a` (sequence parallelism taking its block of
      the sequence), the allreduce and the slice are one
      `dist.reduce_scatter`.
    * Backward: `dist.c_identity(out_grad)` over `a`, then
      `dist.c_embedding_grad(ids, W, out_grad, start)`. When the ids' batch
      dim is split over a mesh axis `b` of size > 1, the weight gradient is
      partial over `b`: it is summed over `b` and scaled by `1/size(b)`
      (or, with `use-avg-allreduce`, reduced with `avg` in one op). When the
      declared gradient is itself partial over `b`, it is left partial.
    * Parameter init sync: a *parameter* is a function argument carrying
      `dist.param = "<name>"`. For each parameter used by a lowered forward
      embedding not marked `dist.recompute`, and for each mesh axis of size
      > 1 that does not split it, the startup function broadcasts it from
      group-local root 0 along that axis, once. The startup function is the
      `func.func` marked `dist.startup`; it takes the parameters (arguments
      with `dist.param`) and returns them synchronised (results with the same
      `dist.param`). It is created (as `@startup`), and parameters are added
      to it, when missing.

    Embeddings whose rows are not split are local lookups and stay as they
    are (an error under `require-row-split`); a split of the table's
    columns is local too (each process looks up its columns). Errors, with a
    diagnostic on the op: the ids' batch dim is split over the row axis; the result is split over the row axis; ids and weight on
    different meshes; a dynamic local row count. Since tensor types hold
    local shapes, the global vocabulary is `rows * size(a)` and is always
    divisible by the axis size.
  }];
  let options = [
    Option<"useAvgAllreduce", "use-avg-allreduce", "bool", "false",
           "Average the data-parallel weight gradient with one avg "
           "allreduce instead of Paddle's sum allreduce and scale">,
    Option<"requireRowSplit", "require-row-split", "bool", "false",
           "Reject embeddings whose weight rows are not split instead of "
           "leaving them as local lookups">,
  ];
  let statistics = [
    Statistic<"numForward", "num-forward", "Embeddings lowered">,
    Statistic<"numBackward", "num-backward", "Embedding gradients lowered">,
    Statistic<"numBroadcasts", "num-broadcasts",
              "Parameter init broadcasts added to the startup function">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DistSpecializeRank : Pass<"dist-specialize-rank", "::mlir::ModuleOp"> {
  let summary = "Specialise an SPMD program for one process";
  let description = [{
    Replaces every `dist.process_coord` with this process's coordinate (the
    row-major unravel of its position in the mesh's process-id list) and
    folds what is computed from it, giving the per-rank program that Paddle
    emits. A rank that is not in an op's mesh is an error.

    ```mlir
    // rank = 6 on #dist.mesh<shape = [2, 4]>: coordinate (1, 2)
    %c = dist.process_coord #mesh axis = 1      // becomes arith.constant 2
    ```
  }];
  let options = [
    Option<"rank", "rank", "int64_t", "-1",
           "The process (MPI rank) to specialise the program for">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def DistDropoutSeed : Pass<"dist-dropout-seed", "::mlir::func::FuncOp"> {
  let summary = "Give each dropout a seed op shared with its recomputation";
  let description = [{
    Paddle's `modify_forward_desc_for_recompute`: every dropout of the
    forward part that has no seed operand gets a `dist.seed` right before
    it, with the dropout's `fix_seed` value when set and 0 ("draw at run
    time") otherwise, replicated (`dims_mapping = [-1]`) on the dropout's
    mesh; the seed becomes the dropout's seed operand and `fix_seed` is
    dropped.

    The forward part: every dropout *not* marked `recompute_of`. A dropout
    recomputed in the backward part names its forward twin with
    `recompute_of = "<id>"` (the twin carries `id = "<id>"`); it gets the
    twin's seed SSA value, so both draw the same mask even when the seed is
    drawn at run time. (Paddle's "everything before the first grad op" rule
    is not used: the backward of a dropout can precede every grad op.)

    Errors: a `recompute_of` naming no forward dropout of the function, two
    forward dropouts with one `id`, a recomputed dropout whose seed operand,
    `fix_seed` or `prob` differs from its twin's, or whose twin's seed does
    not dominate it. Dropouts that already have a seed, and existing seed
    ops, are left alone; the pass is idempotent.
  }];
  let statistics = [
    Statistic<"numSeeds", "num-seeds", "Seed ops inserted">,
    Statistic<"numTwins", "num-twins", "Recomputed dropouts rewired">,
  ];
}

def DistAmpCheckFinite : Pass<"dist-amp-check-finite", "::mlir::ModuleOp"> {
  let summary = "Unscale AMP gradients and agree on found_inf";
  let description = [{
    Paddle's `_check_and_update_gradient` for functions that are AMP
    training steps: the parameter gradients are the results marked
    `{dist.grad = "<param>"}`, the loss scale is the argument marked
    `{dist.loss_scale}` (a one-element float tensor).

    Right after the last gradient is computed, the pass inserts
    `dist.check_finite_and_unscale` over the gradients; every later use of a
    gradient (an optimizer update, the return) reads the unscaled value.
    `found_inf` is returned as a new result marked `{dist.found_inf}`.

    On a mesh of more than one process each process checks only its shards,
    so `found_inf` is partial (max) over every mesh axis: it is cast to i32
    (as Paddle does), reduced with a MAX `dist.allreduce` over the whole
    mesh and cast back, so every process takes the same decision. On a
    single-process mesh (or unannotated gradients) there is no allreduce.

    Errors: a gradient that is not f16, f32 or f64 (named in the
    diagnostic), gradients on different meshes, more than one loss scale, a
    loss scale that is not a one-element float tensor, and a function that
    is called or otherwise referenced by a symbol (its new result would
    break the call). Functions with a `dist.found_inf` result are already
    done and are left alone. The functions are analysed and rewritten on
    all threads; diagnostics come in function order.
  }];
  let statistics = [
    Statistic<"numSteps", "num-steps", "AMP steps rewritten">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}


def DistShardOptimizer : Pass<"dist-shard-optimizer", "::mlir::ModuleOp"> {
  let summary = "Shard optimizer states over the data-parallel axis (ZeRO)";
  let description = [{
    ZeRO stages 1 and 2 (DeepSpeed's `stage_1_and_2.py`, Paddle's sharding
    pass) for the optimizer updates of a step function (`dist.sgd`,
    `dist.adamw`): each process keeps and updates only its shard of every
    optimizer state.

    For each update whose tensors are on a mesh with a data-parallel axis
    (named in `dp-axes`) of size `D > 1`:
    * the parameter, its gradient and its states are packed
      (`dist.pack`) into `D` rows of equal length, the tail zero-padded, so
      a parameter whose size does not divide by `D` is sharded like any
      other (never replicated);
    * a gradient that a `dist.allreduce` sums over the data-parallel axis
      is reduced by a `dist.reduce_scatter` of its packed buffer instead
      (the allreduce's other axes, if any, are reduced first), at the
      allreduce's place; a gradient already complete there is sliced
      (`dist.all_slice`);
    * the parameter is sliced, the update runs on the shards, and the
      updated shards are gathered (`dist.all_gather`) and unpacked
      (`dist.unpack`) into the updated parameter;
    * each state (an argument marked `{dist.state = "<param>"}` that only
      the update reads, and a result marked so that only the update makes)
      becomes the shard: `1 x ceil(numel / D)` elements per process, split
      over the axis, so its per-process memory is divided by `D`.

    Stage 1 keeps every other use of the gradient whole: a use other than
    the update reads the gathered, unpacked shard. Stage 2 keeps the
    gradient only as shards: a result marked `{dist.grad}` that returns it
    becomes the shard (other uses still read the gathered gradient).

    The function's signature changes, so every `func.call` of it is
    adapted: an argument of the old type is packed and sliced before the
    call; a result is gathered and unpacked for any use but the same
    argument of another call of the function, so a loop that threads the
    states from step to step keeps them sharded.

    Errors: a state that is not such an argument/result pair, a parameter
    already split or partial over the data-parallel axis, a parameter
    split over more than one other axis, an update outside the function's
    body block, and a function referenced otherwise than by `func.call`.
  }];
  let options = [
    Option<"stage", "stage", "int64_t", "1",
           "ZeRO stage: 1 shards the optimizer states, 2 also the returned "
           "gradients">,
    ListOption<"dpAxes", "dp-axes", "std::string",
               "Mesh axis names of the data-parallel role (default: dp)",
               "llvm::cl::list_init<std::string>(::mlir::dist::kDefaultDpAxes)">,
  ];
  let statistics = [
    Statistic<"numUpdates", "num-updates", "Optimizer updates sharded">,
  ];
}

def DistBucketGradients
    : Pass<"dist-bucket-gradients", "::mlir::func::FuncOp"> {
  let summary = "Fuse gradient collectives into buckets (DDP's reducer)";
  let description = [{
    One collective per gradient pays its latency once per gradient. As
    PyTorch DDP's reducer and Paddle's `fuse_all_reduce`, this pass fuses
    the data-parallel gradient collectives of a function into buckets.

    The candidates are the `dist.allreduce`s over axes named in `dp-axes`,
    and the `dist.reduce_scatter`s of a packed buffer (`rows x columns`,
    scattered on the rows) over those axes that `--dist-shard-optimizer`
    makes. Collectives fuse when they have the same mesh, axes, kind,
    reduction, element type and operand distribution. In the order their
    operands become ready (their definitions in the block), they fill a
    bucket until it holds at least `first-bucket-mb` MiB (the first bucket)
    or `bucket-mb` MiB (the others), DDP's 1 and 25; a collective whose
    operand is ready only after a member's result is used starts a new
    bucket.

    A bucket of allreduces is one `dist.pack` of one row, one allreduce of
    it and one `dist.unpack`; a bucket of reduce-scatters packs their
    buffers row by row, so one reduce-scatter leaves every process its
    shard of each, which the unpack of its row gives. The bucket's pack and
    collective are issued right after its last operand is ready, the unpack
    sits before the first use of a result: `--dist-assign-streams` then
    makes it asynchronous, so it overlaps the rest of the backward. A
    bucket of one collective is left as it is.
  }];
  let options = [
    Option<"bucketMb", "bucket-mb", "double", "25.0",
           "Bucket size in MiB (DDP's bucket_cap_mb)">,
    Option<"firstBucketMb", "first-bucket-mb", "double", "1.0",
           "Size of the first bucket in MiB (DDP's first bucket)">,
    ListOption<"dpAxes", "dp-axes", "std::string",
               "Mesh axis names of the data-parallel role (default: dp)",
               "llvm::cl::list_init<std::string>(::mlir::dist::kDefaultDpAxes)">,
  ];
  let statistics = [
    Statistic<"numBuckets", "num-buckets", "Buckets made">,
    Statistic<"numFused", "num-fused", "Collectives fused into them">,
  ];
}

def DistComplete : Pass<"dist-complete", "::mlir::ModuleOp"> {
  let summary = "Infer the distributions a program does not write";
  let description = [{
    Completes the encodings of every function marked `{dist.complete}`
    (with `all-functions`, of every function with an encoded tensor): its
    arguments, every written encoding and every `dist.constraint` (which
    the pass consumes) are constraints, and every other
    ranked tensor (an unencoded op result, block argument or function
    result) takes the distribution the rules give it. In a marked function
    the verifiers leave such values to this pass (an op with an unencoded
    tensor is not checked until it is complete); elsewhere an unencoded
    tensor is replicated. The pass removes the marker and checks every op
    it completed.

    A worklist runs to a fixpoint: forward, an op whose operands are all
    known gets the results its rule computes (a contraction over a split
    dim stays partial); along the edges that must carry one type (region
    and block arguments from `scf` and `cf` ops, call operands to the
    callee's arguments, the callee's results to the call's), a known value
    fixes the other end. When nothing flows forward, the first op (in
    program order) with an undecided operand gets one that its rule
    accepts, from its known operands and results (for a `linalg` op, from
    its loops), so a `tensor.empty` init takes its loops' distribution;
    what nothing reaches is replicated. Results that come out replicated
    stay unencoded. A collective written without encodings makes of its
    operand's distribution what it does; its written local shapes say
    which dim a reduce-scatter, slice or all-to-all splits. A
    `dist.reshard` written between undecided types changes what its local
    shapes say: a dim that grows is gathered, pending sums are completed,
    and a dim that shrinks by k is split over a free mesh axis of size k.

    Where two constraints disagree a `dist.reshard` goes in, with a remark
    that names both: around an op whose rule computes another distribution
    than its result declares (after it, or before it on the operands when
    the cost model prices that cheaper), before an op that needs a partial operand
    complete (a nonlinear op, an addition of a partial and a replicated
    value), and on an edge whose two ends differ. `--dist-lower-reshard`
    turns them into collectives. Local shapes are written, so the two
    sides of a reshard must hold one global tensor; otherwise it is an
    error at the conflict. An op with no rule on a distributed tensor is
    an error; with `replicate-unknown-ops` its partial operands are
    completed instead, with a remark (a split one stays an error: the op's
    types are written for the shard it is given).
  }];
  let options = [
    Option<"allFunctions", "all-functions", "bool", "false",
           "Complete every function with an encoded tensor as if it were "
           "marked {dist.complete} (a complete program comes out unchanged)">,
    Option<"replicateUnknownOps", "replicate-unknown-ops", "bool", "false",
           "Complete the partial operands of ops without a distribution "
           "rule instead of failing">,
    Option<"remarks", "remarks", "bool", "true",
           "Emit a remark per reshard placed, naming both sides of the "
           "conflict (--dist-auto-parallel passes its own remarks option, "
           "off by default)">,
  ] # CostModelOptions;
  let statistics = [
    Statistic<"numCompleted", "num-completed",
              "Number of values whose distribution was inferred">,
    Statistic<"numReshards", "num-reshards",
              "Number of dist.reshard ops inserted at conflicts">,
  ];
  let dependentDialects = ["::mlir::dist::DistDialect"];
}

def DistLowerReshard : Pass<"dist-lower-reshard", "::mlir::func::FuncOp"> {
  let summary = "Lower every dist.reshard to the collectives of its cheapest "
                "plan";
  let description = [{
    Replaces each `dist.reshard` with single-axis steps, one op each, found
    by a search over the intermediate distributions that the cost model
    scores (`include/dist/Analysis/ReshardPlan.h`). Per mesh axis:

    | from → to | step |
    |---|---|
    | partial → replicated | `dist.allreduce` |
    | partial → split | `dist.reduce_scatter` (reduced before it is sliced) |
    | split → replicated | `dist.all_gather` |
    | split dim i → split dim j | `dist.all_to_all` |
    | replicated → split | `dist.all_slice` (local) |
    | replicated or split → partial | `dist.make_partial` (local) |
    | partial → partial of another kind | `dist.allreduce`, then `dist.make_partial` |

    On an N-D mesh the order matters: a partial is reduced while the tensor
    is still split over other axes, and a split moves to another axis
    through all-to-alls and a gather of one axis at most, never of the
    whole tensor. Plans are deterministic.

    With `remarks`, every reshard gets a remark with its steps, the bytes
    through each process's link and the estimated time. With
    `forbid-materialization`, a plan whose largest local tensor is bigger
    than both the operand's and the result's is an error. A split dim that
    its axis does not divide, or a dynamic shape, is an error at the
    reshard.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark per reshard with its plan">,
    Option<"forbidMaterialization", "forbid-materialization", "bool", "false",
           "Reject a plan that holds more per process than the operand or "
           "the result">,
  ] # CostModelOptions;
  let statistics = [
    Statistic<"numReshards", "num-reshards", "Number of reshards lowered">,
    Statistic<"numSteps", "num-steps", "Number of steps they became">,
  ];
}

def DistAssignStreams : Pass<"dist-assign-streams", "::mlir::func::FuncOp"> {
  let summary = "Put collectives on streams with explicit completion points";
  let description = [{
    Paddle tags collectives with a stream name and nothing checks the tag
    (PaddlePaddle PR 64662: the tag silently had no effect, and a misplaced
    wait serialised the allreduce with the matmul it should overlap). Here a
    collective moved off the compute stream returns a `!dist.future` and a
    `dist.wait` completes it, which the verifier checks.

    Policy, per collective:
    * a `stream` already set (for example `mp` from
      `--dist-matmul-grad-overlap`) is kept; otherwise the stream follows the
      role of the first of its mesh axes that has one: axes named in
      `mp-axes` go to `mp`, `dp-axes` to `dp`, `sharding-axes` to
      `sharding`; other axes (and unnamed meshes) stay on the compute stream;
    * a collective stays on the compute stream (and loses any stream tag)
      when no op before the first use of its result, other than a
      `dist.wait`, reads a tensor: the ops in between (constants, seeds,
      coordinates, index arithmetic, waits for other collectives) do no
      work to overlap with;
    * otherwise its result becomes a future, and its `dist.wait` is placed
      right before the first use of the result (before the op that holds the
      use, when the use is in a region), or before the block terminator when
      the result is unused: never earlier. Collectives are not reordered, so
      several on one stream keep their issue order.

    Asynchronous collectives are left as they are: the pass is idempotent.
  }];
  let options = [
    ListOption<"mpAxes", "mp-axes", "std::string",
               "Mesh axis names of the model-parallel role (default: mp, tp)",
               "llvm::cl::list_init<std::string>(::mlir::dist::kDefaultMpAxes)">,
    ListOption<"dpAxes", "dp-axes", "std::string",
               "Mesh axis names of the data-parallel role (default: dp)",
               "llvm::cl::list_init<std::string>(::mlir::dist::kDefaultDpAxes)">,
    ListOption<"shardingAxes", "sharding-axes", "std::string",
               "Mesh axis names of the sharding role (default: sharding)",
               "llvm::cl::list_init<std::string>(::mlir::dist::kDefaultShardingAxes)">,
  ];
  let statistics = [
    Statistic<"numAsync", "num-async", "Collectives made asynchronous">,
    Statistic<"numSync", "num-sync", "Collectives left on the compute stream">,
  ];
}

def DistOverlapReport : Pass<"dist-overlap-report", "::mlir::ModuleOp"> {
  let summary = "Estimate compute, communication and exposed communication";
  let description = [{
    Simulates each function's schedule with the shared cost model and
    reports, per function: compute time (matmuls: flops / peak), communication
    time (collectives: latency + ring factor * bytes / bandwidth, the ring
    allreduce factor being 2(p-1)/p), the communication left exposed (sync
    collectives on the compute stream plus the time waits stall), the
    fraction hidden and the makespan.

    The schedule: ops issue in block order on the compute stream; an
    asynchronous collective starts when issued and its stream is free, and
    runs on its stream's track; a `dist.wait` stalls the compute stream until
    its collective ends. Ops other than matmuls and collectives count as
    free: the model compares matmul time with communication time.

    Output: a table (or JSON with `format=json`) on stderr or to `output`,
    and with `trace-file`, the estimated schedule in the format of a
    `dist-run --trace` (docs/running.md; it opens in Perfetto or
    chrome://tracing): a process per function with its figures, a lane per
    stream, an interval per op at its location, stalls as `dist.wait`
    intervals; with `svg-file`, that trace drawn as a run's trace is
    (`python3 -m dist.run.timeline` draws the same picture from the
    trace-file): compute blue, exposed communication red, communication on a
    stream green. The IR is unchanged.

    Each function also gets what one call moves and holds per process, from
    the types: its collectives by kind, with the bytes of their tensors
    (an allreduce's or reduce-scatter's operand, an all-gather's result,
    the measure the cost model prices), and the peak bytes of the tensors
    its body holds at once (a value from its op to its last use, in program
    order; arguments apart). That peak is the step's activation memory when
    nothing is freed earlier.

    With `measured-trace`, a trace that `dist-run --trace` recorded of the
    program, the report sets the estimate of each function it called beside
    what was measured, per call on the slowest rank: compute (the call's
    span less its exposed communication), communication and exposed
    communication (the time the compute stream spent in blocking
    collectives, issues and waits: with MPICH, where communication happens),
    and the makespan (the call's span), each with the estimate's error.
    Estimating with `cost-model=FILE` from `dist-run --calibrate` makes the
    comparison meaningful.
  }];
  let options = [
    Option<"format", "format", "std::string", "\"table\"",
           "Report format: table or json">,
    Option<"output", "output", "std::string", "\"-\"",
           "File to write the report to (- for stderr)">,
    Option<"traceFile", "trace-file", "std::string", "\"\"",
           "Write the schedule here in the run trace format">,
    Option<"svgFile", "svg-file", "std::string", "\"\"",
           "Write an SVG picture of the schedule here">,
    Option<"measuredTrace", "measured-trace", "std::string", "\"\"",
           "A dist-run --trace file of this program: report the measured "
           "figures of each function beside the estimate">,
  ] # CostModelOptions;
}

def DistPipeline : Pass<"dist-pipeline", "::mlir::ModuleOp"> {
  let summary = "Run a training step as pipeline stages over microbatches";
  let description = [{
    Splits each function whose ops say their stage (`dist.stage = k`) into
    the programs of the stages along the mesh axis `axis`, running
    `microbatches` microbatches in the order `schedule` gives each stage
    (`dist/Analysis/PipelineSchedule.h`: one generator for `gpipe`, `1f1b`,
    `interleaved` with `chunks` model chunks per stage, and `zb-h1`).

    The input is a completed step on one microbatch: the arguments marked
    `dist.param`, `dist.state` or `dist.loss_scale` are shared, every other
    argument that the forward or backward reads is data and becomes one
    argument per microbatch; the result marked `dist.loss` is the loss (a
    mean over the batch). Stages are numbered from 0 in any granularity
    (a layer each, say): consecutive ones are grouped evenly into
    `P * chunks` virtual stages, virtual stage `c * P + p` being chunk `c`
    of pipeline stage `p`.

    The phases of a stage follow from what the ops feed: the forward is
    what the loss is computed from, the update every `dist.sgd` or
    `dist.adamw` and what is computed from one, the backward the rest that
    a result or the update needs; for `zb-h1` the backward's B is what
    another stage waits for and W the rest. A value one stage computes
    and another reads is a `dist.send` after the action that makes it and
    a `dist.recv` posted an action ahead of the action that reads it, its
    `dist.wait` right before. The loss and the gradients are averaged over
    the microbatches (`arith.addf` as they come, a `dist.scale` by 1/M)
    before the update reads them, so the step equals the serial step on
    the concatenated batch.

    The result is one `scf.index_switch` on the pipeline coordinate, a
    case per stage (the last is the default), and a `dist.broadcast` over
    the pipeline axis from the stage that made each result: every process
    returns every result, as before. The pass checks its output with the
    transfer check of `--dist-verify-distributions`. With `remarks` it
    reports the schedule as a table, the transfers and the bubble.
  }];
  let options = [
    Option<"axis", "axis", "std::string", "\"pp\"",
           "The pipeline mesh axis, by name or number">,
    Option<"schedule", "schedule", "std::string", "\"1f1b\"",
           "gpipe, 1f1b, interleaved or zb-h1">,
    Option<"microbatches", "microbatches", "int64_t", "1",
           "How many microbatches a step runs">,
    Option<"chunks", "chunks", "int64_t", "1",
           "Model chunks per stage (interleaved)">,
    Option<"remarks", "remarks", "bool", "false",
           "Report each step's schedule as a remark">,
    Option<"svgFile", "svg-file", "std::string", "\"\"",
           "Draw the estimated schedule (a lane per stage) into this SVG">,
  ];
  let dependentDialects = ["::mlir::dist::DistDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DistVerifyDistributions
    : Pass<"dist-verify-distributions", "::mlir::ModuleOp"> {
  let summary = "Check every op against the distribution rules";
  let description = [{
    The encodings are the program's claims about what each process holds;
    this pass checks that every op computes what its results claim, so a
    missing collective is a compile-time error rather than replicas that
    silently train apart:

    * ops with a distribution rule (the dist compute ops, whose verifiers
      check the same, and the upstream ops given one as an external model:
      `arith` elementwise ops and casts, `tensor.collapse_shape` and
      `expand_shape`) must declare the encodings their rule gives; the
      error names both and the `dist.allreduce` that completes a partial
      value;
    * any other op that takes or makes an encoded tensor is an error, except
      those that move values unchanged (`func`, `scf` and `cf` ops, whose
      verifiers match the types) or make them from nothing
      (`arith.constant`, `tensor.empty`, `tensor.splat`);
    * `tensor.cast` may add an encoding to an unannotated tensor or remove
      one, but not change one into another, directly or through an
      unannotated tensor: an encoding cast away comes back only as itself;
    * a function result marked `dist.grad = "w"` must not be partial (the
      gradient sync is incomplete), and must be distributed as the argument
      marked `dist.param = "w"` of the same function, if there is one;
    * a value that differs between processes along a mesh axis (it derives
      from `dist.process_coord`, or from a tensor split or partial over the
      axis, through any op, region, branch or call) must not be declared
      the same on every process along it (a splat of a coordinate declared
      replicated), nor be a rule op's unannotated operand;
    * a collective, or a call of a function that issues one, must not be
      under control that differs along an axis of its group: a region op
      (`scf`, `affine`, any `RegionBranchOpInterface` op) whose condition,
      bounds or index differ, a `cf` branch the collective's block is
      control dependent on, or an op with regions dist knows nothing of;
      only some processes of the group would issue it and the group would
      deadlock. The diagnostic shows the source of the difference and, for
      a call, the chain of calls down to the collective;
    * the `dist.send`s and `dist.recv`s between pipeline stages (the cases
      of an `scf.index_switch` on a `dist.process_coord`) must each have
      one partner of the same type and tag in the peer's case, and must
      not deadlock when every send waits for its receive to be posted
      (`dist/Analysis/PipelineCheck.h`): the error is at the first blocked
      transfer, with a note where each other stage waits.

    An unannotated tensor is replicated. `--dist-auto-parallel` runs this
    pass first and last.
  }];
  let dependentDialects = ["::mlir::dist::DistDialect"];
}

#endif // DIST_DIALECT_DIST_TRANSFORMS_PASSES_TD
