//===- Pipelines.cpp - the --dist-auto-parallel pipeline ------------------===//

#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::dist;

void mlir::dist::buildDistAutoParallelPipeline(
    OpPassManager &pm, const DistAutoParallelOptions &options) {
  // Completion first: what the input leaves out is inferred (and checked)
  // before anything relies on it.
  DistCompleteOptions complete;
  complete.peakTflops = options.peakTflops;
  complete.linkLatencyUs = options.linkLatencyUs;
  complete.linkBandwidthGBps = options.linkBandwidthGBps;
  complete.costModelFile = options.costModelFile;
  pm.addPass(createDistComplete(complete));
  // The reshards completion inserted, and those the input has, become
  // collectives before any rewrite looks at collectives. Options by name: a
  // reordering of Passes.td must not swap them.
  DistLowerReshardOptions reshard;
  reshard.remarks = options.remarks;
  reshard.peakTflops = options.peakTflops;
  reshard.linkLatencyUs = options.linkLatencyUs;
  reshard.linkBandwidthGBps = options.linkBandwidthGBps;
  reshard.costModelFile = options.costModelFile;
  pm.addNestedPass<func::FuncOp>(createDistLowerReshard(reshard));
  // The input's claims (and completion's) are checked before the
  // rewrites, and the rewrites' output after.
  pm.addPass(createDistVerifyDistributions());
  // Seeds first: they only touch dropouts, and later passes may copy ops.
  pm.addNestedPass<func::FuncOp>(createDistDropoutSeed());
  // The embedding lowering adds the dp sync of the table gradient, so it
  // runs before AMP looks for the last gradient.
  pm.addPass(createDistParallelEmbedding(DistParallelEmbeddingOptions{
      options.useAvgAllreduce, options.requireRowSplit}));
  pm.addPass(createDistAmpCheckFinite());
  // Overlap last: it reorders the backward, which the others do not care
  // about, and it must see the final allreduces.
  pm.addNestedPass<func::FuncOp>(createDistMatmulGradOverlap(
      DistMatmulGradOverlapOptions{options.remarks, options.minOverlapRatio,
                                   options.peakTflops, options.linkLatencyUs,
                                   options.linkBandwidthGBps,
                                   options.costModelFile}));
  // Streams last: they turn the final collectives into futures and waits.
  pm.addNestedPass<func::FuncOp>(createDistAssignStreams(
      DistAssignStreamsOptions{llvm::to_vector(options.mpAxes),
                               llvm::to_vector(options.dpAxes),
                               llvm::to_vector(options.shardingAxes)}));
  pm.addPass(createDistVerifyDistributions());
}

void mlir::dist::registerDistPipelines() {
  PassPipelineRegistration<DistAutoParallelOptions>(
      "dist-auto-parallel",
      "Completion, then the auto-parallel rewrites in order, between two "
      "checks of the distributions: dropout seeds, vocab-parallel embedding, "
      "AMP "
      "check-finite, reshard lowering, matmul-grad overlap, stream "
      "assignment",
      buildDistAutoParallelPipeline);
}
