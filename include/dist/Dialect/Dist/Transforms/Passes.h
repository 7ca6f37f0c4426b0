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
// Attribute names of the conventions the passes share
//===----------------------------------------------------------------------===//

/// Function argument (and startup-function result) attribute naming a
/// parameter: `{dist.param = "wemb"}`.
constexpr llvm::StringLiteral kParamAttrName = "dist.param";
/// Unit attribute marking the startup (parameter initialisation) function.
constexpr llvm::StringLiteral kStartupAttrName = "dist.startup";
/// Unit attribute marking an op as the recomputation of a forward op.
constexpr llvm::StringLiteral kRecomputeAttrName = "dist.recompute";

/// The location of an op made by the rewrite named `pass` from an op at
/// `loc`: a FusedLoc tagged with the pass name.
Location rewriteLoc(Location loc, llvm::StringRef pass);

#define GEN_PASS_REGISTRATION
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"

} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_TRANSFORMS_PASSES_H
