//===- RedistributionKind.cpp - the ways a distribution changes -----------===//

#include "dist/Dialect/Dist/IR/RedistributionKind.h"
#include "dist/Dialect/Dist/IR/DistOps.h"

#include "llvm/ADT/TypeSwitch.h"

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

std::optional<RedistributionKind>
mlir::dist::getRedistributionKind(Operation *op) {
  using Kind = RedistributionKind;
  return llvm::TypeSwitch<Operation *, std::optional<Kind>>(op)
      .Case([](AllReduceOp) { return Kind::AllReduce; })
      .Case([](BroadcastOp) { return Kind::Broadcast; })
      .Case([](AllGatherOp) { return Kind::AllGather; })
      .Case([](ReduceScatterOp) { return Kind::ReduceScatter; })
      .Case([](AllToAllOp) { return Kind::AllToAll; })
      .Case([](AllSliceOp) { return Kind::AllSlice; })
      .Case([](MakePartialOp) { return Kind::MakePartial; })
      .Default([](Operation *) { return std::nullopt; });
}
