//===- RedistributionKind.cpp - the ways a distribution changes -----------===//

#include "dist/Dialect/Dist/IR/RedistributionKind.h"
#include "dist/Dialect/Dist/IR/DistOps.h"

using namespace mlir;
using namespace mlir::dist;

StringRef mlir::dist::getRedistributionOpName(RedistributionKind kind) {
  switch (kind) {
  case RedistributionKind::AllReduce:
    return AllReduceOp::getOperationName();
  case RedistributionKind::Broadcast:
    return BroadcastOp::getOperationName();
  case RedistributionKind::AllGather:
    return AllGatherOp::getOperationName();
  case RedistributionKind::ReduceScatter:
    return ReduceScatterOp::getOperationName();
  case RedistributionKind::AllToAll:
    return AllToAllOp::getOperationName();
  case RedistributionKind::AllSlice:
    return AllSliceOp::getOperationName();
  case RedistributionKind::MakePartial:
    return MakePartialOp::getOperationName();
  }
  llvm_unreachable("unknown redistribution kind");
}

bool mlir::dist::reducesPartial(ReductionKind reduction,
                                ReductionKind pending) {
  return pending == reduction ||
         (pending == ReductionKind::Sum && reduction == ReductionKind::Avg);
}

bool mlir::dist::allowsTransition(RedistributionKind kind,
                                  std::optional<ReductionKind> reduction,
                                  AxisState from, AxisState to) {
  switch (kind) {
  case RedistributionKind::AllReduce:
    return from.isPartial() && reduction &&
           reducesPartial(*reduction, from.reduction) && to.isReplicated();
  case RedistributionKind::Broadcast:
    return from.isReplicated() && to.isReplicated();
  case RedistributionKind::AllGather:
    return from.isSplit() && to.isReplicated();
  case RedistributionKind::ReduceScatter:
    return from.isPartial() && reduction &&
           reducesPartial(*reduction, from.reduction) && to.isSplit();
  case RedistributionKind::AllToAll:
    return from.isSplit() && to.isSplit() && from.dim != to.dim;
  case RedistributionKind::AllSlice:
    return from.isReplicated() && to.isSplit();
  case RedistributionKind::MakePartial:
    return !from.isPartial() && to.isPartial() && reduction &&
           to.reduction == *reduction;
  }
  llvm_unreachable("unknown redistribution kind");
}

std::string
mlir::dist::describeTransition(RedistributionKind kind,
                               std::optional<ReductionKind> reduction) {
  std::string partial =
      ("partial (" +
       (reduction ? stringifyReductionKind(*reduction) : StringRef("?")) + ")")
          .str();
  switch (kind) {
  case RedistributionKind::AllReduce:
    return partial + " to replicated";
  case RedistributionKind::Broadcast:
    return "replicated to replicated";
  case RedistributionKind::AllGather:
    return "a split dim to replicated";
  case RedistributionKind::ReduceScatter:
    return partial + " to a split dim";
  case RedistributionKind::AllToAll:
    return "a split dim to another split dim";
  case RedistributionKind::AllSlice:
    return "replicated to a split dim";
  case RedistributionKind::MakePartial:
    return "replicated or a split dim to " + partial;
  }
  llvm_unreachable("unknown redistribution kind");
}

bool mlir::dist::communicates(RedistributionKind kind) {
  return kind != RedistributionKind::AllSlice &&
         kind != RedistributionKind::MakePartial;
}

double mlir::dist::ringFactor(RedistributionKind kind, int64_t groupSize) {
  double n = static_cast<double>(groupSize);
  switch (kind) {
  case RedistributionKind::AllReduce:
    return 2.0 * (n - 1) / n;
  case RedistributionKind::Broadcast:
    return 1.0;
  case RedistributionKind::AllGather:
  case RedistributionKind::ReduceScatter:
  case RedistributionKind::AllToAll:
    return (n - 1) / n;
  case RedistributionKind::AllSlice:
  case RedistributionKind::MakePartial:
    return 0.0;
  }
  llvm_unreachable("unknown redistribution kind");
}
