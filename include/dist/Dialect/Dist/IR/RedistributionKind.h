//===- RedistributionKind.h - the ways a distribution changes ---*- C++ -*-===//
//
// Every way dist changes a tensor's distribution is one of seven kinds: five
// collectives and two local views. The redistribution ops (each says its
// kind through RedistributionOpInterface), the reshard planner's steps and
// the cost model all speak of these kinds; what a kind is (its op, what it
// does to each mesh axis it runs over, whether it communicates, what share
// of its bytes crosses a link) is defined here once.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_REDISTRIBUTIONKIND_H
#define DIST_DIALECT_DIST_IR_REDISTRIBUTIONKIND_H

#include "dist/Dialect/Dist/IR/AxisState.h"

#include <optional>
#include <string>

namespace mlir {
namespace dist {

enum class RedistributionKind {
  AllReduce,     // partial -> replicated
  Broadcast,     // one process's value -> replicated
  AllGather,     // split -> replicated
  ReduceScatter, // partial -> split
  AllToAll,      // split dim i -> split dim j
  AllSlice,      // replicated -> split (local)
  MakePartial    // replicated or split -> partial (local)
};

/// The op of `kind` ("dist.allreduce", "dist.all_gather", ...).
StringRef getRedistributionOpName(RedistributionKind kind);

/// Whether a reduction with `reduction` completes a partial value pending
/// `pending`: the same kind, or an avg of a partial sum (the mean of its
/// terms: data parallelism's average of its replicas' gradients).
bool reducesPartial(ReductionKind reduction, ReductionKind pending);

/// Whether a mesh axis that an op of `kind` runs over may go from `from` to
/// `to` (every other axis keeps its state). `reduction` is the op's, for an
/// allreduce, a reduce-scatter or a partial view; an avg reduces a partial
/// sum (the mean of its terms).
bool allowsTransition(RedistributionKind kind,
                      std::optional<ReductionKind> reduction, AxisState from,
                      AxisState to);

/// How a diagnostic names what `allowsTransition` allows ("a split dim to
/// replicated").
std::string describeTransition(RedistributionKind kind,
                               std::optional<ReductionKind> reduction);

/// Whether `kind` moves data between processes (the others are local).
bool communicates(RedistributionKind kind);

/// The share of a tensor's bytes that crosses each process's link when
/// `kind` runs as a ring over `groupSize` processes: 2(p-1)/p for an
/// allreduce, 1 for a pipelined broadcast, (p-1)/p for the other
/// collectives, 0 for a local view. The tensor is the operand of an
/// allreduce, broadcast or reduce-scatter, the gathered result of an
/// all-gather and the shard of an all-to-all: the larger side of each.
double ringFactor(RedistributionKind kind, int64_t groupSize);

} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_IR_REDISTRIBUTIONKIND_H
