//===- Pipelines.cpp - the --dist-auto-parallel pipeline ------------------===//

#include "dist/Dialect/Dist/Transforms/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::dist;

// Every pass's options are copied by name, never by position: a reordering
// of Passes.td must not swap two options of one type.

/// The options of a pass that estimates time with the cost model, whose
/// options every such pass spells alike.
template <typename Options>
static Options withCostModel(const DistAutoParallelOptions &options) {
  Options result;
  result.peakTflops = options.peakTflops;
  result.linkLatencyUs = options.linkLatencyUs;
  result.linkBandwidthGBps = options.linkBandwidthGBps;
  result.memoryBandwidthGBps = options.memoryBandwidthGBps;
  result.costModelFile = options.costModelFile;
  return result;
}

void mlir::dist::buildDistAutoParallelPipeline(
    OpPassManager &pm, const DistAutoParallelOptions &options) {
  // Completion first: what the input leaves out is inferred (and checked)
  // before anything relies on it.
  auto complete = withCostModel<DistCompleteOptions>(options);
  complete.remarks = options.remarks;
  pm.addPass(createDistComplete(complete));
  // The reshards completion inserted, and those the input has, become
  // collectives before any rewrite looks at collectives.
  auto reshard = withCostModel<DistLowerReshardOptions>(options);
  reshard.remarks = options.remarks;
  pm.addNestedPass<func::FuncOp>(createDistLowerReshard(reshard));
  // The input's claims (and completion's) are checked before the
  // rewrites, and the rewrites' output after.
  pm.addPass(createDistVerifyDistributions());
  // Seeds first: they only touch dropouts, and later passes may copy ops.
  pm.addNestedPass<func::FuncOp>(createDistDropoutSeed());
  // The embedding lowering adds the dp sync of the table gradient, so it
  // runs before AMP looks for the last gradient.
  DistParallelEmbeddingOptions embedding;
  embedding.useAvgAllreduce = options.useAvgAllreduce;
  embedding.requireRowSplit = options.requireRowSplit;
  pm.addPass(createDistParallelEmbedding(embedding));
  pm.addPass(createDistAmpCheckFinite());
  // The optimizer states are sharded once the gradients' allreduces are
  // final (AMP reads the whole gradients).
  if (options.zeroStage != 0) {
    DistShardOptimizerOptions shard;
    shard.stage = options.zeroStage;
    shard.dpAxes = llvm::to_vector(options.dpAxes);
    pm.addPass(createDistShardOptimizer(shard));
  }
  // Overlap last: it reorders the backward, which the others do not care
  // about, and it must see the final allreduces.
  auto overlap = withCostModel<DistMatmulGradOverlapOptions>(options);
  overlap.remarks = options.remarks;
  overlap.minOverlapRatio = options.minOverlapRatio;
  pm.addNestedPass<func::FuncOp>(createDistMatmulGradOverlap(overlap));
  // Buckets after the overlap, which moves single allreduces, and before
  // the streams, which make each bucket asynchronous.
  if (options.bucketGradients) {
    DistBucketGradientsOptions buckets;
    buckets.bucketMb = options.bucketMb;
    buckets.firstBucketMb = options.firstBucketMb;
    buckets.dpAxes = llvm::to_vector(options.dpAxes);
    pm.addNestedPass<func::FuncOp>(createDistBucketGradients(buckets));
  }
  // Streams last: they turn the final collectives into futures and waits.
  DistAssignStreamsOptions streams;
  streams.mpAxes = llvm::to_vector(options.mpAxes);
  streams.dpAxes = llvm::to_vector(options.dpAxes);
  streams.shardingAxes = llvm::to_vector(options.shardingAxes);
  pm.addNestedPass<func::FuncOp>(createDistAssignStreams(streams));
  pm.addPass(createDistVerifyDistributions());
}

void mlir::dist::registerDistPipelines() {
  PassPipelineRegistration<DistAutoParallelOptions>(
      "dist-auto-parallel",
      "Completion and the reshards' lowering, then the auto-parallel "
      "rewrites in order, between two checks of the distributions: dropout "
      "seeds, vocab-parallel embedding, AMP check-finite, optimizer sharding "
      "(zero-stage), matmul-grad overlap, gradient buckets "
      "(bucket-gradients), stream assignment",
      buildDistAutoParallelPipeline);
}
