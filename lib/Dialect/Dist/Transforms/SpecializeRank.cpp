//===- SpecializeRank.cpp - fold rank-dependent values for one process ----===//
//
// Implements --dist-specialize-rank: every dist.process_coord becomes this
// process's coordinate, and what is computed from it is folded, which turns
// the SPMD program into the per-rank program Paddle builds.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/Transforms/CompletedPass.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"
#include "dist/Dialect/Dist/Utils/MeshIndexing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTSPECIALIZERANK
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

namespace {
struct CoordToConstant : public OpRewritePattern<ProcessCoordOp> {
  CoordToConstant(MLIRContext *ctx, int64_t rank)
      : OpRewritePattern(ctx), rank(rank) {}

  LogicalResult matchAndRewrite(ProcessCoordOp op,
                                PatternRewriter &rewriter) const override {
    // The lowerings' builders, on a constant rank: they fold.
    FailureOr<OpFoldResult> position = mesh::buildPosition(
        rewriter, op.getLoc(), op.getMesh(), rewriter.getIndexAttr(rank));
    if (failed(position))
      return rewriter.notifyMatchFailure(op, "process not in the mesh");
    SmallVector<OpFoldResult> coords =
        mesh::buildCoords(rewriter, op.getLoc(), op.getMesh(), *position);
    rewriter.replaceOp(op, getValueOrCreateConstantIndexOp(
                               rewriter, op.getLoc(), coords[op.getAxis()]));
    return success();
  }

  int64_t rank;
};

struct DistSpecializeRankPass
    : public CompletedPass<
          dist::impl::DistSpecializeRankBase<DistSpecializeRankPass>> {
  using CompletedPass::CompletedPass;

  void runOnCompleted(ModuleOp module) override {
    int64_t rank = this->rank;
    if (rank < 0) {
      mlir::emitError(module.getLoc(),
                      "--dist-specialize-rank needs the process to "
                      "specialise for: rank=N");
      return signalPassFailure();
    }
    SmallVector<ProcessCoordOp> coords;
    bool hadError = false;
    module.walk([&](ProcessCoordOp op) {
      if (!mesh::processCoord(op.getMesh(), rank)) {
        op.emitError("process ") << rank << " is not in mesh " << op.getMesh();
        hadError = true;
      }
      coords.push_back(op);
    });
    if (hadError)
      return signalPassFailure();

    // Fold only what depends on the coordinates, so the rest of the program
    // is left exactly as it was.
    llvm::SetVector<Operation *> affected;
    for (ProcessCoordOp op : coords)
      affected.insert(op);
    for (size_t i = 0; i < affected.size(); ++i)
      for (Operation *user : affected[i]->getUsers())
        affected.insert(user);
    // The constants those ops consume (the local row count of a start_index)
    // are dead once the ops fold; list them so the driver removes them.
    for (size_t i = 0, e = affected.size(); i < e; ++i)
      for (Value operand : affected[i]->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && matchPattern(def, m_Constant()))
          affected.insert(def);

    RewritePatternSet patterns(&getContext());
    patterns.add<CoordToConstant>(&getContext(), rank);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(affected.getArrayRef(),
                                       std::move(patterns), config)))
      return signalPassFailure();
  }
};
} // namespace
