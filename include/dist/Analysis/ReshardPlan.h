//===- ReshardPlan.h - the cheapest redistribution of a tensor --*- C++ -*-===//
//
// Plans a dist.reshard: a sequence of single-axis steps (the redistribution
// collectives and the local slice and partial views) from one distribution
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

#include <string>

namespace mlir {
namespace dist {

struct ReshardStep {
  enum class Kind {
    AllReduce,     // partial -> replicated
    AllGather,     // split -> replicated
    ReduceScatter, // partial -> split
    AllToAll,      // split dim i -> split dim j
    AllSlice,      // replicated -> split (local)
    MakePartial    // replicated or split -> partial (local)
  };
  Kind kind;
  int64_t axis;
  /// The reduction of an allreduce, reduce-scatter or partial view.
  ReductionKind reduction = ReductionKind::Sum;
  /// The distribution after the step.
  TensorDistAttr to;
  /// Bytes through each process's link, and the estimated seconds.
  int64_t bytes = 0;
  double seconds = 0;
};

struct ReshardPlan {
  SmallVector<ReshardStep> steps;
  double seconds = 0;
  int64_t bytes = 0;
  /// The largest local tensor on the way, in bytes (operand and result
  /// included).
  int64_t peakLocalBytes = 0;
};

/// The op name of a step's kind ("dist.all_gather", ...).
StringRef getStepOpName(ReshardStep::Kind kind);

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
