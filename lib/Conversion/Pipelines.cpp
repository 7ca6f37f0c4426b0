//===- Pipelines.cpp - the --dist-to-llvm pipeline ------------------------===//

#include "dist/Conversion/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::dist;

void mlir::dist::buildDistToLLVMPipeline(OpPassManager &pm,
                                         const DistToLLVMOptions &options) {
  pm.addNestedPass<func::FuncOp>(createConvertDistToLinalg());
  pm.addPass(createConvertDistToMPI(
      ConvertDistToMPIOptions{options.entry, options.worldSize}));
  // The upstream half, as shared/TOOLCHAIN.md found to work with MLIR 22.
  std::string upstream =
      "func.func(convert-elementwise-to-linalg),"
      "one-shot-bufferize{bufferize-function-boundaries "
      "function-boundary-type-conversion=identity-layout-map},"
      "func.func(convert-linalg-to-loops),expand-strided-metadata,"
      "lower-affine,convert-scf-to-cf,convert-to-llvm,"
      "reconcile-unrealized-casts";
  (void)parsePassPipeline(upstream, pm);
}

void mlir::dist::registerDistConversionPipelines() {
  PassPipelineRegistration<DistToLLVMOptions>(
      "dist-to-llvm",
      "Lower a dist program to the LLVM dialect on MPI (MPICH): dist compute "
      "to linalg, collectives to mpi, then bufferize and convert to LLVM",
      buildDistToLLVMPipeline);
}
