//===- Pipelines.h - the --dist-to-llvm pipeline ----------------*- C++ -*-===//

#ifndef DIST_CONVERSION_PIPELINES_H
#define DIST_CONVERSION_PIPELINES_H

#include "dist/Conversion/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
namespace dist {

/// The options of --dist-to-llvm.
struct DistToLLVMOptions : public PassPipelineOptions<DistToLLVMOptions> {
  PassOptions::Option<std::string> entry{
      *this, "entry", llvm::cl::desc("Entry function (mpi.init/finalize)"),
      llvm::cl::init("main")};
  PassOptions::Option<int64_t> worldSize{
      *this, "world-size",
      llvm::cl::desc("Number of MPI processes to check meshes against"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> traceCollectives{
      *this, "trace-collectives",
      llvm::cl::desc("Trace every collective through the runtime (see "
                     "--convert-dist-to-mpi)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> traceEvents{
      *this, "trace-events",
      llvm::cl::desc("Record a timeline of collectives through the runtime "
                     "(see --convert-dist-to-mpi)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> requireEntry{
      *this, "require-entry",
      llvm::cl::desc("Fail unless the entry is a () -> () function with a "
                     "body (see --convert-dist-to-mpi)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> blas{
      *this, "blas",
      llvm::cl::desc("Compute f32/f64 contractions with the runtime's BLAS "
                     "GEMM (see --dist-contractions-to-blas; false: loops, "
                     "for targets without BLAS)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> verifyDistributions{
      *this, "verify-distributions",
      llvm::cl::desc("Check the program with --dist-verify-distributions "
                     "before lowering it, so that a missing collective or a "
                     "collective only some processes reach is a compile-time "
                     "error (false: lower what the check rejects, to see "
                     "the runtime stop it)"),
      llvm::cl::init(true)};
};

/// dist -> linalg/mpi -> bufferized loops -> the LLVM dialect. Adds to
/// `pm`, in this order: --dist-verify-distributions (unless
/// verify-distributions=false), --dist-lower-reshard,
/// --convert-dist-to-linalg, --convert-dist-to-mpi, then upstream's
/// --convert-elementwise-to-linalg and --one-shot-bufferize,
/// --dist-contractions-to-blas (with blas), upstream's buffer deallocation
/// pipeline, bufferization-to-memref, linalg-to-loops,
/// expand-strided-metadata, affine and scf lowerings, --convert-to-llvm and
/// --reconcile-unrealized-casts, and last --dist-strip-dlti.
void buildDistToLLVMPipeline(OpPassManager &pm,
                             const DistToLLVMOptions &options);

/// Registers --dist-to-llvm.
void registerDistConversionPipelines();

} // namespace dist
} // namespace mlir

#endif // DIST_CONVERSION_PIPELINES_H
