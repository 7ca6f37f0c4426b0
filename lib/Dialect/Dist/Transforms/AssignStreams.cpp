//===- AssignStreams.cpp - explicit streams and completion points ---------===//
//
// Implements --dist-assign-streams: collectives leave the compute stream by
// returning a future, and a dist.wait placed right before the first use of
// the result is the one point where the compute stream waits for them.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/Transforms/CompletedPass.h"
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

/// The first op of `block` that uses `value` (directly or in a region), by
/// the walk positions in `position`.
static Operation *
firstUserInBlock(Value value, Block *block,
                 const llvm::DenseMap<Operation *, unsigned> &position) {
  Operation *first = nullptr;
  for (Operation *user : value.getUsers()) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (ancestor &&
        (!first || position.lookup(ancestor) < position.lookup(first)))
      first = ancestor;
  }
  return first;
}

/// Whether an op between `op` and `end` (exclusive; the block's end when
/// null) other than a wait reads a tensor: ops that do not (constants, seeds,
/// coordinates, index arithmetic) take no time a collective could hide
/// behind, and a wait only completes other communication, so going
/// asynchronous across only them would cost a request and a wait for nothing.
static bool hasWorkBefore(Operation *op, Operation *end) {
  for (Operation *next = op->getNextNode(); next && next != end;
       next = next->getNextNode()) {
    if (!isa<WaitOp>(next) &&
        llvm::any_of(next->getOperandTypes(), [](Type type) {
          return isa<TensorType, FutureType>(type);
        }))
      return true;
  }
  return false;
}

namespace {
struct DistAssignStreamsPass
    : public CompletedPass<
          dist::impl::DistAssignStreamsBase<DistAssignStreamsPass>> {
  using CompletedPass::CompletedPass;

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

  void runOnCompleted(func::FuncOp func) override {
    // Positions from one walk, taken before any wait is inserted, so that
    // finding first users costs one lookup per use and never depends on
    // MLIR renumbering a block's op order while waits go in.
    llvm::DenseMap<Operation *, unsigned> position;
    SmallVector<CollectiveOpInterface> collectives;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      position[op] = position.size();
      if (auto collective = dyn_cast<CollectiveOpInterface>(op))
        if (!collective.isAsync())
          collectives.push_back(collective);
    });
    SmallVector<Operation *> firstUsers;
    for (CollectiveOpInterface op : collectives)
      firstUsers.push_back(
          firstUserInBlock(op.getResult(), op->getBlock(), position));
    for (auto [op, firstUser] : llvm::zip_equal(collectives, firstUsers))
      assign(op, firstUser);
  }

  void assign(CollectiveOpInterface op, Operation *firstUser) {
    MLIRContext *ctx = op.getContext();
    Value result = op.getResult();
    Block *block = op->getBlock();
    StreamKind stream = op.getStream().value_or(streamByRole(op));
    if (stream == StreamKind::Compute || !hasWorkBefore(op, firstUser)) {
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
