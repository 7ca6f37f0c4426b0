//===- LowerReshard.cpp - dist.reshard to its cheapest plan ---------------===//
//
// Implements --dist-lower-reshard: each dist.reshard becomes the steps of
// the plan that ReshardPlan.h finds, one redistribution op per step, each
// with a location fused from the reshard's and the pass's name.
//
//===----------------------------------------------------------------------===//

#include "dist/Analysis/ReshardPlan.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/Transforms/CompletedPass.h"
#include "dist/Dialect/Dist/Transforms/CostModelPass.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"
#include "dist/Dialect/Dist/Transforms/Redistribution.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTLOWERRESHARD
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

namespace {
struct DistLowerReshardPass
    : public CostModelPass<CompletedPass<
          dist::impl::DistLowerReshardBase<DistLowerReshardPass>>> {
  using CostModelPass::CostModelPass;

  void runOnCompleted(func::FuncOp func) override {
    FailureOr<CostModelOptions> options = costModelOptions();
    if (failed(options))
      return signalPassFailure();
    CostModel model(*options);
    SmallVector<ReshardOp> reshards;
    func->walk([&](ReshardOp op) { reshards.push_back(op); });
    OpBuilder b(&getContext());
    Location passLoc = NameLoc::get(b.getStringAttr(getArgument()));
    bool failedAny = false;
    for (ReshardOp op : reshards)
      if (failed(lower(b, op, model, passLoc)))
        failedAny = true;
    if (failedAny)
      signalPassFailure();
  }

  LogicalResult lower(OpBuilder &b, ReshardOp op, const CostModel &model,
                      Location passLoc) {
    RankedTensorType in = op.getInput().getType();
    RankedTensorType out = op.getResult().getType();
    auto [from, to] = getReshardEnds(op);
    std::string whyNot;
    FailureOr<ReshardPlan> plan = planReshard(op, model, whyNot);
    if (failed(plan))
      return op.emitOpError("cannot be planned: ") << whyNot;
    // Only the encoding is spelled differently: a cast, whatever the shapes
    // and the element type.
    if (from == to) {
      if (remarks)
        emitPlanRemark(op, *plan);
      b.setInsertionPoint(op);
      Location loc = FusedLoc::get(&getContext(), {op.getLoc(), passLoc});
      op.replaceAllUsesWith(
          tensor::CastOp::create(b, loc, out, op.getInput()).getResult());
      op.erase();
      ++numReshards;
      return success();
    }
    SmallVector<int64_t> global = mesh::globalShape(in.getShape(), from);
    int64_t inBytes = *CostModel::tensorBytes(in);
    int64_t outBytes = *CostModel::tensorBytes(out);
    if (forbidMaterialization &&
        plan->peakLocalBytes > std::max(inBytes, outBytes))
      return op.emitOpError("plan holds ")
             << plan->peakLocalBytes
             << " bytes per process on the way, more than the operand ("
             << inBytes << ") and the result (" << outBytes
             << "), and forbid-materialization is set";
    if (remarks)
      emitPlanRemark(op, *plan);
    b.setInsertionPoint(op);
    Location loc = FusedLoc::get(&getContext(), {op.getLoc(), passLoc});
    Value input = op.getInput();
    if (!plan->steps.empty() && !getTensorDist(in))
      input = tensor::CastOp::create(b, loc, withTensorDist(in, from), input);
    Value result = buildReshardSteps(b, loc, *plan, input, global);
    // The steps spell replicated with an encoding; the reshard's users may
    // have it without one (or the other way round), which only a cast
    // changes (the collectives keep their operand's encodedness).
    if (result.getType() != out)
      result = tensor::CastOp::create(b, loc, out, result);
    op.replaceAllUsesWith(result);
    op.erase();
    ++numReshards;
    numSteps += plan->steps.size();
    return success();
  }

  static void emitPlanRemark(ReshardOp op, const ReshardPlan &plan) {
    InFlightDiagnostic remark = op.emitRemark();
    remark << plan.steps.size() << " step"
           << (plan.steps.size() == 1 ? "" : "s") << ", " << plan.bytes
           << " bytes per process, "
           << llvm::formatv("{0:F3}", plan.seconds * 1e6) << " us, at most "
           << plan.peakLocalBytes << " bytes held:";
    if (plan.steps.empty())
      remark << " none";
    for (const ReshardStep &step : plan.steps) {
      remark << " " << getRedistributionOpName(step.kind).drop_front(5)
             << (step.axes.size() == 1 ? "(axis " : "(axes ");
      llvm::interleaveComma(step.axes, remark);
      if (step.kind == ReshardStep::Kind::AllReduce ||
          step.kind == ReshardStep::Kind::ReduceScatter ||
          step.kind == ReshardStep::Kind::MakePartial)
        remark << ", " << stringifyReductionKind(step.reduction);
      remark << ", " << step.bytes << " B) -> [";
      llvm::interleaveComma(step.to.getDimsMapping(), remark);
      remark << "]";
      if (step.to.isPartial()) {
        remark << " partial [";
        llvm::interleaveComma(step.to.getPartials(), remark, [&](auto p) {
          remark << p.first << " : " << stringifyReductionKind(p.second);
        });
        remark << "]";
      }
      remark << ";";
    }
  }
};
} // namespace
