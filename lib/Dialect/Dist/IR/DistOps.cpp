//===- DistOps.cpp - dist operations --------------------------------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/AxisState.h"
#include "dist/Dialect/Dist/IR/MatmulGeometry.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"
#include "dist/Dialect/Dist/IR/SignatureCache.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::dist;

#include "dist/Dialect/Dist/IR/DistInterfaces.cpp.inc"

RankedTensorType CollectiveOpInterface::getResultTensorType() {
  Type type = getResult().getType();
  if (auto future = dyn_cast<FutureType>(type))
    return future.getValueType();
  return cast<RankedTensorType>(type);
}

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// Parses a mesh written in full (`#dist.mesh<...>`) or as an alias (`#mesh`).
static ParseResult parseMeshRef(OpAsmParser &parser, MeshAttr &mesh) {
  return parser.parseAttribute(mesh);
}

/// Prints the mesh as a full attribute so that the alias printer can use
/// `#mesh`; the default would print it stripped and inline.
static void printMeshRef(OpAsmPrinter &printer, Operation *, MeshAttr mesh) {
  printer.printAttribute(mesh);
}

//===----------------------------------------------------------------------===//
// Shared verification
//===----------------------------------------------------------------------===//

std::string mlir::dist::shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << '?';
    else
      os << d;
  });
  os << ']';
  return s;
}

/// Axes must be a non-empty list of distinct axes of `mesh`.
static LogicalResult verifyMeshAxes(Operation *op, MeshAttr mesh,
                                    ArrayRef<int64_t> axes) {
  if (axes.empty())
    return op->emitOpError("expects at least one mesh axis");
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= mesh.getRank())
      return op->emitOpError("mesh axis ")
             << axis << " is out of range for a mesh of rank "
             << mesh.getRank();
    if (!seen.insert(axis).second)
      return op->emitOpError("mesh axis ") << axis << " appears more than once";
  }
  return success();
}

/// In a function completion has yet to decide (`dist.complete`), a
/// collective with an undecided (unencoded) tensor is checked once
/// --dist-complete has decided it; its mesh axes are checked now, as
/// completion reads them.
template <typename OpT>
static std::optional<LogicalResult> verifyAwaitingCompletion(OpT op) {
  if (!rules::isAwaitingCompletion(op))
    return std::nullopt;
  return verifyMeshAxes(op, op.getMesh(), op.getAxes());
}

/// A tensor encoding, when present, must be on the op's mesh.
static LogicalResult verifyOnMesh(Operation *op, TensorDistAttr dist,
                                  MeshAttr mesh, StringRef what) {
  if (dist && dist.getMesh() != mesh)
    return op->emitOpError()
           << what << " is distributed on mesh " << dist.getMesh()
           << ", not on the op's mesh " << mesh;
  return success();
}

static LogicalResult verifyWaitedOnce(Operation *op, Value future);

/// An asynchronous collective runs on a communication stream and is
/// completed by exactly one dist.wait in its own block, before which nothing
/// reads its result.
static LogicalResult verifyAsync(CollectiveOpInterface op) {
  if (!op.isAsync())
    return success();
  std::optional<StreamKind> stream = op.getStream();
  if (!stream || *stream == StreamKind::Compute)
    return op->emitOpError("is asynchronous (returns a future) but is not on "
                           "a communication stream");
  return verifyWaitedOnce(op, op.getResult());
}

static LogicalResult verifyWaitedOnce(Operation *op, Value future) {
  WaitOp wait;
  for (Operation *user : future.getUsers()) {
    if (!isa<WaitOp>(user))
      return op->emitOpError("result is used by '")
             << user->getName() << "' before a dist.wait completes it";
    if (wait)
      return op->emitOpError("result is waited for more than once");
    wait = cast<WaitOp>(user);
  }
  if (!wait)
    return op->emitOpError("result is never waited for");
  if (wait->getBlock() != op->getBlock())
    return op->emitOpError("result is waited for in another block; a future "
                           "may not leave the block of its collective");
  return success();
}

/// Shape, element type and presence of a distribution encoding shared by
/// the operand and result of every collective.
static LogicalResult verifyCollectiveTypes(CollectiveOpInterface op) {
  Operation *operation = op.getOperation();
  RankedTensorType in = op.getInput().getType();
  RankedTensorType out = op.getResultTensorType();
  if (in.getElementType() != out.getElementType())
    return operation->emitOpError("result element type ")
           << out.getElementType() << " differs from the operand's "
           << in.getElementType();
  if (failed(verifyCompatibleShape(in.getShape(), out.getShape())))
    return operation->emitOpError("result shape ")
           << shapeString(out.getShape()) << " differs from the operand's "
           << shapeString(in.getShape());
  TensorDistAttr inDist = getTensorDist(in), outDist = getTensorDist(out);
  if (static_cast<bool>(inDist) != static_cast<bool>(outDist))
    return operation->emitOpError(
        "operand and result must both have a #dist.tensor encoding or neither");
  if (failed(verifyMeshAxes(operation, op.getMesh(), op.getAxes())) ||
      failed(verifyOnMesh(operation, inDist, op.getMesh(), "operand")) ||
      failed(verifyOnMesh(operation, outDist, op.getMesh(), "result")))
    return failure();
  return success();
}

/// Collectives that only move data leave the distribution as it is.
static LogicalResult verifyDistUnchanged(CollectiveOpInterface op) {
  if (getTensorDist(op.getInput().getType()) !=
      getTensorDist(op.getResultTensorType()))
    return op->emitOpError("must not change the distribution of its operand");
  return success();
}

static LogicalResult verifyOneElement(Operation *op, RankedTensorType type,
                                      StringRef what) {
  if (!type.hasStaticShape() || type.getNumElements() != 1)
    return op->emitOpError()
           << what << " must have exactly one element, got " << type;
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// Each collective's verifier (defined once, in DistOps.td) checks what only
// the op's types and attributes decide once per signature (its
// verifySignature), and what its uses decide (a future's wait) every time.

LogicalResult AllReduceOp::verifySignature() {
  if (failed(verifyCollectiveTypes(*this)))
    return failure();
  TensorDistAttr inDist = getTensorDist(getInput().getType());
  if (!inDist)
    return success();
  for (int64_t axis : getAxes()) {
    std::optional<ReductionKind> pending = inDist.getPartialKind(axis);
    if (!pending)
      return emitOpError("operand must be partial on mesh axis ")
             << axis << " that it reduces over, but its encoding is " << inDist;
    if (!reducesPartial(getKind(), *pending))
      return emitOpError("operand is partial (")
             << stringifyReductionKind(*pending) << ") on mesh axis " << axis
             << " but the allreduce reduces with "
             << stringifyReductionKind(getKind());
  }
  TensorDistAttr outDist = getTensorDist(
      cast<CollectiveOpInterface>(getOperation()).getResultTensorType());
  if (!outDist.isDropPartialOf(inDist, getAxes()))
    return emitOpError("result distribution must be the operand's with the "
                       "reduced axes no longer partial: expected ")
           << inDist.dropPartial(getAxes());
  return success();
}

LogicalResult BroadcastOp::verifySignature() {
  if (failed(verifyCollectiveTypes(*this)) ||
      failed(verifyDistUnchanged(*this)))
    return failure();
  int64_t size = mesh::groupSize(getMesh(), getAxes());
  if (getRoot() >= static_cast<uint64_t>(size))
    return emitOpError("root ")
           << getRoot() << " is out of range for a group of " << size
           << " processes";
  if (TensorDistAttr dist = getTensorDist(getInput().getType())) {
    for (int64_t axis : getAxes()) {
      if (dist.getDimOfMeshAxis(axis))
        return emitOpError("cannot broadcast along mesh axis ")
               << axis << ": the operand is split over it";
      if (dist.getPartialKind(axis))
        return emitOpError("cannot broadcast along mesh axis ")
               << axis << ": the operand is partial on it";
    }
  }
  return success();
}

LogicalResult CIdentityOp::verifySignature() {
  if (failed(verifyCollectiveTypes(*this)))
    return failure();
  return verifyDistUnchanged(*this);
}

//===----------------------------------------------------------------------===//
// Redistribution
//===----------------------------------------------------------------------===//

/// The checks every redistribution shares: encodings on both sides on the
/// op's mesh, one element type, one global shape, the axes outside its axes
/// unchanged and each of its axes making its kind's transition.
static LogicalResult verifyRedistribution(RedistributionOpInterface op,
                                          RankedTensorType out) {
  RankedTensorType in = op.getInput().getType();
  MeshAttr mesh = op.getMesh();
  ArrayRef<int64_t> axes = op.getAxes();
  TensorDistAttr inDist = getTensorDist(in), outDist = getTensorDist(out);
  if (!inDist || !outDist)
    return op->emitOpError("needs a #dist.tensor encoding on its operand and "
                           "its result: they say what it redistributes");
  if (in.getElementType() != out.getElementType())
    return op->emitOpError("result element type ")
           << out.getElementType() << " differs from the operand's "
           << in.getElementType();
  if (failed(verifyMeshAxes(op, mesh, axes)) ||
      failed(verifyOnMesh(op, inDist, mesh, "operand")) ||
      failed(verifyOnMesh(op, outDist, mesh, "result")))
    return failure();
  SmallVector<int64_t> inGlobal = mesh::globalShape(in.getShape(), inDist);
  SmallVector<int64_t> outGlobal = mesh::globalShape(out.getShape(), outDist);
  if (failed(verifyCompatibleShape(inGlobal, outGlobal)))
    return op->emitOpError("result's global shape ")
           << shapeString(outGlobal) << " differs from the operand's "
           << shapeString(inGlobal);
  RedistributionKind kind = op.getRedistributionKind();
  std::optional<ReductionKind> reduction = op.getReduction();
  for (int64_t axis = 0; axis < mesh.getRank(); ++axis) {
    AxisState from = getAxisState(inDist, axis);
    AxisState to = getAxisState(outDist, axis);
    if (!llvm::is_contained(axes, axis)) {
      if (from != to)
        return op->emitOpError("mesh axis ")
               << axis << " is " << from << " in the operand but " << to
               << " in the result; only the axes the op runs over may change";
      continue;
    }
    if (!allowsTransition(kind, reduction, from, to))
      return op->emitOpError("mesh axis ")
             << axis << " goes from " << from << " to " << to << ", but '"
             << op->getName() << "' takes "
             << describeTransition(kind, reduction);
  }
  return success();
}

LogicalResult AllGatherOp::verifySignature() {
  return verifyRedistribution(
      *this, cast<CollectiveOpInterface>(getOperation()).getResultTensorType());
}

LogicalResult ReduceScatterOp::verifySignature() {
  return verifyRedistribution(
      *this, cast<CollectiveOpInterface>(getOperation()).getResultTensorType());
}

LogicalResult AllToAllOp::verifySignature() {
  if (getAxes().size() != 1)
    return emitOpError("moves the split of one mesh axis, but has ")
           << getAxes().size() << " axes";
  return verifyRedistribution(
      *this, cast<CollectiveOpInterface>(getOperation()).getResultTensorType());
}

LogicalResult AllSliceOp::verify() {
  if (std::optional<LogicalResult> r = verifyAwaitingCompletion(*this))
    return failed(*r) ? failure() : success();
  return checkOncePerSignature(*this, [&] { return verifySignature(); });
}

LogicalResult AllSliceOp::verifySignature() {
  return verifyRedistribution(*this, getResult().getType());
}

OpFoldResult AllSliceOp::fold(FoldAdaptor) {
  // The shard of a gather over the same axes is the gathered shard.
  auto gather = getInput().getDefiningOp<AllGatherOp>();
  if (gather && !cast<CollectiveOpInterface>(*gather).isAsync() &&
      gather.getAxes() == getAxes() &&
      gather.getInput().getType() == getResult().getType())
    return gather.getInput();
  return {};
}

LogicalResult MakePartialOp::verify() {
  if (std::optional<LogicalResult> r = verifyAwaitingCompletion(*this))
    return failed(*r) ? failure() : success();
  return checkOncePerSignature(*this, [&] { return verifySignature(); });
}

LogicalResult MakePartialOp::verifySignature() {
  return verifyRedistribution(*this, getResult().getType());
}

//===----------------------------------------------------------------------===//
// What kind of redistribution each op is (RedistributionOpInterface)
//===----------------------------------------------------------------------===//

RedistributionKind AllReduceOp::getRedistributionKind() {
  return RedistributionKind::AllReduce;
}
std::optional<ReductionKind> AllReduceOp::getReduction() { return getKind(); }
RedistributionKind BroadcastOp::getRedistributionKind() {
  return RedistributionKind::Broadcast;
}
RedistributionKind AllGatherOp::getRedistributionKind() {
  return RedistributionKind::AllGather;
}
RedistributionKind ReduceScatterOp::getRedistributionKind() {
  return RedistributionKind::ReduceScatter;
}
std::optional<ReductionKind> ReduceScatterOp::getReduction() {
  return getKind();
}
RedistributionKind AllToAllOp::getRedistributionKind() {
  return RedistributionKind::AllToAll;
}
RedistributionKind AllSliceOp::getRedistributionKind() {
  return RedistributionKind::AllSlice;
}
RedistributionKind MakePartialOp::getRedistributionKind() {
  return RedistributionKind::MakePartial;
}
std::optional<ReductionKind> MakePartialOp::getReduction() { return getKind(); }

LogicalResult ReshardOp::verify() {
  RankedTensorType in = getInput().getType(), out = getResult().getType();
  TensorDistAttr inDist = getTensorDist(in), outDist = getTensorDist(out);
  // An undecided side's global shape is not known until completion (which
  // decides both sides of a reshard written between undecided types).
  if (rules::isAwaitingCompletion(*this))
    return success();
  // An unencoded side is replicated on the other's mesh.
  if (!inDist && !outDist)
    return emitOpError("needs a #dist.tensor encoding on its operand or its "
                       "result");
  if (!inDist)
    inDist = TensorDistAttr::getReplicated(outDist.getMesh(), in.getRank());
  if (!outDist)
    outDist = TensorDistAttr::getReplicated(inDist.getMesh(), out.getRank());
  if (inDist.getMesh() != outDist.getMesh())
    return emitOpError("changes the mesh from ")
           << inDist.getMesh() << " to " << outDist.getMesh()
           << "; a reshard stays on one mesh";
  if (in.getElementType() != out.getElementType())
    return emitOpError("result element type ")
           << out.getElementType() << " differs from the operand's "
           << in.getElementType();
  SmallVector<int64_t> inGlobal = mesh::globalShape(in.getShape(), inDist);
  SmallVector<int64_t> outGlobal = mesh::globalShape(out.getShape(), outDist);
  if (failed(verifyCompatibleShape(inGlobal, outGlobal)))
    return emitOpError("result's global shape ")
           << shapeString(outGlobal) << " differs from the operand's "
           << shapeString(inGlobal);
  return success();
}

LogicalResult ConstraintOp::verify() {
  RankedTensorType in = getInput().getType(), out = getResult().getType();
  TensorDistAttr inDist = getTensorDist(in), outDist = getTensorDist(out);
  if (!outDist)
    return emitOpError("result has no #dist.tensor encoding: a constraint "
                       "pins the distribution its result type carries "
                       "(replicated is written [-1, ...])");
  if (in.getShape() != out.getShape() ||
      in.getElementType() != out.getElementType())
    return emitOpError("operand type ")
           << in << " and result type " << out
           << " differ beyond the encoding: a constraint keeps the local "
              "shape (dist.reshard changes a distribution)";
  if (inDist && inDist.getMesh() != outDist.getMesh())
    return emitOpError("changes the mesh from ")
           << inDist.getMesh() << " to " << outDist.getMesh();
  // In a marked function completion reconciles the two sides.
  auto f = (*this)->getParentOfType<FunctionOpInterface>();
  if (f && f->hasAttr(DistDialect::kCompleteAttrName))
    return success();
  if (!inDist)
    inDist = TensorDistAttr::getReplicated(outDist.getMesh(), in.getRank());
  if (inDist != outDist)
    return emitOpError("operand has ")
           << inDist << " but the constraint pins " << outDist
           << ": outside a function marked '" << DistDialect::kCompleteAttrName
           << "' a constraint only states what holds (dist.reshard changes "
              "a distribution)";
  return success();
}

OpFoldResult ConstraintOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  return {};
}

OpFoldResult ReshardOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  return {};
}

namespace {
/// A reshard of a reshard goes straight from the first operand: the planner
/// then sees the whole change (and the intermediate distribution, if
/// nothing else uses it, is never materialised).
struct ComposeReshards : OpRewritePattern<ReshardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshardOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshardOp>();
    if (!inner)
      return failure();
    rewriter.modifyOpInPlace(
        op, [&] { op.getInputMutable().assign(inner.getInput()); });
    return success();
  }
};
} // namespace

void ReshardOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<ComposeReshards>(context);
}

LogicalResult WaitOp::verify() {
  Operation *def = getFuture().getDefiningOp();
  if (!def || !isa<CollectiveOpInterface, RecvOp>(def))
    return emitOpError("waits for nothing: its future does not come from a "
                       "collective or a dist.recv");
  return success();
}

//===----------------------------------------------------------------------===//
// SendOp, RecvOp
//===----------------------------------------------------------------------===//

RankedTensorType SendOp::getTensorType() { return getInput().getType(); }

RankedTensorType RecvOp::getTensorType() {
  Type type = getResult().getType();
  if (auto future = dyn_cast<FutureType>(type))
    return future.getValueType();
  return cast<RankedTensorType>(type);
}

/// MPI promises at least this many tags (MPI_TAG_UB >= 32767).
static constexpr int64_t kMaxTransferTag = 32767;

/// What a transfer's attributes and type must say, whichever side it is.
template <typename OpT> static LogicalResult verifyTransfer(OpT op) {
  MeshAttr mesh = op.getMesh();
  int64_t axis = op.getAxis();
  if (axis >= mesh.getRank())
    return op.emitOpError("mesh axis ")
           << axis << " is out of range for a mesh of rank " << mesh.getRank();
  if (static_cast<int64_t>(op.getPeer()) >= mesh.getAxisSize(axis))
    return op.emitOpError("peer ")
           << op.getPeer() << " is not a coordinate of mesh axis " << axis
           << " (size " << mesh.getAxisSize(axis) << ")";
  if (op.getTag() > kMaxTransferTag)
    return op.emitOpError("tag ")
           << op.getTag() << " exceeds " << kMaxTransferTag
           << ", the largest tag MPI guarantees";
  TensorDistAttr dist = getTensorDist(op.getTensorType());
  if (failed(verifyOnMesh(op, dist, mesh, "the tensor")))
    return failure();
  if (dist && (dist.getDimOfMeshAxis(axis) || dist.getPartialKind(axis)))
    return op.emitOpError("transfers along mesh axis ")
           << axis << " a tensor split or partial over it: " << dist;
  return success();
}

LogicalResult SendOp::verify() { return verifyTransfer(*this); }

LogicalResult RecvOp::verify() {
  if (failed(verifyTransfer(*this)))
    return failure();
  if (isAsync())
    return verifyWaitedOnce(*this, getResult());
  return success();
}

//===----------------------------------------------------------------------===//
// ProcessCoordOp
//===----------------------------------------------------------------------===//

LogicalResult ProcessCoordOp::verify() {
  if (static_cast<int64_t>(getAxis()) >= getMesh().getRank())
    return emitOpError("mesh axis ")
           << getAxis() << " is out of range for a mesh of rank "
           << getMesh().getRank();
  return success();
}

OpFoldResult ProcessCoordOp::fold(FoldAdaptor) {
  if (static_cast<int64_t>(getAxis()) < getMesh().getRank() &&
      getMesh().getAxisSize(getAxis()) == 1)
    return IntegerAttr::get(IndexType::get(getContext()), 0);
  return {};
}

//===----------------------------------------------------------------------===//
// SeedOp
//===----------------------------------------------------------------------===//

LogicalResult SeedOp::verify() {
  RankedTensorType type = getResult().getType();
  if (type.getShape() != ArrayRef<int64_t>{1})
    return emitOpError("result must be a one-element rank-1 tensor, got ")
           << type;
  if (TensorDistAttr dist = getTensorDist(type))
    if (dist.getMeshAxis(0) != -1 || dist.isPartial())
      return emitOpError("seed must be replicated (dims_mapping [-1], not "
                         "partial), got ")
             << dist;
  return success();
}

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

/// The weight is a rank-2 table; `rows` (the lookup result or its gradient)
/// has shape `ids.shape + [weight.cols]` and the weight's element type.
static LogicalResult verifyEmbeddingRows(Operation *op, Type idsType,
                                         Type weightType, Type rowsType,
                                         StringRef rowsName) {
  auto ids = cast<RankedTensorType>(idsType);
  auto weight = cast<RankedTensorType>(weightType);
  auto rows = cast<RankedTensorType>(rowsType);
  if (weight.getRank() != 2)
    return op->emitOpError("weight must have rank 2, got rank ")
           << weight.getRank();
  SmallVector<int64_t> expected(ids.getShape());
  expected.push_back(weight.getDimSize(1));
  if (failed(verifyCompatibleShape(rows.getShape(), expected)))
    return op->emitOpError()
           << rowsName << " shape " << shapeString(rows.getShape())
           << " must be the ids shape followed by the "
              "weight's column count: "
           << shapeString(expected);
  if (rows.getElementType() != weight.getElementType())
    return op->emitOpError()
           << rowsName << " element type " << rows.getElementType()
           << " differs from the weight's " << weight.getElementType();
  return success();
}

static LogicalResult verifyWeightGrad(Operation *op, Type weightType,
                                      Type gradType) {
  auto weight = cast<RankedTensorType>(weightType);
  auto grad = cast<RankedTensorType>(gradType);
  if (failed(verifyCompatibleShape(weight.getShape(), grad.getShape())) ||
      weight.getElementType() != grad.getElementType())
    return op->emitOpError("weight gradient type ")
           << grad << " must have the weight's shape and element type";
  return success();
}

/// A lookup (embedding, c_embedding) gathers rows of its weight.
template <typename LookupOp> static LogicalResult verifyLookup(LookupOp op) {
  if (failed(verifyEmbeddingRows(op, op.getIds().getType(),
                                 op.getWeight().getType(),
                                 op.getResult().getType(), "result")))
    return failure();
  return rules::verifyDistributionRule(op);
}

/// A lookup's gradient scatters its out_grad rows into the weight's shape.
template <typename LookupGradOp>
static LogicalResult verifyLookupGrad(LookupGradOp op) {
  if (failed(verifyEmbeddingRows(op, op.getIds().getType(),
                                 op.getWeight().getType(),
                                 op.getOutGrad().getType(), "out_grad")) ||
      failed(verifyWeightGrad(op, op.getWeight().getType(),
                              op.getWeightGrad().getType())))
    return failure();
  return rules::verifyDistributionRule(op);
}

LogicalResult EmbeddingOp::verifySignature() { return verifyLookup(*this); }
LogicalResult CEmbeddingOp::verifySignature() { return verifyLookup(*this); }
LogicalResult EmbeddingGradOp::verifySignature() {
  return verifyLookupGrad(*this);
}
LogicalResult CEmbeddingGradOp::verifySignature() {
  return verifyLookupGrad(*this);
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

/// Paddle's matmul_v2 shape rule: the product of the (optionally transposed)
/// last two dims, with the leading dims broadcast.
static FailureOr<SmallVector<int64_t>>
inferMatmulShape(Operation *op, RankedTensorType x, RankedTensorType y,
                 bool transposeX, bool transposeY) {
  std::string why;
  llvm::raw_string_ostream os(why);
  std::optional<SmallVector<int64_t>> shape = matmul::resultShape(
      x.getShape(), y.getShape(), transposeX, transposeY, os);
  if (!shape)
    return op->emitOpError(why);
  return *shape;
}

static LogicalResult verifySameElementType(Operation *op, ValueRange values) {
  Type elementType = getElementTypeOrSelf(values.front().getType());
  for (Value v : values.drop_front())
    if (getElementTypeOrSelf(v.getType()) != elementType)
      return op->emitOpError("operands and results must have one element "
                             "type, got ")
             << elementType << " and " << getElementTypeOrSelf(v.getType());
  return success();
}

/// Checks that `type`, the op's `what`, has the shape of the product of the
/// op's x and y (`product` in the message).
template <typename OpTy>
static LogicalResult verifyProductShape(OpTy op, RankedTensorType type,
                                        StringRef what, StringRef product) {
  FailureOr<SmallVector<int64_t>> shape =
      inferMatmulShape(op, op.getX().getType(), op.getY().getType(),
                       op.getTransposeX(), op.getTransposeY());
  if (failed(shape))
    return failure();
  if (failed(verifyCompatibleShape(type.getShape(), *shape)))
    return op.emitOpError()
           << what << " shape " << shapeString(type.getShape())
           << " differs from the " << product << " " << shapeString(*shape);
  return success();
}

LogicalResult MatmulOp::verifySignature() {
  if (failed(verifyProductShape(*this, getResult().getType(), "result",
                                "inferred")))
    return failure();
  if (failed(verifySameElementType(*this, {getX(), getY(), getResult()})))
    return failure();
  return rules::verifyDistributionRule(*this);
}

LogicalResult MatmulGradOp::verifySignature() {
  if (failed(verifyProductShape(*this, getOutGrad().getType(), "out_grad",
                                "forward result shape")))
    return failure();
  if (failed(verifyCompatibleShape(getXGrad().getType().getShape(),
                                   getX().getType().getShape())))
    return emitOpError("x_grad shape must equal the shape of x");
  if (failed(verifyCompatibleShape(getYGrad().getType().getShape(),
                                   getY().getType().getShape())))
    return emitOpError("y_grad shape must equal the shape of y");
  if (failed(verifySameElementType(
          *this, {getX(), getY(), getOutGrad(), getXGrad(), getYGrad()})))
    return failure();
  return rules::verifyDistributionRule(*this);
}

//===----------------------------------------------------------------------===//
// DropoutOp
//===----------------------------------------------------------------------===//

LogicalResult DropoutOp::verifySignature() {
  float prob = getProb().convertToFloat();
  if (!(prob >= 0.0f && prob < 1.0f))
    return emitOpError("prob must be in [0, 1), got ") << prob;
  if (getId() && getRecomputeOf())
    return emitOpError("is either a named original (id) or a recomputation "
                       "(recompute_of), not both");
  if (getSeed()) {
    if (getFixSeed())
      return emitOpError("has both a seed operand and fix_seed; keep one");
    RankedTensorType seedType = getSeed().getType();
    if (seedType.getShape() != ArrayRef<int64_t>{1})
      return emitOpError("seed must be a one-element rank-1 tensor, got ")
             << seedType;
  }
  return rules::verifyDistributionRule(*this);
}

LogicalResult ScaleOp::verify() {
  // A NaN or infinite factor turns every element into NaN or an infinity:
  // never what a gradient average or a loss scale means.
  double factor = getFactor().convertToDouble();
  if (!std::isfinite(factor))
    return emitOpError("factor must be finite, got ")
           << (std::isnan(factor) ? "NaN"
               : factor < 0       ? "-inf"
                                  : "inf");
  return checkOncePerSignature(
      *this, [&] { return rules::verifyDistributionRule(*this); });
}

//===----------------------------------------------------------------------===//
// CheckFiniteAndUnscaleOp
//===----------------------------------------------------------------------===//

LogicalResult CheckFiniteAndUnscaleOp::verifySignature() {
  if (getOutputs().size() != getGrads().size())
    return emitOpError("expects one output per gradient, got ")
           << getOutputs().size() << " outputs for " << getGrads().size()
           << " gradients";
  for (auto [i, grad, out] :
       llvm::enumerate(getGrads().getTypes(), getOutputs().getTypes())) {
    Type elementType = getElementTypeOrSelf(grad);
    if (!elementType.isF16() && !elementType.isF32() && !elementType.isF64())
      return emitOpError("gradient #")
             << i << " has element type " << elementType
             << "; expected f16, f32 or f64";
    if (grad != out)
      return emitOpError("output #")
             << i << " has type " << out << ", expected its gradient's type "
             << grad;
  }
  if (failed(verifyOneElement(*this, getScale().getType(), "scale")) ||
      failed(verifyOneElement(*this, getFoundInf().getType(), "found_inf")))
    return failure();
  return rules::verifyDistributionRule(*this);
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

/// `value` (named `name`) must be finite and at least 0 (above 0 with
/// `positive`; below 1 with `belowOne`), or just finite with `anySign`. NaN
/// fails every comparison, so it is refused too.
static LogicalResult verifyHyperparameter(Operation *op, StringRef name,
                                          APFloat value, bool anySign,
                                          bool belowOne, bool positive) {
  double v = value.convertToDouble();
  bool ok = std::isfinite(v) && (anySign || (positive ? v > 0 : v >= 0)) &&
            (!belowOne || v < 1.0);
  if (ok)
    return success();
  SmallString<16> text;
  value.toString(text);
  InFlightDiagnostic diag = op->emitOpError() << name << " must be ";
  if (belowOne)
    diag << "in [0, 1)";
  else if (anySign)
    diag << "finite";
  else
    diag << "finite and " << (positive ? "> 0" : ">= 0");
  return diag << ", got " << text;
}

LogicalResult SgdOp::verifySignature() {
  if (failed(verifyHyperparameter(*this, "lr", getLr(), true, false, false)) ||
      failed(verifyHyperparameter(*this, "momentum", getMomentum(), false, true,
                                  false)) ||
      failed(verifyHyperparameter(*this, "weight_decay", getWeightDecay(),
                                  false, false, false)))
    return failure();
  return rules::verifyDistributionRule(*this);
}

LogicalResult AdamWOp::verifySignature() {
  if (failed(verifyHyperparameter(*this, "lr", getLr(), true, false, false)) ||
      failed(verifyHyperparameter(*this, "beta1", getBeta1(), false, true,
                                  false)) ||
      failed(verifyHyperparameter(*this, "beta2", getBeta2(), false, true,
                                  false)) ||
      failed(verifyHyperparameter(*this, "epsilon", getEpsilon(), false, false,
                                  true)) ||
      failed(verifyHyperparameter(*this, "weight_decay", getWeightDecay(),
                                  false, false, false)))
    return failure();
  return rules::verifyDistributionRule(*this);
}

//===----------------------------------------------------------------------===//
// PackOp, UnpackOp
//===----------------------------------------------------------------------===//

/// The mesh axes splitting a tensor distributed as `dist` (none without
/// one).
static SmallVector<int64_t> splitAxes(TensorDistAttr dist) {
  return dist ? dist.getSplitAxes() : SmallVector<int64_t>();
}

/// Checks a pack or unpack: `buffer` is the 2-D buffer of rows, `tensors`
/// the packed tensors (`what` names them: "input" or "result").
static LogicalResult verifyPacking(Operation *op, RankedTensorType buffer,
                                   TypeRange tensors, StringRef what) {
  if (tensors.empty())
    return op->emitOpError("needs at least one ") << what;
  if (buffer.getRank() != 2 || !buffer.hasStaticShape())
    return op->emitOpError("buffer must be a static 2-D tensor of rows, got ")
           << buffer;
  int64_t rows = buffer.getDimSize(0);
  if (rows < 1)
    return op->emitOpError("buffer must have at least one row, got ") << buffer;
  Type element = buffer.getElementType();
  TensorDistAttr bufferDist = getTensorDist(buffer);
  bool awaiting = rules::isAwaitingCompletion(op);
  int64_t columns = 0;
  for (auto [i, type] : llvm::enumerate(tensors)) {
    auto tensor = cast<RankedTensorType>(type);
    if (tensor.getElementType() != element)
      return op->emitOpError()
             << what << " #" << i << " has element type "
             << tensor.getElementType() << ", the buffer " << element;
    if (!tensor.hasStaticShape())
      return op->emitOpError() << what << " #" << i << " has the dynamic shape "
                               << tensor << "; packing needs static shapes";
    std::optional<int64_t> numel = 1;
    for (int64_t size : tensor.getShape())
      numel = numel ? llvm::checkedMul(*numel, size) : std::nullopt;
    if (!numel)
      return op->emitOpError()
             << what << " #" << i << " (" << tensor
             << ") has more elements than a 64-bit count holds";
    int64_t chunk = llvm::divideCeil(*numel, rows);
    if (chunk > std::numeric_limits<int64_t>::max() - columns)
      return op->emitOpError("buffer has more columns than a 64-bit count "
                             "holds");
    columns += chunk;
    if (awaiting)
      continue;
    TensorDistAttr dist = getTensorDist(tensor);
    if (dist && bufferDist && dist.getMesh() != bufferDist.getMesh())
      return op->emitOpError()
             << what << " #" << i << " is distributed on mesh "
             << dist.getMesh() << ", the buffer on " << bufferDist.getMesh();
    if (splitAxes(dist) != splitAxes(bufferDist))
      return op->emitOpError()
             << what << " #" << i << " (" << tensor
             << ") is split over other mesh axes than the buffer (" << buffer
             << "): each process packs its own shards, so the buffer is "
                "split over exactly the axes that split every tensor";
    auto partials = [](TensorDistAttr d) {
      return d ? d.getPartials()
               : SmallVector<std::pair<int64_t, ReductionKind>>();
    };
    if (partials(dist) != partials(bufferDist))
      return op->emitOpError()
             << what << " #" << i << " (" << tensor
             << ") is partial otherwise than the buffer (" << buffer << ")";
  }
  if (columns != buffer.getDimSize(1))
    return op->emitOpError("buffer has ")
           << buffer.getDimSize(1) << " columns; " << rows << " rows of the "
           << what << "s' chunks need " << columns;
  return success();
}

LogicalResult PackOp::verify() {
  return checkOncePerSignature(*this, [&] {
    return verifyPacking(*this, getType(), getInputs().getTypes(), "input");
  });
}

LogicalResult UnpackOp::verify() {
  return checkOncePerSignature(*this, [&] {
    return verifyPacking(*this, getInput().getType(), getResults().getTypes(),
                         "result");
  });
}

LogicalResult UnpackOp::fold(FoldAdaptor,
                             SmallVectorImpl<OpFoldResult> &results) {
  // Unpacking what was just packed gives the packed tensors back.
  auto pack = getInput().getDefiningOp<PackOp>();
  if (!pack || pack.getInputs().getTypes() != getResults().getTypes())
    return failure();
  llvm::append_range(results, pack.getInputs());
  return success();
}

#define GET_OP_CLASSES
#include "dist/Dialect/Dist/IR/DistOps.cpp.inc"
