//===- DropoutSeed.cpp - seed ops shared by dropouts and recomputations ---===//
//
// Implements --dist-dropout-seed. Paddle inserts a seed op so that the
// dropout re-run by recomputation draws the mask the forward pass drew; here
// the recomputed dropout is linked to its twin by name, and both consume the
// same seed SSA value, which a diagnostic checks rather than trusts.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/Transforms/CompletedPass.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "llvm/ADT/StringMap.h"

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTDROPOUTSEED
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

static constexpr llvm::StringLiteral kRewriteTag = "dist-dropout-seed";

/// The seed value a dropout draws from when it is known at compile time:
/// its fix_seed, or the value of the nonzero dist.seed feeding it.
static std::optional<int32_t> knownSeed(DropoutOp op) {
  if (std::optional<uint32_t> fixed = op.getFixSeed())
    return static_cast<int32_t>(*fixed);
  if (auto seed =
          op.getSeed() ? op.getSeed().getDefiningOp<SeedOp>() : SeedOp())
    if (seed.getValue() != 0)
      return static_cast<int32_t>(seed.getValue());
  return std::nullopt;
}

/// Gives an unseeded dropout a seed op right before it.
static void insertSeed(OpBuilder &b, DropoutOp op) {
  b.setInsertionPoint(op);
  auto type = RankedTensorType::get({1}, b.getI32Type());
  if (TensorDistAttr dist = getTensorDist(op.getInput().getType()))
    type = withTensorDist(type, TensorDistAttr::get(dist.getMesh(), {-1}));
  int32_t value = static_cast<int32_t>(op.getFixSeed().value_or(0));
  auto seed = SeedOp::create(b, rewriteLoc(op.getLoc(), kRewriteTag), type,
                             b.getI32IntegerAttr(value));
  op.getSeedMutable().assign(seed.getResult());
  op.removeFixSeedAttr();
}

namespace {
struct Twin {
  DropoutOp op;
  /// What the forward dropout drew from before the pass dropped fix_seed.
  std::optional<int32_t> seed;
};

struct DistDropoutSeedPass
    : public CompletedPass<
          dist::impl::DistDropoutSeedBase<DistDropoutSeedPass>> {
  using CompletedPass::CompletedPass;

  void runOnCompleted(func::FuncOp func) override {
    SmallVector<DropoutOp> forward, recomputed;
    func.walk([&](DropoutOp op) {
      (op.getRecomputeOf() ? recomputed : forward).push_back(op);
    });

    llvm::StringMap<Twin> twins;
    bool hadError = false;
    for (DropoutOp op : forward) {
      if (std::optional<StringRef> id = op.getId()) {
        auto [it, inserted] = twins.try_emplace(*id, Twin{op, knownSeed(op)});
        if (!inserted) {
          InFlightDiagnostic diag = op.emitError("two forward dropouts are "
                                                 "named \"")
                                    << *id << "\"";
          diag.attachNote(it->second.op.getLoc())
              << "first dropout \"" << *id << "\" is here";
          hadError = true;
        }
      }
    }
    if (hadError)
      return signalPassFailure();

    OpBuilder b(&getContext());
    for (DropoutOp op : forward)
      if (!op.getSeed()) {
        insertSeed(b, op);
        ++numSeeds;
      }

    DominanceInfo &dominance = getAnalysis<DominanceInfo>();
    for (DropoutOp op : recomputed)
      if (failed(rewireTwin(op, twins, dominance)))
        hadError = true;
    if (hadError)
      return signalPassFailure();
    markAnalysesPreserved<DominanceInfo>();
  }

  LogicalResult rewireTwin(DropoutOp op, const llvm::StringMap<Twin> &twins,
                           DominanceInfo &dominance) {
    StringRef name = *op.getRecomputeOf();
    auto it = twins.find(name);
    if (it == twins.end())
      return op.emitError("recompute_of names \"")
             << name << "\", which is no forward dropout of this function";
    Twin twin = it->second;
    auto error = [&]() {
      InFlightDiagnostic diag = op.emitError();
      diag.attachNote(twin.op.getLoc())
          << "forward dropout \"" << name << "\" is here";
      return diag;
    };
    if (op.getProb() != twin.op.getProb())
      return error() << "recomputed dropout has prob "
                     << op.getProb().convertToFloat() << " but its twin \""
                     << name << "\" has " << twin.op.getProb().convertToFloat();
    if (std::optional<uint32_t> fixed = op.getFixSeed()) {
      int32_t mine = static_cast<int32_t>(*fixed);
      if (twin.seed != mine) {
        InFlightDiagnostic diag = error();
        diag << "recomputed dropout has fix_seed = " << mine
             << " but its twin \"" << name << "\" draws ";
        if (twin.seed)
          diag << "from seed " << *twin.seed;
        else
          diag << "a run-time random seed";
        return diag;
      }
    }
    Value seed = twin.op.getSeed();
    if (op.getSeed()) {
      if (op.getSeed() != seed)
        return error() << "recomputed dropout's seed is not its twin's seed "
                          "value";
      return success();
    }
    if (!dominance.properlyDominates(seed, op))
      return error() << "the seed of its twin \"" << name
                     << "\" does not dominate this recomputed dropout";
    op.getSeedMutable().assign(seed);
    op.removeFixSeedAttr();
    ++numTwins;
    return success();
  }
};
} // namespace
