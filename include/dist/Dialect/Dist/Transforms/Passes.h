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

/// Builds, before `op` at `b`'s insertion point, its two products as
/// dist.matmul ops, dX = dOut * Y^T and dY = X^T * dOut (with X's leading
/// dims folded), and returns (dX, dY); `op` stays. Needs
/// canBuildMatmulGradProducts.
std::pair<Value, Value> buildMatmulGradProducts(OpBuilder &b, MatmulGradOp op,
                                                Location loc);
/// Whether `op` has the two products buildMatmulGradProducts builds: a
/// plain x, a 2-D y, and leading dims of x and dOut that fold into one; if
/// not, `whyNot` says why.
LogicalResult canBuildMatmulGradProducts(MatmulGradOp op, std::string &whyNot);

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

/// What --dist-verify-distributions checks, on `module`: every op against
/// its distribution rule, gradients, values that differ between processes
/// declared the same, encodings laundered through casts, and collectives
/// (and calls of functions that issue them) that only some processes of
/// their group would reach. Reports each problem; failure if any.
LogicalResult verifyDistributions(ModuleOp module);

#define GEN_PASS_REGISTRATION
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"

} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_TRANSFORMS_PASSES_H
