//===- Passes.td - dist conversion passes ------------------*- tablegen -*-===//

#ifndef DIST_CONVERSION_PASSES_TD
#define DIST_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertDistToLinalg
    : Pass<"convert-dist-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Lower dist compute ops to linalg, tensor, arith and scf";
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
    * `dist.dropout` and `dist.seed`: a counter-based hash RNG keyed by the
      seed and the element's *global* index (computed from the encoding and
      `dist.process_coord`), so the same seed gives the same mask on every
      run and the shards of an SPMD program draw the serial program's mask.
      Seed 0 ("random at run time") uses a fixed default seed: a run-time
      draw would have to be agreed on by every process;
    * `dist.scale`, `dist.check_finite_and_unscale`, `dist.c_identity`.

    `dist.embedding`/`dist.embedding_grad` with row-split tables are
    rejected: their logical semantics needs communication, which
    `--dist-parallel-embedding` adds. Collectives, `dist.process_coord` and
    `dist.wait` are left for `--convert-dist-to-mpi`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::dist::DistDialect"
  ];
}

def ConvertDistToMPI : Pass<"convert-dist-to-mpi", "::mlir::ModuleOp"> {
  let summary = "Lower dist collectives and process coordinates to MPI";
  let description = [{
    * `dist.process_coord`: this process's MPI rank, its position in the
      mesh's process-id list (a lookup table), unravelled row-major;
    * collectives: one communicator per (mesh, axes) group, built once per
      function by `mpi.comm_split` with the group's index as color and the
      process's position in its group as key; buffers are collapsed to 1-D
      (MLIR 22's MPI lowering counts only the first dimension);
      `dist.allreduce` is `mpi.allreduce` (`avg` is a sum divided by the
      group size); `dist.broadcast` is a sum allreduce to which only the
      group-local root contributes; `dist.c_identity` is the identity;
    * asynchronous collectives (a `!dist.future` result): `MPI_Iallreduce`
      where they are issued and `MPI_Wait` at their `dist.wait`, through
      `dist_iallreduce_*`/`dist_wait` in `libdist_runtime.so` (MLIR 22's
      mpi dialect has no non-blocking allreduce); element types other than
      f32, f64, i32 and i64 complete synchronously at the issue point;
    * the entry function (`entry`) gets `mpi.init` first and
      `mpi.finalize` before each return; the module gets the MPICH DLTI
      entry that MLIR's MPI-to-LLVM lowering needs;
    * the `#dist.tensor` encodings are dropped from every type.

    With `world-size` set, a mesh whose size differs, or whose process ids
    are not below it, is an error: running such a program would be a silent
    mismatch. Any dist op left over is an error naming it.
  }];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"",
           "The function that brackets the program with mpi.init/finalize">,
    Option<"worldSize", "world-size", "int64_t", "0",
           "The number of MPI processes the program will run on (0: unchecked)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::DLTIDialect", "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::mpi::MPIDialect", "::mlir::tensor::TensorDialect"
  ];
}

#endif // DIST_CONVERSION_PASSES_TD
