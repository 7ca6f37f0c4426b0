//===- AssignStreams.cpp - explicit streams and completion points ---------===//
//
// Implements --dist-assign-streams: collectives leave the compute stream by
// returning a future, and a dist.wait placed right before the first use of
// the result is the one point where the compute stream waits for them.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTASSIGNSTREAMS
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

/// The first op of `block` that uses `value` (directly or in a region).
static Operation *firstUserInBlock(Value value, Block *block) {
  Operation *first = nullptr;
  for (Operation *user : value.getUsers()) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (ancestor && (!first || ancestor->isBeforeInBlock(first)))
      first = ancestor;
  }
  return first;
}

namespace {
struct DistAssignStreamsPass
    : public dist::impl::DistAssignStreamsBase<DistAssignStreamsPass> {
  using Base::Base;

  /// The stream given by the role of the first axis that has one.
  StreamKind streamByRole(CollectiveOpInterface op) {
    ArrayRef<StringAttr> names = op.getMesh().getNames();
    for (int64_t axis : op.getAxes()) {
      if (names.empty())
        break;
      StringRef name = names[axis].getValue();
      if (llvm::is_contained(mpAxes, name))
        return StreamKind::ModelParallel;
      if (llvm::is_contained(dpAxes, name))
        return StreamKind::DataParallel;
      if (llvm::is_contained(shardingAxes, name))
        return StreamKind::Sharding;
    }
    return StreamKind::Compute;
  }

  void runOnOperation() override {
    SmallVector<CollectiveOpInterface> collectives;
    getOperation().walk([&](CollectiveOpInterface op) {
      if (!op.isAsync())
        collectives.push_back(op);
    });
    for (CollectiveOpInterface op : collectives)
      assign(op);
  }

  void assign(CollectiveOpInterface op) {
    MLIRContext *ctx = op.getContext();
    Value result = op.getResult();
    Block *block = op->getBlock();
    Operation *firstUser = firstUserInBlock(result, block);
    StreamKind stream = op.getStream().value_or(streamByRole(op));
    if (stream == StreamKind::Compute || firstUser == op->getNextNode()) {
      op->removeAttr("stream");
      ++numSync;
      return;
    }

    op->setAttr("stream", StreamKindAttr::get(ctx, stream));
    auto tensorType = cast<RankedTensorType>(result.getType());
    result.setType(FutureType::get(ctx, tensorType));
    OpBuilder b(ctx);
    if (firstUser)
      b.setInsertionPoint(firstUser);
    else if (block->mightHaveTerminator())
      b.setInsertionPoint(block->getTerminator());
    else
      b.setInsertionPointToEnd(block);
    auto wait = WaitOp::create(b, op.getLoc(), tensorType, result);
    result.replaceAllUsesExcept(wait.getResult(), wait);
    ++numAsync;
  }
};
} // namespace
