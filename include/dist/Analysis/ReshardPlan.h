//===- ReshardPlan.h - the cheapest redistribution of a tensor --*- C++ -*-===//
//
// Plans a dist.reshard: a sequence of steps (the redistribution collectives
// and the local slice and partial views, each on one axis, or an allreduce
// over several) from one distribution
// of a global tensor to another on the same mesh. The plan is the cheapest
// path in the graph of intermediate distributions that the cost model
// scores (Dijkstra; ties go to fewer steps, then to the first found in a
// fixed order, so plans are deterministic). Because every step acts on one
// axis while the others keep their state, a reduction can happen while the
// tensor is still split elsewhere, and a split moves with an all-to-all
// rather than through the whole tensor.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_ANALYSIS_RESHARDPLAN_H
#define DIST_ANALYSIS_RESHARDPLAN_H

#include "dist/Analysis/CostModel.h"
#include "dist/Dialect/Dist/IR/DistAttrs.h"
#include "dist/Dialect/Dist/IR/DistOps.h"

#include <string>

namespace mlir {
namespace dist {

struct ReshardStep {
  /// Every kind but Broadcast: a plan never needs one process's value.
  using Kind = RedistributionKind;
  Kind kind;
  /// The mesh axes the step acts on: one, or for an allreduce every
  /// partial axis of one reduction at once (one collective over the group
  /// of both moves less than one per axis, and starts once).
  SmallVector<int64_t, 1> axes;
  /// The reduction of an allreduce, reduce-scatter or partial view.
  ReductionKind reduction = ReductionKind::Sum;
  /// The distribution after the step.
  TensorDistAttr to;
  /// Bytes through each process's link, and the estimated seconds.
  int64_t bytes = 0;
  double seconds = 0;
  /// The bytes of the local tensor the cost model prices the step by (the
  /// larger of the step's operand and result), as for a collective op.
  int64_t tensorBytes = 0;

  /// Whether the step communicates (the others are local views).
  bool isCollective() const { return communicates(kind); }
};

struct ReshardPlan {
  SmallVector<ReshardStep> steps;
  double seconds = 0;
  int64_t bytes = 0;
  /// The largest local tensor on the way, in bytes (operand and result
  /// included).
  int64_t peakLocalBytes = 0;
};

/// The distributions `op` goes from and to; an unencoded side (which the
/// verifier allows on one side) is replicated on the other's mesh.
std::pair<TensorDistAttr, TensorDistAttr> getReshardEnds(ReshardOp op);

/// The plan of `op`: `planReshard` between its operand's and its result's
/// distributions (getReshardEnds; the same distribution spelled twice needs
/// no step). Fails, saying why, when a
/// shape is dynamic or no plan exists.
FailureOr<ReshardPlan> planReshard(ReshardOp op, const CostModel &model,
                                   std::string &whyNot);

/// The cheapest plan from `from` to `to` for a tensor of `globalShape`
/// (static) and `elementType`, or failure with the reason in `whyNot` (a
/// split dim that its axis does not divide, an element type without a
/// size).
FailureOr<ReshardPlan> planReshard(ArrayRef<int64_t> globalShape,
                                   Type elementType, TensorDistAttr from,
                                   TensorDistAttr to, const CostModel &model,
                                   std::string &whyNot);

} // namespace dist
} // namespace mlir

#endif // DIST_ANALYSIS_RESHARDPLAN_H
