//===- Passes.td - dist conversion passes ------------------*- tablegen -*-===//

#ifndef DIST_CONVERSION_PASSES_TD
#define DIST_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertDistToLinalg : Pass<"convert-dist-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower dist compute ops to linalg, tensor and arith";
  let description = [{
    Lowers the compute ops to upstream dialects on tensors, so that a dist
    program can be bufferized and run:

    * `dist.matmul` and `dist.matmul_grad`: `linalg.generic` contractions
      (transposes and 2-D `y` broadcast included; the gradient of a
      broadcast `y` sums over the batch dims);
    * `dist.embedding`, `dist.c_embedding`: a gather; ids outside
      `[start_index, start_index + rows)` give zero rows in `c_embedding`;
    * `dist.embedding_grad`, `dist.c_embedding_grad`: a scatter-add into a
      zero table, only of the ids in the local rows for `c_embedding_grad`;
    * every lookup checks its ids against the whole table (for the `c_`
      ops, the global rows the weight's encoding gives; unchecked without
      one): an id outside it calls the runtime's `dist_index_error`, which
      stops every process with a message naming the op's location, as
      Paddle raises an error; no lookup reads outside its table;
    * `dist.dropout` and `dist.seed`: a counter-based hash RNG keyed by the
      seed and the element's *global* index (from the encoding and this
      process's coordinates, read from the MPI rank), so the same seed gives
      the same mask on every run and the shards of an SPMD program draw the
      serial program's mask. Seed 0 ("random at run time", and a dropout
      with neither a seed operand nor `fix_seed`) asks the runtime's
      `dist_random_seed` each time the op runs: a hash of the run seed
      (`DIST_RUN_SEED`, which `dist-run --seed` sets), of the op's location
      and name, and of the number of earlier draws of that op, so every
      process draws the same seed while different ops and different steps
      draw different ones;
    * `dist.scale`; `dist.check_finite_and_unscale` multiplies by the
      inverse scale in f32 (f64 for f64 gradients) and rounds once.

    The `#dist.tensor` encodings are dropped from every other op and from
    function signatures. The ops this pass does not lower (collectives,
    `dist.process_coord`, `dist.wait`) stay, with `tensor.cast`s to their
    encoded types, for `--convert-dist-to-mpi`; the two passes run in
    either order. `dist.embedding`/`dist.embedding_grad` with row-split
    tables are rejected: their logical semantics needs communication, which
    `--dist-parallel-embedding` adds.

    A matmul operand read across its contiguous dim (a transposed `y`, and
    the gradients' `y^T` and `dY^T`) is copied into that layout first, so
    that the loops `--convert-linalg-to-loops` builds read it contiguously;
    with `copy-transposed=false` the contraction reads it in place, which
    is what `--dist-contractions-to-blas` wants: BLAS takes a transposed
    operand as it is.
  }];
  let options = [
    Option<"copyTransposed", "copy-transposed", "bool", "true",
           "Copy a matmul operand read across its contiguous dim into that "
           "layout first (for the loop lowering; false for BLAS)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::mpi::MPIDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::dist::DistDialect"
  ];
}

def ConvertDistToMPI : Pass<"convert-dist-to-mpi", "::mlir::ModuleOp"> {
  let summary = "Lower dist collectives and process coordinates to MPI";
  let description = [{
    * `dist.process_coord`: this process's MPI rank, its position in the
      mesh's process-id list (a search of the list when the ids are not
      `0..N-1`), unravelled row-major by `affine.delinearize_index`; built
      once per function;
    * collectives: one communicator per (mesh, axes) group and function,
      from the runtime's `dist_comm_get` (an `MPI_Comm_split` with the
      group's index as color and the process's position in its group as key,
      cached by the runtime and freed at finalisation); buffers are
      collapsed to 1-D (MLIR 22's MPI lowering counts only the first
      dimension); `dist.allreduce` is `mpi.allreduce` (`avg` is a sum
      divided by the group size); `dist.broadcast` is a sum allreduce to
      which only the group-local root contributes; `dist.c_identity` is the
      identity. f16 and bf16 are reduced in f32 and rounded once, narrow
      integers in i32; index, complex and other element types are an error;
    * asynchronous collectives (a `!dist.future` result): the runtime's
      non-blocking allreduce (`MPI_Iallreduce`, on a copy of the send
      buffer that the runtime keeps) where they are issued, and
      `dist_wait_*` (`MPI_Wait`) where their `dist.wait` was, naming the
      receive buffer so that buffer deallocation frees it only after;
    * the entry function (`entry`) gets `mpi.init` first and, before each
      return, the runtime's finalisation (when the runtime is used) and
      `mpi.finalize`; the module gets the MPICH DLTI entry that MLIR's
      MPI-to-LLVM lowering needs;
    * the `#dist.tensor` encodings are dropped from every type.

    With `trace-collectives`, every collective that communicates is preceded
    by a call to the runtime's `dist_trace_collective` with a description
    ("file:line:col: dist.allreduce sum of 32 x f32 over mesh axes [0]"), a
    signature of what it computes and its element count, and the group's
    communicator: the runtime records the last collective each process
    entered (for `dist-run`'s timeout report) and, when asked to, checks
    that every process of the group starts the same one.

    The runtime's interface is `include/dist/Runtime/DistRuntime.h`. With
    `world-size` set, a mesh whose size differs, or whose process ids are
    not below it, is an error: running such a program would be a silent
    mismatch. A dist op that neither this pass nor `--convert-dist-to-linalg`
    lowers is a conversion failure naming it.
  }];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"",
           "The function that brackets the program with mpi.init/finalize">,
    Option<"worldSize", "world-size", "int64_t", "0",
           "The number of MPI processes the program will run on (0: unchecked)">,
    Option<"traceCollectives", "trace-collectives", "bool", "false",
           "Call the runtime's dist_trace_collective before every collective "
           "that communicates (for dist-run's reports and checks)">,
    Option<"traceEvents", "trace-events", "bool", "false",
           "Also call the runtime's dist_trace_collective_end after every "
           "collective is issued and dist_trace_function around every "
           "function's body, so that it can record a timeline (implies "
           "trace-collectives; for dist-run --trace)">,
    Option<"requireEntry", "require-entry", "bool", "false",
           "Fail unless the entry function exists, has a body, takes no "
           "arguments and returns nothing (for programs that are run)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::DLTIDialect", "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::memref::MemRefDialect",
    "::mlir::mpi::MPIDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def DistContractionsToBlas
    : Pass<"dist-contractions-to-blas", "::mlir::ModuleOp"> {
  let summary = "Compute f32/f64 contractions on memrefs with the runtime's "
                "BLAS GEMM";
  let description = [{
    Rewrites every linalg op on memrefs that is a contraction, `C += A * B`
    summed over the loops C lacks (a `mul`/`add` body, projected-permutation
    maps, one f32 or f64 element type: `linalg.matmul`, `batch_matmul`,
    the `linalg.generic`s `--convert-dist-to-linalg` builds for `dist.matmul`
    and `dist.matmul_grad`), into calls of the runtime's `dist_gemm_f32` or
    `dist_gemm_f64` (`include/dist/Runtime/DistRuntime.h`), which call
    OpenBLAS's `cblas_sgemm`/`cblas_dgemm`.

    Three loops of the op become the GEMM's M (in A and C), N (in B and C)
    and K (in A and B), each the one of its kind innermost in C (K: in A);
    every other loop (batch dims, a sum over a batch dim the result lacks)
    becomes an `scf.for` around the call, which gets 2-D strided views of
    the operands (`memref.subview`, `memref.transpose`). The runtime passes
    a transposed view to BLAS as a transposed operand, and copies only a
    view whose rows and columns are both strided. When the op's only
    other loops are result dims and a `linalg.fill` of zero right before it
    initialises C, the fill is dropped and the GEMM overwrites C (BLAS's
    `beta = 0`).

    Other ops are left for `--convert-linalg-to-loops`: f16/bf16 (BLAS has
    no GEMM for them), integers and mixed element types, bodies with
    anything but the multiply-add, contractions with no M, N or K loop
    (matrix-vector products, outer products, dot products) and ops whose
    result is also an input.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
}

def DistStripDLTI : Pass<"dist-strip-dlti", "::mlir::ModuleOp"> {
  let summary = "Remove the module's dlti.map once MPI is lowered to LLVM";
  let description = [{
    `--convert-dist-to-mpi` puts `#dlti.map<"MPI:Implementation" = "MPICH">`
    on the module for MLIR's MPI-to-LLVM conversion. Once that has run, the
    entry has done its work, and `mlir-runner`, which does not register the
    DLTI dialect, cannot parse it: `--dist-to-llvm` ends with this pass. It
    removes only that entry, and fails if an `mpi` op is still there.
  }];
}

#endif // DIST_CONVERSION_PASSES_TD
