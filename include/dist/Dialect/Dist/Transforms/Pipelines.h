//===- Pipelines.h - the --dist-auto-parallel pipeline ----------*- C++ -*-===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_PIPELINES_H
#define DIST_DIALECT_DIST_TRANSFORMS_PIPELINES_H

#include "dist/Analysis/CostModel.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
namespace dist {

/// The options of --dist-auto-parallel: one per option of the passes it
/// runs that a user sets, under the pass's own name where one pass has it.
struct DistAutoParallelOptions
    : public PassPipelineOptions<DistAutoParallelOptions> {
  PassOptions::Option<bool> remarks{
      *this, "remarks",
      llvm::cl::desc("Emit remarks: the reshards completion places and the "
                     "rewrites that were skipped, saying why"),
      llvm::cl::init(false)};
  PassOptions::Option<double> minOverlapRatio{
      *this, "min-overlap-ratio",
      llvm::cl::desc("Matmul-grad overlap cost gate (0 disables it)"),
      llvm::cl::init(0.0)};
  PassOptions::Option<bool> useAvgAllreduce{
      *this, "use-avg-allreduce",
      llvm::cl::desc("Embedding: average dp weight gradients with one avg "
                     "allreduce"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> requireRowSplit{
      *this, "require-row-split",
      llvm::cl::desc("Embedding: reject embeddings whose rows are not split"),
      llvm::cl::init(false)};
  PassOptions::ListOption<std::string> mpAxes{
      *this, "mp-axes",
      llvm::cl::desc("Streams: mesh axis names of the model-parallel role"),
      llvm::cl::list_init<std::string>(kDefaultMpAxes)};
  PassOptions::ListOption<std::string> dpAxes{
      *this, "dp-axes",
      llvm::cl::desc("Streams: mesh axis names of the data-parallel role"),
      llvm::cl::list_init<std::string>(kDefaultDpAxes)};
  PassOptions::ListOption<std::string> shardingAxes{
      *this, "sharding-axes",
      llvm::cl::desc("Streams: mesh axis names of the sharding role"),
      llvm::cl::list_init<std::string>(kDefaultShardingAxes)};
  PassOptions::Option<int64_t> zeroStage{
      *this, "zero-stage",
      llvm::cl::desc("Optimizer sharding: ZeRO stage 1 or 2 over the dp "
                     "axes (0: off)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> bucketGradients{
      *this, "bucket-gradients",
      llvm::cl::desc("Fuse the data-parallel gradient collectives into "
                     "buckets"),
      llvm::cl::init(false)};
  PassOptions::Option<double> bucketMb{
      *this, "bucket-mb", llvm::cl::desc("Buckets: bucket size in MiB"),
      llvm::cl::init(25.0)};
  PassOptions::Option<double> firstBucketMb{
      *this, "first-bucket-mb",
      llvm::cl::desc("Buckets: size of the first bucket in MiB"),
      llvm::cl::init(1.0)};
  PassOptions::Option<double> peakTflops{
      *this, "peak-tflops",
      llvm::cl::desc("Cost model: peak TFLOP/s of one process"),
      llvm::cl::init(CostModelOptions().peakTflops)};
  PassOptions::Option<double> linkLatencyUs{
      *this, "link-latency-us",
      llvm::cl::desc("Cost model: latency of one collective in us"),
      llvm::cl::init(CostModelOptions().linkLatencyUs)};
  PassOptions::Option<double> linkBandwidthGBps{
      *this, "link-bandwidth-gbps",
      llvm::cl::desc("Cost model: link bandwidth in GB/s"),
      llvm::cl::init(CostModelOptions().linkBandwidthGBps)};
  PassOptions::Option<double> memoryBandwidthGBps{
      *this, "memory-bandwidth-gbps",
      llvm::cl::desc("Cost model: memory bandwidth in GB/s of the ops that "
                     "are not products (0: not priced)"),
      llvm::cl::init(CostModelOptions().memoryBandwidthGBps)};
  PassOptions::Option<std::string> costModelFile{
      *this, "cost-model",
      llvm::cl::desc("Cost model: a file from dist-run --calibrate, in place "
                     "of the constants")};
};

/// Adds to `pm`, in this order, with `options` forwarded by name:
///   --dist-complete, --dist-lower-reshard, --dist-verify-distributions,
///   --dist-dropout-seed, --dist-parallel-embedding, --dist-amp-check-finite,
///   --dist-shard-optimizer (only with zero-stage 1 or 2),
///   --dist-matmul-grad-overlap,
///   --dist-bucket-gradients (only with bucket-gradients),
///   --dist-assign-streams, and --dist-verify-distributions again.
/// Pipelines.cpp says why each pass sits where it does.
void buildDistAutoParallelPipeline(OpPassManager &pm,
                                   const DistAutoParallelOptions &options);

/// Registers --dist-auto-parallel.
void registerDistPipelines();

} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_TRANSFORMS_PIPELINES_H
