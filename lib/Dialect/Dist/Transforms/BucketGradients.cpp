//===- BucketGradients.cpp - fuse gradient collectives into buckets -------===//
//
// Implements --dist-bucket-gradients. A bucket is formed from the
// collectives' operands in the order they become ready, as DDP's reducer
// fills its buckets in the order autograd produces gradients; its one
// collective is issued when the last of them is ready and completed before
// the first use of any of its results.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Transforms/CompletedPass.h"
#include "dist/Dialect/Dist/Transforms/Packing.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

#include <limits>

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTBUCKETGRADIENTS
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

static constexpr llvm::StringLiteral kRewriteTag = "dist-bucket-gradients";

namespace {
/// A collective that may join a bucket, with where its operand is ready and
/// where its result is first used (positions in its block).
struct Candidate {
  Operation *op;
  int64_t ready;
  int64_t firstUse;
  int64_t bytes;
};

/// What must be equal for collectives to share a bucket: what they do and
/// how their operands are distributed.
struct BucketKey {
  OperationName name;
  Attribute mesh;
  SmallVector<int64_t> axes;
  int64_t kind;
  Type element;
  /// How the operands are distributed, as dist.pack requires it alike:
  /// the axes that split them and the partial axes.
  SmallVector<int64_t> splitAxes;
  SmallVector<std::pair<int64_t, ReductionKind>> partial;
};

struct Bucket {
  SmallVector<Candidate> members;
  int64_t bytes = 0;
  int64_t firstUse = std::numeric_limits<int64_t>::max();
};
} // namespace

/// Whether `op` is a collective the pass fuses: synchronous, over
/// data-parallel axes only, on a static operand; a reduce-scatter must
/// scatter the rows of a packed buffer.
static bool isCandidate(Operation *op, ArrayRef<std::string> dpNames) {
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  if (!collective || collective.isAsync() ||
      !isa<AllReduceOp, ReduceScatterOp>(op))
    return false;
  MeshAttr mesh = collective.getMesh();
  ArrayRef<StringAttr> names = mesh.getNames();
  if (names.empty() || collective.getAxes().empty())
    return false;
  for (int64_t axis : collective.getAxes())
    if (!llvm::is_contained(dpNames, names[axis].getValue()))
      return false;
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!in || !in.hasStaticShape())
    return false;
  if (auto scatter = dyn_cast<ReduceScatterOp>(op)) {
    auto out = cast<RankedTensorType>(scatter.getType());
    TensorDistAttr inDist = getTensorDist(in), outDist = getTensorDist(out);
    if (in.getRank() != 2 || scatter.getAxes().size() != 1 || !inDist ||
        !outDist || inDist.getMeshAxis(0) != -1 ||
        outDist.getMeshAxis(0) != scatter.getAxes()[0] ||
        out.getDimSize(0) != 1)
      return false;
  }
  return true;
}

static BucketKey keyOf(Operation *op) {
  auto collective = cast<CollectiveOpInterface>(op);
  int64_t kind = -1;
  if (auto reduce = dyn_cast<AllReduceOp>(op))
    kind = static_cast<int64_t>(reduce.getKind());
  if (auto scatter = dyn_cast<ReduceScatterOp>(op))
    kind = static_cast<int64_t>(scatter.getKind());
  auto in = cast<RankedTensorType>(op->getOperand(0).getType());
  TensorDistAttr dist = getTensorDist(in);
  return BucketKey{op->getName(),
                   collective.getMesh(),
                   llvm::to_vector(collective.getAxes()),
                   kind,
                   in.getElementType(),
                   splitAxesOf(in),
                   dist ? dist.getPartials()
                        : SmallVector<std::pair<int64_t, ReductionKind>>()};
}

static bool sameKey(const BucketKey &a, const BucketKey &b) {
  return a.name == b.name && a.mesh == b.mesh && a.axes == b.axes &&
         a.kind == b.kind && a.element == b.element &&
         a.splitAxes == b.splitAxes && a.partial == b.partial;
}

/// The buffer an allreduce bucket packs its operands into (one row): the
/// operands' split axes on its two dims, their partial axes. Failure when
/// more than two axes split them.
static FailureOr<RankedTensorType> allReduceBuffer(ArrayRef<Candidate> members,
                                                   MeshAttr mesh) {
  SmallVector<Type> inputs;
  for (const Candidate &c : members)
    inputs.push_back(c.op->getOperand(0).getType());
  SmallVector<int64_t> split = splitAxesOf(inputs.front());
  FailureOr<SmallVector<int64_t, 2>> dims =
      split.size() == 2 ? bufferDims(ArrayRef(split).drop_front(), split[0])
                        : bufferDims(split, -1);
  if (failed(dims))
    return failure();
  TensorDistAttr dist = getTensorDist(inputs.front());
  SmallVector<std::pair<int64_t, ReductionKind>> partial;
  if (dist)
    partial = dist.getPartials();
  return packedType(inputs, 1, dist ? mesh : MeshAttr(), *dims, partial);
}

/// Replaces the bucket's collectives with one: pack, collective, unpack.
static LogicalResult emitBucket(const Bucket &bucket, Block &block,
                                ArrayRef<Operation *> ops,
                                SmallVectorImpl<Operation *> &erased) {
  Operation *first = bucket.members.front().op;
  auto collective = cast<CollectiveOpInterface>(first);
  MeshAttr mesh = collective.getMesh();
  int64_t ready = -1;
  for (const Candidate &c : bucket.members)
    ready = std::max(ready, c.ready);
  OpBuilder b(first->getContext());
  if (ready < 0)
    b.setInsertionPointToStart(&block);
  else
    b.setInsertionPointAfter(ops[ready]);
  Location loc = rewriteLoc(first->getLoc(), kRewriteTag);
  SmallVector<Value> inputs;
  SmallVector<Type> resultTypes;
  for (const Candidate &c : bucket.members) {
    inputs.push_back(c.op->getOperand(0));
    resultTypes.push_back(c.op->getResult(0).getType());
  }
  Value result;
  if (auto reduce = dyn_cast<AllReduceOp>(first)) {
    FailureOr<RankedTensorType> buffer = allReduceBuffer(bucket.members, mesh);
    if (failed(buffer))
      return failure();
    Value packed = PackOp::create(b, loc, *buffer, inputs);
    RankedTensorType reducedType = *buffer;
    if (TensorDistAttr dist = getTensorDist(*buffer))
      reducedType = withTensorDist(*buffer, dist.dropPartial(reduce.getAxes()));
    result = AllReduceOp::create(b, loc, reducedType, packed, mesh,
                                 reduce.getAxes(), reduce.getKind(), nullptr);
  } else {
    auto scatter = cast<ReduceScatterOp>(first);
    auto in = cast<RankedTensorType>(scatter.getInput().getType());
    auto out = cast<RankedTensorType>(scatter.getType());
    SmallVector<Type> inputTypes =
        llvm::to_vector(ValueRange(inputs).getTypes());
    int64_t rows = in.getDimSize(0);
    RankedTensorType buffer = withTensorDist(
        packedType(inputTypes, rows, MeshAttr(), {}), getTensorDist(in));
    Value packed = PackOp::create(b, loc, buffer, inputs);
    auto shardType =
        withTensorDist(RankedTensorType::get({1, buffer.getDimSize(1)},
                                             buffer.getElementType()),
                       getTensorDist(out));
    result =
        ReduceScatterOp::create(b, loc, shardType, packed, mesh,
                                scatter.getAxes(), scatter.getKind(), nullptr);
  }
  b.setInsertionPoint(ops[bucket.firstUse]);
  auto unpack = UnpackOp::create(b, loc, resultTypes, result);
  for (auto [c, value] : llvm::zip_equal(bucket.members, unpack.getResults())) {
    c.op->getResult(0).replaceAllUsesWith(value);
    erased.push_back(c.op);
  }
  return success();
}

namespace {
struct DistBucketGradientsPass
    : public CompletedPass<
          dist::impl::DistBucketGradientsBase<DistBucketGradientsPass>> {
  using CompletedPass::CompletedPass;

  void bucketBlock(Block &block) {
    SmallVector<Operation *> ops;
    llvm::DenseMap<Operation *, int64_t> position;
    for (Operation &op : block) {
      position[&op] = ops.size();
      ops.push_back(&op);
    }
    auto where = [&](Operation *op) {
      Operation *ancestor = op ? block.findAncestorOpInBlock(*op) : nullptr;
      return ancestor ? position.lookup(ancestor) : int64_t(-1);
    };
    SmallVector<Candidate> candidates;
    for (Operation *op : ops) {
      // A collective of a collective's result waits for that one: it is
      // left alone rather than ordered against its bucket.
      if (!isCandidate(op, dpAxes))
        continue;
      Operation *def = op->getOperand(0).getDefiningOp();
      if (def && isCandidate(def, dpAxes))
        continue;
      Candidate c{op, where(op->getOperand(0).getDefiningOp()),
                  static_cast<int64_t>(ops.size()) - 1, 0};
      for (Operation *user : op->getResult(0).getUsers())
        if (int64_t at = where(user); at >= 0)
          c.firstUse = std::min(c.firstUse, at);
      auto in = cast<RankedTensorType>(op->getOperand(0).getType());
      c.bytes = in.getNumElements() *
                llvm::divideCeil(in.getElementTypeBitWidth(), 8);
      candidates.push_back(c);
    }
    llvm::sort(candidates, [&](const Candidate &a, const Candidate &b) {
      return std::make_pair(a.ready, position.lookup(a.op)) <
             std::make_pair(b.ready, position.lookup(b.op));
    });
    auto toBytes = [](double mib) {
      return static_cast<int64_t>(mib * 1024.0 * 1024.0);
    };
    std::vector<std::pair<BucketKey, Bucket>> open;
    SmallVector<Bucket> closed;
    auto close = [&](Bucket &bucket) {
      if (bucket.members.size() > 1)
        closed.push_back(bucket);
      bucket = Bucket();
    };
    int64_t numClosed = 0;
    for (const Candidate &c : candidates) {
      BucketKey key = keyOf(c.op);
      auto it = llvm::find_if(
          open, [&](const auto &entry) { return sameKey(entry.first, key); });
      if (it == open.end()) {
        open.push_back({key, Bucket()});
        it = std::prev(open.end());
      }
      Bucket &bucket = it->second;
      // A member's result used before this operand is ready cannot wait
      // for it.
      if (!bucket.members.empty() && bucket.firstUse <= c.ready) {
        close(bucket);
        ++numClosed;
      }
      bucket.members.push_back(c);
      bucket.bytes += c.bytes;
      bucket.firstUse = std::min(bucket.firstUse, c.firstUse);
      int64_t cap = toBytes(numClosed == 0 ? firstBucketMb : bucketMb);
      if (bucket.bytes >= cap) {
        close(bucket);
        ++numClosed;
      }
    }
    for (auto &entry : open)
      close(entry.second);
    // The fused collectives stay until every bucket is placed: a bucket's
    // place may be next to one of them.
    SmallVector<Operation *> erased;
    for (const Bucket &bucket : closed) {
      if (failed(emitBucket(bucket, block, ops, erased)))
        continue;
      ++numBuckets;
      numFused += bucket.members.size();
    }
    for (Operation *op : erased)
      op->erase();
  }

  void runOnCompleted(func::FuncOp func) override {
    if (!(bucketMb > 0.0) || !(firstBucketMb > 0.0)) {
      func.emitError("--dist-bucket-gradients: bucket-mb and first-bucket-mb "
                     "must be positive, got ")
          << static_cast<double>(bucketMb) << " and "
          << static_cast<double>(firstBucketMb);
      return signalPassFailure();
    }
    SmallVector<Block *> blocks;
    func.walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      bucketBlock(*block);
  }
};
} // namespace
