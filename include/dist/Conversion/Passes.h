//===- Passes.h - dist conversion passes ------------------------*- C++ -*-===//

#ifndef DIST_CONVERSION_PASSES_H
#define DIST_CONVERSION_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
namespace dist {

#define GEN_PASS_DECL
#include "dist/Conversion/Passes.h.inc"

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

/// dist -> linalg/mpi -> bufferized loops -> the LLVM dialect.
void buildDistToLLVMPipeline(OpPassManager &pm,
                             const DistToLLVMOptions &options);

void registerDistConversionPipelines();

#define GEN_PASS_REGISTRATION
#include "dist/Conversion/Passes.h.inc"

} // namespace dist
} // namespace mlir

#endif // DIST_CONVERSION_PASSES_H
