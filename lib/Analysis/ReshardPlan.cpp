//===- ReshardPlan.cpp - the cheapest redistribution of a tensor ----------===//

#include "dist/Analysis/ReshardPlan.h"
#include "dist/Dialect/Dist/IR/AxisState.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"

#include "llvm/ADT/DenseMap.h"

#include <queue>

using namespace mlir;
using namespace mlir::dist;

/// Partials of several kinds are reduced in ascending axis order: an axis
/// is reduced only when no lower axis awaits another kind.
static bool isReducible(TensorDistAttr dist, int64_t axis, ReductionKind kind) {
  for (auto [other, otherKind] : dist.getPartials())
    if (other < axis && otherKind != kind)
      return false;
  return true;
}

/// A partial view's identity must survive the other partial axes'
/// reductions: zeros (sum) survive any, others only their own kind.
static bool isViewable(TensorDistAttr dist, ReductionKind kind) {
  if (kind == ReductionKind::Sum)
    return true;
  return llvm::all_of(dist.getPartials(),
                      [&](auto p) { return p.second == kind; });
}

namespace {
/// What the search knows of a tensor of one global shape.
class Planner {
public:
  Planner(ArrayRef<int64_t> globalShape, int64_t elementBytes,
          const CostModel &model)
      : globalShape(globalShape), elementBytes(elementBytes), model(model) {}

  /// Local bytes of `dist`, or nothing when a split dim is not divisible.
  std::optional<int64_t> localBytes(TensorDistAttr dist) const {
    std::optional<SmallVector<int64_t>> local =
        mesh::localShape(globalShape, dist);
    if (!local)
      return std::nullopt;
    int64_t n = elementBytes;
    for (int64_t d : *local)
      n *= d;
    return n;
  }

  /// Every step from `dist`, in a fixed order, with its cost: one per axis
  /// and kind, then an allreduce over every partial axis of one reduction
  /// where there are several.
  /// Partial views are made only with the kinds in `kinds` (the
  /// destination's): a partial of another kind would have to be reduced
  /// again.
  SmallVector<ReshardStep> steps(TensorDistAttr dist,
                                 ArrayRef<ReductionKind> kinds) const {
    SmallVector<ReshardStep> out;
    auto add = [&](ReshardStep::Kind kind, int64_t axis, AxisState to,
                   ReductionKind reduction = ReductionKind::Sum) {
      addStep(dist, kind, {axis}, to, reduction, out);
    };
    SmallVector<int64_t> freeDims;
    for (int64_t d = 0, e = globalShape.size(); d < e; ++d)
      if (dist.getMeshAxis(d) < 0)
        freeDims.push_back(d);
    // A whole (split or replicated) axis may become a partial view of
    // every kind that stays viewable.
    auto addPartialViews = [&](int64_t axis) {
      for (ReductionKind kind : kinds)
        if (isViewable(dist, kind))
          add(ReshardStep::Kind::MakePartial, axis, AxisState::partial(kind),
              kind);
    };
    for (int64_t axis = 0; axis < dist.getMesh().getRank(); ++axis) {
      AxisState state = getAxisState(dist, axis);
      switch (state.kind) {
      case AxisState::Kind::Partial:
        if (!isReducible(dist, axis, state.reduction))
          break;
        add(ReshardStep::Kind::AllReduce, axis, AxisState::replicated(),
            state.reduction);
        for (int64_t d : freeDims)
          add(ReshardStep::Kind::ReduceScatter, axis, AxisState::split(d),
              state.reduction);
        break;
      case AxisState::Kind::Split:
        add(ReshardStep::Kind::AllGather, axis, AxisState::replicated());
        for (int64_t d : freeDims)
          add(ReshardStep::Kind::AllToAll, axis, AxisState::split(d));
        addPartialViews(axis);
        break;
      case AxisState::Kind::Replicated:
        for (int64_t d : freeDims)
          add(ReshardStep::Kind::AllSlice, axis, AxisState::split(d));
        addPartialViews(axis);
        break;
      }
    }
    // The partial axes of one reduction that are reducible now, reduced by
    // one allreduce over their whole group (the order the encoding defines
    // is kept: reducing each in ascending order gives the same value).
    SmallVector<ReductionKind> kindsHere;
    for (auto [axis, kind] : dist.getPartials())
      if (!llvm::is_contained(kindsHere, kind))
        kindsHere.push_back(kind);
    for (ReductionKind kind : kindsHere) {
      SmallVector<int64_t> axes;
      for (auto [axis, axisKind] : dist.getPartials())
        if (axisKind == kind && isReducible(dist, axis, kind))
          axes.push_back(axis);
      if (axes.size() > 1)
        addStep(dist, ReshardStep::Kind::AllReduce, axes,
                AxisState::replicated(), kind, out);
    }
    return out;
  }

private:
  /// Appends the step of `kind` that takes each of `axes` of `dist` to
  /// `to`, with its bytes and cost; nothing when the result's split dims
  /// do not divide.
  void addStep(TensorDistAttr dist, ReshardStep::Kind kind,
               ArrayRef<int64_t> axes, AxisState to, ReductionKind reduction,
               SmallVectorImpl<ReshardStep> &out) const {
    TensorDistAttr next = dist;
    int64_t g = 1;
    for (int64_t axis : axes) {
      next = withAxisState(next, axis, to);
      g *= dist.getMesh().getAxisSize(axis);
    }
    std::optional<int64_t> there = localBytes(next);
    if (!there)
      return;
    ReshardStep step{
        kind, SmallVector<int64_t, 1>(axes),      reduction, next, 0,
        0,    std::max(*localBytes(dist), *there)};
    if (communicates(kind)) {
      // The larger side is what the cost model prices a collective by.
      step.bytes = static_cast<int64_t>(ringFactor(kind, g) * step.tensorBytes);
      step.seconds = model.collectiveTime(kind, step.tensorBytes, g);
    } else {
      // Local: a copy of the result, which a step that communicates
      // always outweighs.
      step.seconds = 1e-15 * static_cast<double>(*there);
    }
    out.push_back(step);
  }

  ArrayRef<int64_t> globalShape;
  int64_t elementBytes;
  const CostModel &model;
};

struct Visit {
  double seconds;
  int64_t steps;
  int64_t order;
  TensorDistAttr dist;
  bool operator>(const Visit &other) const {
    return std::tie(seconds, steps, order) >
           std::tie(other.seconds, other.steps, other.order);
  }
};
} // namespace

std::pair<TensorDistAttr, TensorDistAttr>
mlir::dist::getReshardEnds(ReshardOp op) {
  RankedTensorType in = op.getInput().getType();
  RankedTensorType out = op.getResult().getType();
  TensorDistAttr from = getTensorDist(in), to = getTensorDist(out);
  if (!from)
    from = TensorDistAttr::getReplicated(to.getMesh(), in.getRank());
  if (!to)
    to = TensorDistAttr::getReplicated(from.getMesh(), out.getRank());
  return {from, to};
}

FailureOr<ReshardPlan> mlir::dist::planReshard(ReshardOp op,
                                               const CostModel &model,
                                               std::string &whyNot) {
  RankedTensorType in = op.getInput().getType();
  RankedTensorType out = op.getResult().getType();
  auto [from, to] = getReshardEnds(op);
  if (from == to) {
    ReshardPlan none;
    none.peakLocalBytes = CostModel::tensorBytes(in).value_or(0);
    return none;
  }
  if (!in.hasStaticShape() || !out.hasStaticShape()) {
    whyNot = "its shapes are not static";
    return failure();
  }
  return planReshard(mesh::globalShape(in.getShape(), from),
                     in.getElementType(), from, to, model, whyNot);
}

FailureOr<ReshardPlan>
mlir::dist::planReshard(ArrayRef<int64_t> globalShape, Type elementType,
                        TensorDistAttr from, TensorDistAttr to,
                        const CostModel &model, std::string &whyNot) {
  llvm::raw_string_ostream os(whyNot);
  if (!elementType.isIntOrIndexOrFloat() || elementType.isIndex()) {
    os << "element type " << elementType << " has no size to move";
    return failure();
  }
  int64_t elementBytes =
      std::max<int64_t>(1, (elementType.getIntOrFloatBitWidth() + 7) / 8);
  // Every local size is at most the global one, so checking it once keeps
  // the search's arithmetic in range.
  if (!CostModel::checkedBytes(globalShape, elementBytes)) {
    os << "the global shape [";
    llvm::interleaveComma(globalShape, os);
    os << "] has more bytes than 64 bits count";
    return failure();
  }
  Planner planner(globalShape, elementBytes, model);
  for (TensorDistAttr dist : {from, to})
    if (!planner.localBytes(dist)) {
      os << "the global shape [";
      llvm::interleaveComma(globalShape, os);
      os << "] does not divide into " << dist;
      return failure();
    }
  SmallVector<ReductionKind> kinds;
  for (auto [axis, kind] : to.getPartials())
    if (!llvm::is_contained(kinds, kind))
      kinds.push_back(kind);

  // Dijkstra from `from`; distributions are uniqued attributes. First
  // through distributions no larger than the operand or the result: a plan
  // that holds more is taken only when no such plan exists (a split that
  // moves between two axes, which must free one of them first).
  struct Best {
    double seconds;
    int64_t steps;
    TensorDistAttr previous;
    ReshardStep step;
  };
  llvm::DenseMap<TensorDistAttr, Best> best;
  auto search = [&](std::optional<int64_t> limit) {
    best.clear();
    std::priority_queue<Visit, std::vector<Visit>, std::greater<Visit>> queue;
    llvm::DenseSet<TensorDistAttr> done;
    int64_t order = 0;
    best[from] = {0, 0, TensorDistAttr(), {}};
    queue.push({0, 0, order++, from});
    while (!queue.empty()) {
      Visit visit = queue.top();
      queue.pop();
      if (!done.insert(visit.dist).second)
        continue;
      if (visit.dist == to)
        return true;
      for (const ReshardStep &step : planner.steps(visit.dist, kinds)) {
        if (limit && *planner.localBytes(step.to) > *limit)
          continue;
        double seconds = visit.seconds + step.seconds;
        int64_t steps = visit.steps + 1;
        auto it = best.find(step.to);
        if (it != best.end() &&
            std::tie(it->second.seconds, it->second.steps) <=
                std::tie(seconds, steps))
          continue;
        best[step.to] = {seconds, steps, visit.dist, step};
        queue.push({seconds, steps, order++, step.to});
      }
    }
    return false;
  };
  int64_t bound = std::max(*planner.localBytes(from), *planner.localBytes(to));
  if (!search(bound) && !search(std::nullopt)) {
    os << "no sequence of steps reaches " << to << " from " << from;
    return failure();
  }
  ReshardPlan plan;
  for (TensorDistAttr at = to; at != from; at = best[at].previous)
    plan.steps.push_back(best[at].step);
  std::reverse(plan.steps.begin(), plan.steps.end());
  plan.peakLocalBytes = *planner.localBytes(from);
  for (const ReshardStep &step : plan.steps) {
    plan.seconds += step.seconds;
    plan.bytes += step.bytes;
    plan.peakLocalBytes =
        std::max(plan.peakLocalBytes, *planner.localBytes(step.to));
  }
  return plan;
}
