//===- Pipelines.cpp - the --dist-to-llvm pipeline ------------------------===//

#include "dist/Conversion/Pipelines.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::dist;

void mlir::dist::buildDistToLLVMPipeline(OpPassManager &pm,
                                         const DistToLLVMOptions &options) {
  // Every route that lowers checks first: a deadlock or a missing
  // collective is an error here, not a hang on the cluster.
  if (options.verifyDistributions)
    pm.addPass(createDistVerifyDistributions());
  // A reshard that no pipeline lowered yet gets its default plan.
  pm.addNestedPass<func::FuncOp>(createDistLowerReshard());
  ConvertDistToLinalgOptions toLinalg;
  toLinalg.copyTransposed = !options.blas;
  pm.addPass(createConvertDistToLinalg(toLinalg));
  // By name, not by position: a reordering of Passes.td must not swap the
  // three booleans.
  ConvertDistToMPIOptions toMPI;
  toMPI.entry = options.entry;
  toMPI.worldSize = options.worldSize;
  toMPI.traceCollectives = options.traceCollectives;
  toMPI.traceEvents = options.traceEvents;
  toMPI.requireEntry = options.requireEntry;
  pm.addPass(createConvertDistToMPI(toMPI));
  // The upstream half: the passes that take MLIR 22 from linalg on tensors
  // to the LLVM dialect.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // A training loop carries each step's new parameters into the next: an
  // scf.for yields the buffers a call returned (freed by the deallocation
  // pipeline below).
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  if (options.blas)
    pm.addPass(createDistContractionsToBlas());
  // One-Shot Bufferize frees nothing: without this, every call of a step
  // leaks its buffers, and every allocation is fresh memory the kernel must
  // fault in and zero (measured on the runtime benchmark's large MLP: 18,000
  // page faults per step; freed, and kept by the runtime's malloc settings,
  // the step went from 42-51 ms to 27-28 ms).
  bufferization::buildBufferDeallocationPipeline(pm);
  // The clones it adds (a returned buffer it does not own) become an alloc
  // and a copy.
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createDistStripDLTI());
}

void mlir::dist::registerDistConversionPipelines() {
  PassPipelineRegistration<DistToLLVMOptions>(
      "dist-to-llvm",
      "Lower a dist program to the LLVM dialect on MPI (MPICH): dist compute "
      "to linalg, collectives to mpi and the dist runtime, then bufferize, "
      "compute contractions with BLAS, free the buffers and convert to LLVM",
      buildDistToLLVMPipeline);
}
