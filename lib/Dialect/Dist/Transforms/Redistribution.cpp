//===- Redistribution.cpp - building redistributions and transposes -------===//

#include "dist/Dialect/Dist/Transforms/Redistribution.h"
#include "dist/Dialect/Dist/IR/AxisState.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dist;

/// The op of `step` applied to `input`.
static Value buildStep(OpBuilder &b, Location loc, const ReshardStep &step,
                       Value input, ArrayRef<int64_t> globalShape) {
  auto inType = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> local = *mesh::localShape(globalShape, step.to);
  auto type = withTensorDist(
      RankedTensorType::get(local, inType.getElementType()), step.to);
  MeshAttr mesh = step.to.getMesh();
  SmallVector<int64_t> axes(step.axes.begin(), step.axes.end());
  switch (step.kind) {
  case ReshardStep::Kind::AllReduce:
    return AllReduceOp::create(b, loc, type, input, mesh, axes, step.reduction,
                               nullptr);
  case ReshardStep::Kind::AllGather:
    return AllGatherOp::create(b, loc, type, input, mesh, axes, nullptr);
  case ReshardStep::Kind::ReduceScatter:
    return ReduceScatterOp::create(b, loc, type, input, mesh, axes,
                                   step.reduction, nullptr);
  case ReshardStep::Kind::AllToAll:
    return AllToAllOp::create(b, loc, type, input, mesh, axes, nullptr);
  case ReshardStep::Kind::AllSlice:
    return AllSliceOp::create(b, loc, type, input, mesh, axes);
  case ReshardStep::Kind::MakePartial:
    return MakePartialOp::create(b, loc, type, input, mesh, axes,
                                 step.reduction);
  case ReshardStep::Kind::Broadcast:
    break;
  }
  llvm_unreachable("a reshard plan has no broadcast step");
}

Value dist::buildReshardSteps(OpBuilder &b, Location loc,
                              const ReshardPlan &plan, Value input,
                              ArrayRef<int64_t> globalShape) {
  for (const ReshardStep &step : plan.steps)
    input = buildStep(b, loc, step, input, globalShape);
  return input;
}

FailureOr<Value> dist::buildReshard(OpBuilder &b, Location loc, Value input,
                                    TensorDistAttr to, const CostModel &model,
                                    std::string &whyNot) {
  auto type = dyn_cast<RankedTensorType>(input.getType());
  TensorDistAttr from = type ? getTensorDist(type) : nullptr;
  if (!from || !type.hasStaticShape()) {
    whyNot = "the value is not a statically shaped #dist.tensor";
    return failure();
  }
  SmallVector<int64_t> global = mesh::globalShape(type.getShape(), from);
  FailureOr<ReshardPlan> plan =
      planReshard(global, type.getElementType(), from, to, model, whyNot);
  if (failed(plan))
    return failure();
  return buildReshardSteps(b, loc, *plan, input, global);
}

namespace {
/// What a transpose needs of a redistribution: its operand, its result's
/// tensor type and the mesh axes it acts on.
struct Redistribution {
  RankedTensorType operand, result;
  SmallVector<int64_t> axes;
};
} // namespace

static FailureOr<Redistribution> getRedistribution(Operation *op) {
  SmallVector<int64_t> axes;
  auto redistribution = dyn_cast<RedistributionOpInterface>(op);
  // A broadcast's transpose sums every cotangent into its root, which no
  // change of distribution does.
  if (redistribution &&
      redistribution.getRedistributionKind() != RedistributionKind::Broadcast) {
    axes.assign(redistribution.getAxes().begin(),
                redistribution.getAxes().end());
  } else if (auto reshard = dyn_cast<ReshardOp>(op)) {
    TensorDistAttr dist = getTensorDist(reshard.getResult().getType());
    if (!dist)
      return failure();
    axes = llvm::to_vector(llvm::seq<int64_t>(0, dist.getMesh().getRank()));
  } else {
    return failure();
  }
  Type result = op->getResult(0).getType();
  if (auto future = dyn_cast<FutureType>(result))
    result = future.getValueType();
  return Redistribution{cast<RankedTensorType>(op->getOperand(0).getType()),
                        cast<RankedTensorType>(result), std::move(axes)};
}

FailureOr<TensorDistAttr> dist::getTransposeDist(Operation *op,
                                                 RankedTensorType cotangent,
                                                 std::string &whyNot) {
  llvm::raw_string_ostream os(whyNot);
  FailureOr<Redistribution> redist = getRedistribution(op);
  if (failed(redist)) {
    os << "'" << op->getName() << "' is not a redistribution";
    return failure();
  }
  TensorDistAttr operand = getTensorDist(redist->operand);
  TensorDistAttr result = getTensorDist(redist->result);
  TensorDistAttr cot = getTensorDist(cotangent);
  if (!operand || !result || !cot) {
    os << "the operand, the result and the cotangent must be #dist.tensor "
          "values";
    return failure();
  }
  if (cot.getMesh() != result.getMesh()) {
    os << "the cotangent is on mesh " << cot.getMesh()
       << ", the result on mesh " << result.getMesh();
    return failure();
  }
  if (cotangent.getElementType() != redist->result.getElementType() ||
      mesh::globalShape(cotangent.getShape(), cot) !=
          mesh::globalShape(redist->result.getShape(), result)) {
    os << "the cotangent '" << cotangent
       << "' does not hold a tensor of the result's global type";
    return failure();
  }
  // The acted-on axes first become replicated, so that a split can then
  // move to any dim they free; a dim still split by an untouched axis
  // cannot take a second one.
  TensorDistAttr to = cot;
  for (int64_t axis : redist->axes)
    to = withAxisState(to, axis, AxisState::replicated());
  for (int64_t axis : redist->axes) {
    AxisState primal = getAxisState(operand, axis);
    AxisState held = getAxisState(cot, axis);
    if (primal.isSplit()) {
      if (int64_t other = to.getMeshAxis(primal.dim); other >= 0) {
        os << "dim " << primal.dim << " of the operand's cotangent would be "
           << "split by mesh axes " << other << " and " << axis;
        return failure();
      }
      to = withAxisState(to, axis, primal);
    } else if (held.isPartial() && held.reduction == ReductionKind::Sum) {
      to = withAxisState(to, axis, held);
    }
  }
  return to;
}

FailureOr<Value> dist::buildTranspose(OpBuilder &b, Location loc, Operation *op,
                                      Value cotangent, const CostModel &model,
                                      std::string &whyNot) {
  auto type = dyn_cast<RankedTensorType>(cotangent.getType());
  if (!type) {
    whyNot = "the cotangent is not a ranked tensor";
    return failure();
  }
  FailureOr<TensorDistAttr> to = getTransposeDist(op, type, whyNot);
  if (failed(to))
    return failure();
  return buildReshard(b, loc, cotangent, *to, model, whyNot);
}
