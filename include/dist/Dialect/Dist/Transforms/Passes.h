//===- Passes.h - dist passes -----------------------------------*- C++ -*-===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_PASSES_H
#define DIST_DIALECT_DIST_TRANSFORMS_PASSES_H

#include "dist/Analysis/CostModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace dist {
class MatmulGradOp;

/// Mesh axis names that give a collective its stream by default
/// (--dist-assign-streams and --dist-auto-parallel).
inline const std::string kDefaultMpAxes[] = {"mp", "tp"};
inline const std::string kDefaultDpAxes[] = {"dp"};
inline const std::string kDefaultShardingAxes[] = {"sharding"};

#define GEN_PASS_DECL
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"

//===----------------------------------------------------------------------===//
// Matmul-grad overlap (MatmulGradOverlap.cpp)
//===----------------------------------------------------------------------===//

/// When to split a matmul_grad: with `minOverlapRatio` > 0, only when the
/// dY matmul is estimated to take at least that fraction of the allreduce.
struct MatmulGradOverlapOptions {
  double minOverlapRatio = 0.0;
  CostModelOptions costModel;
};

/// Checks whether `op` can be split; on failure `whyNot` says why.
LogicalResult canSplitMatmulGrad(MatmulGradOp op,
                                 const MatmulGradOverlapOptions &options,
                                 std::string &whyNot);

/// Splits `op`, which canSplitMatmulGrad accepted, into the dX matmul, the
/// allreduce of dX (moved up, on the model-parallel stream) and the dY
/// matmul.
void splitMatmulGrad(RewriterBase &rewriter, MatmulGradOp op);

/// The split as a rewrite pattern rooted at dist.matmul_grad, for other
/// compilers' pattern drivers (it erases the later allreduce, so use a
/// driver that allows that, such as applyPatternsGreedily).
void populateMatmulGradOverlapPatterns(
    RewritePatternSet &patterns, const MatmulGradOverlapOptions &options = {});

//===----------------------------------------------------------------------===//
// Helpers the passes share (Utils.cpp)
//===----------------------------------------------------------------------===//

/// The location of an op made by the rewrite named `pass` from an op at
/// `loc`: a FusedLoc tagged with the pass name.
Location rewriteLoc(Location loc, llvm::StringRef pass);

//===----------------------------------------------------------------------===//
// The --dist-auto-parallel pipeline (Pipelines.cpp)
//===----------------------------------------------------------------------===//

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
  PassOptions::Option<std::string> costModelFile{
      *this, "cost-model",
      llvm::cl::desc("Cost model: a file from dist-run --calibrate, in place "
                     "of the three constants")};
};

/// Dropout seeds, vocab-parallel embedding, AMP check-finite, matmul-grad
/// overlap and stream assignment, in that order, with `options` forwarded.
void buildDistAutoParallelPipeline(OpPassManager &pm,
                                   const DistAutoParallelOptions &options);

/// What --dist-verify-distributions checks, on `module`: every op against
/// its distribution rule, gradients, values that differ between processes
/// declared the same, encodings laundered through casts, and collectives
/// (and calls of functions that issue them) that only some processes of
/// their group would reach. Reports each problem; failure if any.
LogicalResult verifyDistributions(ModuleOp module);

/// Registers --dist-auto-parallel.
void registerDistPipelines();

#define GEN_PASS_REGISTRATION
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"

} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_TRANSFORMS_PASSES_H
