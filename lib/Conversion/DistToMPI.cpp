//===- DistToMPI.cpp - lower dist communication to MPI --------------------===//
//
// Implements --convert-dist-to-mpi and its patterns. A process finds its
// mesh coordinates from its MPI rank with the mesh-indexing builders; each
// (mesh, axes) group is a communicator from the runtime, split from
// MPI_COMM_WORLD with the index of the group as color and the position in
// it as key, so communicator ranks follow mesh::processGroup's order.
// Synchronous collectives are `mpi.allreduce`; asynchronous ones call the
// runtime (include/dist/Runtime/DistRuntime.h), since MLIR 22's mpi dialect
// has no non-blocking allreduce.
//
//===----------------------------------------------------------------------===//

#include "dist/Conversion/DistToMPI.h"
#include "dist/Analysis/PipelineCheck.h"
#include "dist/Conversion/MPIMemoryEffects.h"
#include "dist/Conversion/Passes.h"
#include "dist/Conversion/RuntimeCalls.h"
#include "dist/Conversion/TensorBuilders.h"
#include "dist/Conversion/TypeConversion.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/Transforms/CompletedPass.h"
#include "dist/Dialect/Dist/Utils/MeshIndexing.h"
#include "dist/Runtime/DistRuntime.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/xxhash.h"

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_CONVERTDISTTOMPI
#include "dist/Conversion/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

//===----------------------------------------------------------------------===//
// Shared state
//===----------------------------------------------------------------------===//

Value mlir::dist::buildWorldRank(OpBuilder &b, Location loc) {
  Value world =
      mpi::CommWorldOp::create(b, loc, mpi::CommType::get(b.getContext()));
  Value rank =
      mpi::CommRankOp::create(b, loc, Type(), b.getI32Type(), world).getRank();
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), rank);
}

static Operation *enclosingFunction(Operation *op) {
  return op->getParentWithTrait<OpTrait::IsIsolatedFromAbove>();
}

void DistToMPIState::setFunctionEntryInsertionPoint(OpBuilder &b,
                                                    Operation *func) {
  if (Operation *last = lastEntryOp.lookup(func))
    b.setInsertionPointAfter(last);
  else
    b.setInsertionPointToStart(&func->getRegion(0).front());
}

void DistToMPIState::recordFunctionEntryValue(Operation *func, Value value) {
  lastEntryOp[func] = value.getDefiningOp();
}

SmallVector<Value> DistToMPIState::getCoords(OpBuilder &b, Operation *user,
                                             MeshAttr mesh) {
  Operation *func = enclosingFunction(user);
  SmallVector<Value> &cached = coords[{func, mesh}];
  if (!cached.empty())
    return cached;
  OpBuilder::InsertionGuard guard(b);
  setFunctionEntryInsertionPoint(b, func);
  Location loc = func->getLoc();
  Value rank = buildWorldRank(b, loc);
  // A rank value always has a position (0 for a rank outside the mesh,
  // which --convert-dist-to-mpi's world-size check rules out).
  OpFoldResult position = *mesh::buildPosition(b, loc, mesh, rank);
  for (OpFoldResult c : mesh::buildCoords(b, loc, mesh, position))
    cached.push_back(getValueOrCreateConstantIndexOp(b, loc, c));
  recordFunctionEntryValue(func, cached.back());
  return cached;
}

Value DistToMPIState::getComm(OpBuilder &b, Operation *user, MeshAttr mesh,
                              ArrayRef<int64_t> axes) {
  Operation *func = enclosingFunction(user);
  Attribute axesAttr = b.getDenseI64ArrayAttr(axes);
  Value &comm = comms[{func, mesh, axesAttr}];
  if (comm)
    return comm;
  SmallVector<OpFoldResult> coords =
      getAsOpFoldResult(ValueRange(getCoords(b, user, mesh)));
  OpBuilder::InsertionGuard guard(b);
  setFunctionEntryInsertionPoint(b, func);
  auto [it, inserted] =
      groupIds.try_emplace({mesh, axesAttr}, int64_t(groupIds.size()));
  comm = buildCommGet(b, user, func->getLoc(), mesh, axes, coords, it->second);
  if (!comm)
    return Value();
  recordFunctionEntryValue(func, comm);
  return comm;
}

Value DistToMPIState::buildCommGet(OpBuilder &b, Operation *user, Location loc,
                                   MeshAttr mesh, ArrayRef<int64_t> axes,
                                   ArrayRef<OpFoldResult> coords,
                                   int64_t groupId) {
  auto i64 = b.getI64Type();
  auto toI64 = [&](OpFoldResult index) -> Value {
    Value v = getValueOrCreateConstantIndexOp(b, loc, index);
    return arith::IndexCastOp::create(b, loc, i64, v);
  };
  Value group = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(groupId));
  Value color = toI64(mesh::buildLinearIndex(b, loc, mesh, coords,
                                             mesh::complementAxes(mesh, axes)));
  Value key = toI64(mesh::buildLinearIndex(b, loc, mesh, coords, axes));
  func::FuncOp get = getRuntimeFunction(
      b, user, DIST_RUNTIME_COMM_GET,
      b.getFunctionType({i64, i64, i64}, {mpi::CommType::get(b.getContext())}),
      /*cInterface=*/false);
  if (!get)
    return Value();
  return func::CallOp::create(b, loc, get, ValueRange{group, color, key})
      .getResult(0);
}

LogicalResult DistToMPIState::createAllComms(OpBuilder &b, func::FuncOp entry) {
  if (groupIds.empty() || entry.isExternal())
    return success();
  SmallVector<std::pair<int64_t, std::pair<Attribute, Attribute>>> groups;
  for (auto &[key, id] : groupIds)
    groups.push_back({id, key});
  llvm::sort(groups, llvm::less_first());
  OpBuilder::InsertionGuard guard(b);
  Block &front = entry.getBody().front();
  // After MPI_Init where an earlier lowering put it.
  auto inits = front.getOps<mpi::InitOp>();
  if (inits.empty())
    b.setInsertionPointToStart(&front);
  else
    b.setInsertionPointAfter(*inits.begin());
  Location loc = entry.getLoc();
  Value rank = buildWorldRank(b, loc);
  llvm::DenseMap<Attribute, SmallVector<OpFoldResult>> coordsOf;
  for (auto &[id, key] : groups) {
    auto mesh = cast<MeshAttr>(key.first);
    ArrayRef<int64_t> axes = cast<DenseI64ArrayAttr>(key.second).asArrayRef();
    SmallVector<OpFoldResult> &coords = coordsOf[mesh];
    if (coords.empty()) {
      OpFoldResult position = *mesh::buildPosition(b, loc, mesh, rank);
      coords = mesh::buildCoords(b, loc, mesh, position);
    }
    if (!buildCommGet(b, entry, loc, mesh, axes, coords, id))
      return failure();
  }
  return success();
}

func::FuncOp DistToMPIState::getRuntimeFunction(OpBuilder &b, Operation *user,
                                                StringRef name,
                                                FunctionType type,
                                                bool cInterface) {
  func::FuncOp &decl = runtimeFunctions[name];
  if (!decl)
    decl = getOrDeclareRuntimeFunction(b, user, name, type, cInterface);
  return decl;
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

/// `tensor` as a read-only 1-D buffer: MLIR 22's MPI-to-LLVM lowering
/// counts only the first dimension of a memref.
static Value flatten(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  Value buffer = bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                                   /*read_only=*/true);
  auto flatType =
      MemRefType::get({type.getNumElements()}, type.getElementType());
  if (type.getRank() == 0)
    return memref::ExpandShapeOp::create(b, loc, flatType, buffer,
                                         ArrayRef<ReassociationIndices>{});
  if (type.getRank() == 1)
    return buffer;
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    all[0].push_back(d);
  return memref::CollapseShapeOp::create(b, loc, buffer, all);
}

/// The tensor of `type` held by the 1-D buffer `flat`.
static Value unflatten(OpBuilder &b, Location loc, Value flat,
                       RankedTensorType type) {
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  Value shaped = flat;
  if (type.getRank() == 0) {
    shaped = memref::CollapseShapeOp::create(b, loc, flat,
                                             ArrayRef<ReassociationIndices>{});
  } else if (type.getRank() > 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      all[0].push_back(d);
    shaped = memref::ExpandShapeOp::create(b, loc, memrefType, flat, all);
  }
  return bufferization::ToTensorOp::create(b, loc, type, shaped,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

/// `tensor` converted elementwise to element type `to` (exactly, for the
/// widenings getReductionElementType picks, and rounding once on the way
/// back).
static Value convertElements(OpBuilder &b, Location loc, Value tensor,
                             Type to) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Type from = type.getElementType();
  if (from == to)
    return tensor;
  auto result = RankedTensorType::get(type.getShape(), to);
  if (isa<FloatType>(from))
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? arith::ExtFOp::create(b, loc, result, tensor).getResult()
               : arith::TruncFOp::create(b, loc, result, tensor).getResult();
  if (from.getIntOrFloatBitWidth() > to.getIntOrFloatBitWidth())
    return arith::TruncIOp::create(b, loc, result, tensor);
  // i1 is a flag (MAX is any, MIN is all); wider integers are signed.
  if (from.isInteger(1))
    return arith::ExtUIOp::create(b, loc, result, tensor);
  return arith::ExtSIOp::create(b, loc, result, tensor);
}

/// `sum / groupSize`, elementwise, for an avg allreduce.
static Value averageOver(OpBuilder &b, Location loc, Value sum,
                         int64_t groupSize) {
  auto type = cast<RankedTensorType>(sum.getType());
  auto elementType = cast<FloatType>(type.getElementType());
  Value factor = arith::ConstantOp::create(
      b, loc, elementType,
      b.getFloatAttr(elementType, 1.0 / double(groupSize)));
  return buildScaled(b, loc, sum, factor);
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

namespace {
/// What a collective reduces and how, once its kind and element type are
/// known to be lowerable.
struct Reduction {
  DistReduction kind;
  mpi::MPI_ReductionOpEnum mpiKind;
  /// The element type MPI reduces in.
  Type elementType;
};
} // namespace

// The runtime numbers streams as the dialect does, so a StreamKind crosses
// the ABI as its value.
static_assert(
    static_cast<int>(StreamKind::Compute) == DIST_STREAM_COMPUTE &&
        static_cast<int>(StreamKind::ModelParallel) == DIST_STREAM_MP &&
        static_cast<int>(StreamKind::DataParallel) == DIST_STREAM_DP &&
        static_cast<int>(StreamKind::Sharding) == DIST_STREAM_SHARDING,
    "StreamKind and DistStream (DistRuntime.h) must agree");

static DistReduction toRuntime(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return DIST_REDUCE_SUM;
  case ReductionKind::Max:
    return DIST_REDUCE_MAX;
  case ReductionKind::Min:
    return DIST_REDUCE_MIN;
  case ReductionKind::Prod:
    return DIST_REDUCE_PROD;
  case ReductionKind::Avg:
    return DIST_REDUCE_AVG;
  }
  llvm_unreachable("unknown reduction kind");
}

/// The MPI reduction of `kind`; avg is a sum that is divided afterwards.
static mpi::MPI_ReductionOpEnum toMPI(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
  case ReductionKind::Avg:
    return mpi::MPI_ReductionOpEnum::MPI_SUM;
  case ReductionKind::Max:
    return mpi::MPI_ReductionOpEnum::MPI_MAX;
  case ReductionKind::Min:
    return mpi::MPI_ReductionOpEnum::MPI_MIN;
  case ReductionKind::Prod:
    return mpi::MPI_ReductionOpEnum::MPI_PROD;
  }
  llvm_unreachable("unknown reduction kind");
}

/// Checks that `op` reduces a static shape of an element type MPI has, with
/// a kind that applies to it; emits the reason otherwise.
static FailureOr<Reduction> checkReduction(CollectiveOpInterface op,
                                           ReductionKind kind) {
  RankedTensorType type = op.getResultTensorType();
  if (!type.hasStaticShape())
    return op->emitOpError("cannot be lowered to MPI: its shape ")
           << type << " is not static";
  Type element = getReductionElementType(type.getElementType());
  if (!element)
    return op->emitOpError("cannot be lowered to MPI: no MPI reduction "
                           "for element type ")
           << type.getElementType();
  if (kind == ReductionKind::Avg && !isa<FloatType>(element))
    return op->emitOpError("cannot be lowered to MPI: an avg of integers "
                           "is not exact");
  return Reduction{toRuntime(kind), toMPI(kind), element};
}

/// With events traced, tells the runtime that the collective it was told
/// about last has been issued (a blocking one: has completed).
static LogicalResult traceIssued(DistToMPIState &state,
                                 ConversionPatternRewriter &rewriter,
                                 Operation *op) {
  if (!state.tracesEvents())
    return success();
  func::FuncOp end = state.getRuntimeFunction(
      rewriter, op, DIST_RUNTIME_TRACE_COLLECTIVE_END,
      rewriter.getFunctionType({}, {}), /*cInterface=*/false);
  if (!end)
    return failure();
  func::CallOp::create(rewriter, op->getLoc(), end, ValueRange{});
  return success();
}

/// With tracing on, tells the runtime which collective this process
/// starts: a description for reports and a signature (what, how and how
/// many) that the runtime's check compares across the group. `how` is what
/// the op does, not how it is lowered (a broadcast is a sum to which only
/// the root contributes, but reports and traces say broadcast).
static LogicalResult traceCollective(DistToMPIState &state,
                                     ConversionPatternRewriter &rewriter,
                                     CollectiveOpInterface op, StringRef how,
                                     Type elementType, int64_t count,
                                     Value comm) {
  if (!state.tracesCollectives())
    return success();
  Location loc = op.getLoc();
  std::string what;
  llvm::raw_string_ostream os(what);
  os << op->getName().getStringRef() << " ";
  if (!how.empty())
    os << how << " ";
  os << "of " << count << " x " << elementType << " over mesh axes [";
  llvm::interleaveComma(op.getAxes(), os);
  os << "]";
  std::string site = describeForRuntime(op);
  site += what.substr(op->getName().getStringRef().size());
  auto i64 = rewriter.getI64Type();
  auto string = MemRefType::get({ShapedType::kDynamic}, rewriter.getI8Type());
  func::FuncOp trace = state.getRuntimeFunction(
      rewriter, op, DIST_RUNTIME_TRACE_COLLECTIVE,
      rewriter.getFunctionType({string, i64, i64, i64, comm.getType()}, {}),
      /*cInterface=*/true);
  if (!trace)
    return failure();
  Value text = buildRuntimeString(rewriter, loc, op, site);
  // Two bits fewer, so that the runtime check may negate it.
  Value signature = arith::ConstantOp::create(
      rewriter, loc,
      rewriter.getI64IntegerAttr(int64_t(llvm::xxh3_64bits(what) >> 2)));
  Value countValue = arith::ConstantOp::create(
      rewriter, loc, rewriter.getI64IntegerAttr(count));
  int64_t stream = DIST_STREAM_COMPUTE;
  if (op.isAsync())
    stream = static_cast<int64_t>(op.getStream().value_or(StreamKind::Compute));
  Value streamValue = arith::ConstantOp::create(
      rewriter, loc, rewriter.getI64IntegerAttr(stream));
  func::CallOp::create(
      rewriter, loc, trace,
      ValueRange{text, signature, countValue, streamValue, comm});
  return success();
}

/// The runtime's suffix for a buffer of `elementType` (one of
/// getReductionElementType's results).
static StringRef runtimeSuffix(Type elementType) {
  return elementType.isF32()         ? "f32"
         : elementType.isF64()       ? "f64"
         : elementType.isInteger(32) ? "i32"
                                     : "i64";
}

/// `buffer` (1-D) as the `memref<?xT>` the runtime's functions take.
static Value anySize(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  return memref::CastOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, type.getElementType()),
      buffer);
}

namespace {
/// A collective started in the runtime: its receive buffer and request.
struct Started {
  Value recv, request;
};
} // namespace

/// Starts the runtime's non-blocking collective `prefix` (for `flat`'s
/// element type) from `flat` into a new buffer of `recvCount` elements over
/// `comm`; a reduction passes its runtime kind.
static FailureOr<Started>
startInRuntime(DistToMPIState &state, ConversionPatternRewriter &rewriter,
               Operation *op, StringRef prefix, Value flat, int64_t recvCount,
               std::optional<int64_t> reduction, Value comm) {
  Location loc = op->getLoc();
  Type element = cast<MemRefType>(flat.getType()).getElementType();
  // MPI reads the send buffer until the wait, but the runtime starts from a
  // copy of its own: bufferization may reuse the tensor's buffer, and
  // deallocation free it, as soon as the start returns. (A second read of
  // the tensor at the wait would not do: where the tensor's buffer is
  // strided, each read gets a new contiguous copy.)
  Value send = flat;
  Value recv = memref::AllocOp::create(rewriter, loc,
                                       MemRefType::get({recvCount}, element));
  auto i64 = rewriter.getI64Type();
  Value kind;
  if (reduction)
    kind = arith::ConstantOp::create(rewriter, loc,
                                     rewriter.getI64IntegerAttr(*reduction));
  SmallVector<Value> args{anySize(rewriter, loc, send),
                          anySize(rewriter, loc, recv)};
  SmallVector<Type> argTypes{args[0].getType(), args[1].getType()};
  if (kind) {
    argTypes.push_back(i64);
    args.push_back(kind);
  }
  argTypes.push_back(comm.getType());
  args.push_back(comm);
  func::FuncOp start = state.getRuntimeFunction(
      rewriter, op, (prefix + runtimeSuffix(element)).str(),
      rewriter.getFunctionType(argTypes, {i64}), /*cInterface=*/true);
  if (!start)
    return failure();
  Value request = func::CallOp::create(rewriter, loc, start, args).getResult(0);
  // A blocking collective is traced as issued after its wait (the caller
  // does that): over a network, MPI moves most of the data in the wait.
  if (cast<CollectiveOpInterface>(op).isAsync() &&
      failed(traceIssued(state, rewriter, op)))
    return failure();
  return Started{recv, request};
}

/// Waits in the runtime for the collective `op` started as `request` into
/// `recv`. The wait names the buffer MPI writes until then, so that buffer
/// deallocation frees it after the wait, never in between.
static LogicalResult waitInRuntime(DistToMPIState &state,
                                   ConversionPatternRewriter &rewriter,
                                   Operation *op, Value request, Value recv) {
  Location loc = op->getLoc();
  Value buffer = anySize(rewriter, loc, recv);
  Type element = cast<MemRefType>(recv.getType()).getElementType();
  func::FuncOp wait = state.getRuntimeFunction(
      rewriter, op,
      (Twine(DIST_RUNTIME_WAIT_PREFIX) + runtimeSuffix(element)).str(),
      rewriter.getFunctionType({rewriter.getI64Type(), buffer.getType()}, {}),
      /*cInterface=*/true);
  if (!wait)
    return failure();
  func::CallOp::create(rewriter, loc, wait, ValueRange{request, buffer});
  return success();
}

namespace {
/// A lowering pattern that reads and extends the conversion's shared state
/// (coordinates, communicators, runtime declarations).
template <typename OpTy>
class DistToMPIPattern : public OpConversionPattern<OpTy> {
public:
  DistToMPIPattern(const TypeConverter &converter, MLIRContext *ctx,
                   DistToMPIState &state)
      : OpConversionPattern<OpTy>(converter, ctx), state(state) {}

protected:
  DistToMPIState &state;
};

/// What a lowering written as a function takes: its op, its adaptor (of
/// values, or of value ranges where it reads futures), the rewriter and the
/// conversion's state.
template <typename Fn> struct LoweringSignature;
template <typename OpTy, typename Adaptor>
struct LoweringSignature<LogicalResult (*)(
    OpTy, Adaptor, ConversionPatternRewriter &, DistToMPIState &)> {
  using Op = OpTy;
  using OpAdaptor = Adaptor;
};

/// The pattern of the lowering function `Lower`.
template <auto Lower>
class FunctionLowering
    : public DistToMPIPattern<typename LoweringSignature<decltype(Lower)>::Op> {
  using Signature = LoweringSignature<decltype(Lower)>;
  using OpTy = typename Signature::Op;

public:
  using DistToMPIPattern<OpTy>::DistToMPIPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename Signature::OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return Lower(op, adaptor, rewriter, this->state);
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// Redistribution
//===----------------------------------------------------------------------===//

// MPI exchanges blocks of a 1-D buffer in group order; a block of a dim other
// than the first is not contiguous. These reshape a tensor so that the group
// index is its leading dim (packing before the exchange) or back (unpacking
// after it), with expand_shape, transpose and collapse_shape on tensors.

/// `t` with dim `dim` split into (`outer`, size / `outer`).
static Value splitDim(OpBuilder &b, Location loc, Value t, int64_t dim,
                      int64_t outer) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    ReassociationIndices group{int64_t(shape.size())};
    if (d == dim) {
      shape.push_back(outer);
      group.push_back(int64_t(shape.size()));
      shape.push_back(type.getDimSize(d) / outer);
    } else {
      shape.push_back(type.getDimSize(d));
    }
    groups.push_back(group);
  }
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), t, groups);
}

/// `t` with its dims permuted (`perm[i]`: the dim of `t` that becomes dim i).
static Value permute(OpBuilder &b, Location loc, Value t,
                     ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return t;
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, t, init, perm).getResult()[0];
}

/// `t` with each group of consecutive dims in `groups` merged.
static Value mergeDims(OpBuilder &b, Location loc, Value t,
                       ArrayRef<ReassociationIndices> groups) {
  if (llvm::all_of(groups, [](auto &g) { return g.size() == 1; }))
    return t;
  return tensor::CollapseShapeOp::create(b, loc, t, groups);
}

/// The mesh axes of `op` as the group index's dims, outermost first (the
/// communicator's ranks are row-major over the axes in the op's order).
static SmallVector<int64_t> groupDims(MeshAttr mesh, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> sizes;
  for (int64_t axis : axes)
    sizes.push_back(mesh.getAxisSize(axis));
  return sizes;
}

/// The send tensor of a collective that hands member q the q-th block of
/// `dims[i]` over axis `axes[i]` (reduce-scatter, all-to-all): each such dim
/// split into (group size, block) and the group dims moved to the front.
static Value packBlocks(OpBuilder &b, Location loc, Value t, MeshAttr mesh,
                        ArrayRef<int64_t> axes, ArrayRef<int64_t> dims) {
  int64_t rank = cast<RankedTensorType>(t.getType()).getRank();
  SmallVector<int64_t> sizes = groupDims(mesh, axes);
  // Split from the last dim to the first, so that earlier dims keep their
  // index while later ones are split.
  Value split = t;
  for (int64_t d = rank - 1; d >= 0; --d) {
    auto it = llvm::find(dims, d);
    if (it != dims.end())
      split = splitDim(b, loc, split, d, sizes[it - dims.begin()]);
  }
  // In the split tensor, each split dim's group index is right before its
  // block; the permutation takes the group indices to the front in the
  // order of `axes`.
  int64_t next = 0;
  SmallVector<int64_t> groupPos(dims.size()), rest;
  for (int64_t d = 0; d < rank; ++d) {
    auto it = llvm::find(dims, d);
    if (it != dims.end())
      groupPos[it - dims.begin()] = next++;
    rest.push_back(next++);
  }
  SmallVector<int64_t> perm(groupPos);
  perm.append(rest);
  return permute(b, loc, split, perm);
}

/// The result of a collective that receives one block per member, laid out
/// with the group dims first (`received`: [g_0, .., g_k, local...]), with
/// member q's block placed at q along `dims[i]` (all-gather, all-to-all).
static Value unpackBlocks(OpBuilder &b, Location loc, Value received,
                          ArrayRef<int64_t> dims) {
  int64_t k = dims.size();
  int64_t rank = cast<RankedTensorType>(received.getType()).getRank() - k;
  SmallVector<int64_t> perm;
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank; ++d) {
    ReassociationIndices group;
    auto it = llvm::find(dims, d);
    if (it != dims.end()) {
      group.push_back(perm.size());
      perm.push_back(it - dims.begin());
    }
    group.push_back(perm.size());
    perm.push_back(k + d);
    groups.push_back(group);
  }
  return mergeDims(b, loc, permute(b, loc, received, perm), groups);
}

/// The dims that `axes` split in `dist`, in the order of `axes`.
static SmallVector<int64_t> splitDims(TensorDistAttr dist,
                                      ArrayRef<int64_t> axes) {
  SmallVector<int64_t> dims;
  for (int64_t axis : axes)
    dims.push_back(*dist.getDimOfMeshAxis(axis));
  return dims;
}

static Value unpackRedistribution(OpBuilder &b, Location loc, Operation *op,
                                  Value recv);

namespace {
/// Lowers the collectives. The reducing ones (allreduce, broadcast,
/// c_identity) each say what they contribute and how it reduces, and share
/// issuing (blocking or not). The redistributing ones (all_gather,
/// reduce_scatter, all_to_all) pack the operand so that the group's blocks
/// lead, exchange the flat buffers through the runtime (blocking: start and
/// wait at once) and unpack; the async form's wait unpacks (lowerWait,
/// through unpackRedistribution).
template <typename OpTy>
class CollectiveLowering : public DistToMPIPattern<OpTy> {
public:
  using DistToMPIPattern<OpTy>::DistToMPIPattern;
  using DistToMPIPattern<OpTy>::state;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto collective = cast<CollectiveOpInterface>(op.getOperation());
    if constexpr (llvm::is_one_of<OpTy, AllGatherOp, ReduceScatterOp,
                                  AllToAllOp>::value)
      return redistribute(op, collective, adaptor, rewriter);
    else
      return reduce(op, collective, adaptor, rewriter);
  }

private:
  LogicalResult reduce(OpTy op, CollectiveOpInterface collective,
                       typename OpTy::Adaptor adaptor,
                       ConversionPatternRewriter &rewriter) const {
    if (!collective.isAsync() && !communicates(op)) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    FailureOr<Reduction> reduction = checkReduction(collective, getKind(op));
    if (failed(reduction))
      return failure();
    Location loc = op.getLoc();
    Value contribution = getContribution(rewriter, op, adaptor.getInput());
    Value widened =
        convertElements(rewriter, loc, contribution, reduction->elementType);
    auto widenedType = cast<RankedTensorType>(widened.getType());
    RankedTensorType resultType = cast<RankedTensorType>(
        dropDistEncoding(collective.getResultTensorType()));
    int64_t groupSize = mesh::groupSize(op.getMesh(), op.getAxes());

    Value comm;
    if (communicates(op)) {
      comm = state.getComm(rewriter, op, op.getMesh(), op.getAxes());
      if (!comm ||
          failed(traceCollective(state, rewriter, collective, describeHow(op),
                                 reduction->elementType,
                                 widenedType.getNumElements(), comm)))
        return failure();
    }

    if (!collective.isAsync()) {
      Value flat = flatten(rewriter, loc, widened);
      Value out = memref::AllocOp::create(rewriter, loc,
                                          cast<MemRefType>(flat.getType()));
      mpi::AllReduceOp::create(rewriter, loc, Type(), flat, out,
                               reduction->mpiKind, comm);
      if (comm && failed(traceIssued(state, rewriter, op)))
        return failure();
      Value result = unflatten(rewriter, loc, out, widenedType);
      if (reduction->kind == DIST_REDUCE_AVG)
        result = averageOver(rewriter, loc, result, groupSize);
      rewriter.replaceOp(op, convertElements(rewriter, loc, result,
                                             resultType.getElementType()));
      return success();
    }

    // Asynchronous: the future becomes the receive buffer and the request.
    Value flat = flatten(rewriter, loc, widened);
    if (!communicates(op)) {
      // Nothing to exchange: the receive buffer is a copy, and there is
      // nothing to wait for.
      Value recv = memref::AllocOp::create(rewriter, loc,
                                           cast<MemRefType>(flat.getType()));
      memref::CopyOp::create(rewriter, loc, flat, recv);
      Value none = arith::ConstantOp::create(
          rewriter, loc, rewriter.getI64IntegerAttr(DIST_REQUEST_NONE));
      rewriter.replaceOpWithMultiple(op, {{recv, none}});
      return success();
    }
    FailureOr<Started> started = startInRuntime(
        state, rewriter, op, DIST_RUNTIME_IALLREDUCE_PREFIX, flat,
        widenedType.getNumElements(), reduction->kind, comm);
    if (failed(started))
      return failure();
    rewriter.replaceOpWithMultiple(op, {{started->recv, started->request}});
    return success();
  }

  LogicalResult redistribute(OpTy op, CollectiveOpInterface collective,
                             typename OpTy::Adaptor adaptor,
                             ConversionPatternRewriter &rewriter) const {
    RankedTensorType inType = op.getInput().getType();
    RankedTensorType outType = collective.getResultTensorType();
    if (!inType.hasStaticShape())
      return op->emitOpError("cannot be lowered to MPI: its shape ")
             << inType << " is not static";
    ReductionKind kind = ReductionKind::Sum;
    if constexpr (std::is_same_v<OpTy, ReduceScatterOp>)
      kind = op.getKind();
    FailureOr<Reduction> reduction = checkReduction(collective, kind);
    if (failed(reduction))
      return failure();
    Location loc = op.getLoc();
    Type element = reduction->elementType;
    Value input = convertElements(rewriter, loc, adaptor.getInput(), element);
    Value send = pack(rewriter, loc, op, input);
    auto sendType = cast<RankedTensorType>(send.getType());
    int64_t groupSize = mesh::groupSize(op.getMesh(), op.getAxes());
    int64_t recvCount = outType.getNumElements();
    if constexpr (std::is_same_v<OpTy, AllGatherOp>)
      recvCount = sendType.getNumElements() * groupSize;

    Value comm = state.getComm(rewriter, op, op.getMesh(), op.getAxes());
    if (!comm ||
        failed(traceCollective(state, rewriter, collective, how(op), element,
                               sendType.getNumElements(), comm)))
      return failure();
    std::optional<int64_t> runtimeKind;
    if constexpr (std::is_same_v<OpTy, ReduceScatterOp>)
      runtimeKind = reduction->kind;
    Value flat = flatten(rewriter, loc, send);
    FailureOr<Started> started = startInRuntime(
        state, rewriter, op, prefix(), flat, recvCount, runtimeKind, comm);
    if (failed(started))
      return failure();
    auto [recv, request] = *started;
    if (collective.isAsync()) {
      rewriter.replaceOpWithMultiple(op, {{recv, request}});
      return success();
    }
    if (failed(waitInRuntime(state, rewriter, op, request, recv)) ||
        failed(traceIssued(state, rewriter, op)))
      return failure();
    rewriter.replaceOp(op, unpackRedistribution(rewriter, loc, op, recv));
    return success();
  }

  static std::string describeHow(OpTy op) {
    if constexpr (std::is_same_v<OpTy, BroadcastOp>)
      return "from root " + std::to_string(op.getRoot());
    else
      return stringifyReductionKind(getKind(op)).str();
  }

  static ReductionKind getKind(OpTy op) {
    if constexpr (std::is_same_v<OpTy, AllReduceOp>)
      return op.getKind();
    // A broadcast sums a contribution only the root makes.
    return ReductionKind::Sum;
  }

  /// Whether the op moves data between processes (c_identity does not).
  static bool communicates(OpTy) { return !std::is_same_v<OpTy, CIdentityOp>; }

  /// What this process puts into the reduction. For a broadcast: its input
  /// at the group-local root, zeros elsewhere, so that a sum hands the
  /// root's value to every member (exact but for -0.0).
  Value getContribution(ConversionPatternRewriter &rewriter, OpTy op,
                        Value input) const {
    if constexpr (!std::is_same_v<OpTy, BroadcastOp>) {
      return input;
    } else {
      Location loc = op.getLoc();
      SmallVector<OpFoldResult> coords = getAsOpFoldResult(
          ValueRange(state.getCoords(rewriter, op, op.getMesh())));
      Value position = getValueOrCreateConstantIndexOp(
          rewriter, loc,
          mesh::buildLinearIndex(rewriter, loc, op.getMesh(), coords,
                                 op.getAxes()));
      Value root = arith::ConstantIndexOp::create(rewriter, loc, op.getRoot());
      Value isRoot = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, position, root);
      Value zero =
          buildZeros(rewriter, loc, cast<RankedTensorType>(input.getType()));
      return arith::SelectOp::create(rewriter, loc, isRoot, input, zero);
    }
  }

  static StringRef prefix() {
    if constexpr (std::is_same_v<OpTy, AllGatherOp>)
      return DIST_RUNTIME_IALLGATHER_PREFIX;
    else if constexpr (std::is_same_v<OpTy, ReduceScatterOp>)
      return DIST_RUNTIME_IREDUCE_SCATTER_PREFIX;
    else
      return DIST_RUNTIME_IALLTOALL_PREFIX;
  }

  static std::string how(OpTy op) {
    if constexpr (std::is_same_v<OpTy, ReduceScatterOp>)
      return stringifyReductionKind(op.getKind()).str();
    else
      return "";
  }

  /// The operand laid out as the runtime sends it.
  static Value pack(OpBuilder &b, Location loc, OpTy op, Value input) {
    if constexpr (std::is_same_v<OpTy, AllGatherOp>) {
      return input;
    } else {
      auto collective = cast<CollectiveOpInterface>(op.getOperation());
      TensorDistAttr outDist = getTensorDist(collective.getResultTensorType());
      return packBlocks(b, loc, input, op.getMesh(), op.getAxes(),
                        splitDims(outDist, op.getAxes()));
    }
  }
};
} // namespace

/// The result of the redistribution `op` from its flat receive buffer.
static Value unpackRedistribution(OpBuilder &b, Location loc, Operation *op,
                                  Value recv) {
  auto collective = cast<CollectiveOpInterface>(op);
  RankedTensorType outType = collective.getResultTensorType();
  Type element = cast<MemRefType>(recv.getType()).getElementType();
  TensorDistAttr inDist = getTensorDist(collective.getInput().getType());
  RankedTensorType inType = collective.getInput().getType();
  Value result;
  if (isa<ReduceScatterOp>(op)) {
    result = unflatten(b, loc, recv,
                       RankedTensorType::get(outType.getShape(), element));
  } else {
    // [g..., block...]: the block is the operand's shard for a gather, and
    // the operand's shard with the new dim's block for an all-to-all.
    SmallVector<int64_t> block(inType.getShape());
    if (isa<AllToAllOp>(op)) {
      int64_t to =
          *getTensorDist(outType).getDimOfMeshAxis(collective.getAxes()[0]);
      block[to] = outType.getDimSize(to);
    }
    SmallVector<int64_t> shape =
        groupDims(collective.getMesh(), collective.getAxes());
    llvm::append_range(shape, block);
    Value received =
        unflatten(b, loc, recv, RankedTensorType::get(shape, element));
    // Member q's block goes to q along the dims the operand splits.
    result =
        unpackBlocks(b, loc, received, splitDims(inDist, collective.getAxes()));
  }
  auto plain = cast<RankedTensorType>(dropDistEncoding(outType));
  return convertElements(b, loc, result, plain.getElementType());
}

/// dist.all_slice: the block at this process's coordinates.
static LogicalResult lowerAllSlice(AllSliceOp op, AllSliceOp::Adaptor adaptor,
                                   ConversionPatternRewriter &rewriter,
                                   DistToMPIState &state) {
  RankedTensorType outType = op.getResult().getType();
  if (!outType.hasStaticShape())
    return op->emitOpError("cannot be lowered to MPI: its shape ")
           << outType << " is not static";
  Location loc = op.getLoc();
  SmallVector<Value> coords = state.getCoords(rewriter, op, op.getMesh());
  TensorDistAttr outDist = getTensorDist(outType);
  SmallVector<OpFoldResult> offsets(outType.getRank(),
                                    rewriter.getIndexAttr(0));
  for (int64_t axis : op.getAxes()) {
    int64_t dim = *outDist.getDimOfMeshAxis(axis);
    Value size =
        arith::ConstantIndexOp::create(rewriter, loc, outType.getDimSize(dim));
    offsets[dim] =
        arith::MulIOp::create(rewriter, loc, coords[axis], size).getResult();
  }
  SmallVector<OpFoldResult> sizes,
      strides(outType.getRank(), rewriter.getIndexAttr(1));
  for (int64_t size : outType.getShape())
    sizes.push_back(rewriter.getIndexAttr(size));
  auto plain = cast<RankedTensorType>(dropDistEncoding(outType));
  rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
      op, plain, adaptor.getInput(), offsets, sizes, strides);
  return success();
}

/// The identity of reduction `kind` for `element`: what the processes that
/// do not hold a value contribute.
static TypedAttr reductionIdentity(Builder &b, ReductionKind kind,
                                   Type element) {
  if (auto f = dyn_cast<FloatType>(element)) {
    const llvm::fltSemantics &sem = f.getFloatSemantics();
    switch (kind) {
    case ReductionKind::Sum:
    case ReductionKind::Avg:
      return b.getFloatAttr(f, llvm::APFloat::getZero(sem));
    case ReductionKind::Prod:
      return b.getFloatAttr(f, 1.0);
    case ReductionKind::Max:
      return b.getFloatAttr(f, llvm::APFloat::getInf(sem, /*Negative=*/true));
    case ReductionKind::Min:
      return b.getFloatAttr(f, llvm::APFloat::getInf(sem, /*Negative=*/false));
    }
  }
  auto i = cast<IntegerType>(element);
  unsigned width = i.getWidth();
  // i1 is a flag (max is any, min is all); wider integers are signed.
  bool flag = width == 1;
  switch (kind) {
  case ReductionKind::Sum:
  case ReductionKind::Avg:
    return b.getIntegerAttr(i, 0);
  case ReductionKind::Prod:
    return b.getIntegerAttr(i, 1);
  case ReductionKind::Max:
    return b.getIntegerAttr(i, flag ? llvm::APInt(1, 0)
                                    : llvm::APInt::getSignedMinValue(width));
  case ReductionKind::Min:
    return b.getIntegerAttr(i, flag ? llvm::APInt(1, 1)
                                    : llvm::APInt::getSignedMaxValue(width));
  }
  llvm_unreachable("unknown reduction kind");
}

/// dist.make_partial: the shard in its block of the identity (times the
/// group size for avg), or the replicated value on coordinate 0 (sum, prod)
/// or everywhere (max, min, avg).
static LogicalResult lowerMakePartial(MakePartialOp op,
                                      MakePartialOp::Adaptor adaptor,
                                      ConversionPatternRewriter &rewriter,
                                      DistToMPIState &state) {
  RankedTensorType inType = op.getInput().getType();
  RankedTensorType outType = op.getResult().getType();
  if (!outType.hasStaticShape())
    return op->emitOpError("cannot be lowered to MPI: its shape ")
           << outType << " is not static";
  Type element = outType.getElementType();
  if (!element.isIntOrFloat())
    return op->emitOpError("cannot be lowered to MPI: no reduction identity "
                           "for element type ")
           << element;
  ReductionKind kind = op.getKind();
  if (kind == ReductionKind::Avg && !isa<FloatType>(element))
    return op->emitOpError("cannot be lowered to MPI: an avg of integers "
                           "is not exact");
  Location loc = op.getLoc();
  auto plain = cast<RankedTensorType>(dropDistEncoding(outType));
  TensorDistAttr inDist = getTensorDist(inType);
  SmallVector<Value> coords = state.getCoords(rewriter, op, op.getMesh());
  Value value = adaptor.getInput();
  TypedAttr identityAttr = reductionIdentity(rewriter, kind, element);
  auto fillIdentity = [&]() -> Value {
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, plain.getShape(), element);
    Value identity = arith::ConstantOp::create(rewriter, loc, identityAttr);
    return linalg::FillOp::create(rewriter, loc, identity, empty).getResult(0);
  };
  SmallVector<OpFoldResult> offsets(inType.getRank(), rewriter.getIndexAttr(0));
  bool anySplit = false;
  Value onFirst;
  int64_t scale = 1;
  for (int64_t axis : op.getAxes()) {
    if (std::optional<int64_t> dim = inDist.getDimOfMeshAxis(axis)) {
      anySplit = true;
      scale *= op.getMesh().getAxisSize(axis);
      Value size = arith::ConstantIndexOp::create(rewriter, loc,
                                                  inType.getDimSize(*dim));
      offsets[*dim] =
          arith::MulIOp::create(rewriter, loc, coords[axis], size).getResult();
      continue;
    }
    if (kind != ReductionKind::Sum && kind != ReductionKind::Prod)
      continue;
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        coords[axis], zero);
    onFirst =
        onFirst ? arith::AndIOp::create(rewriter, loc, onFirst, first) : first;
  }
  if (kind == ReductionKind::Avg && scale > 1) {
    auto floatType = cast<FloatType>(element);
    Value factor = arith::ConstantOp::create(
        rewriter, loc, floatType,
        rewriter.getFloatAttr(floatType, double(scale)));
    value = buildScaled(rewriter, loc, value, factor);
  }
  if (anySplit) {
    SmallVector<OpFoldResult> sizes,
        strides(inType.getRank(), rewriter.getIndexAttr(1));
    for (int64_t size : inType.getShape())
      sizes.push_back(rewriter.getIndexAttr(size));
    value = tensor::InsertSliceOp::create(rewriter, loc, value, fillIdentity(),
                                          offsets, sizes, strides);
  }
  if (onFirst)
    value =
        arith::SelectOp::create(rewriter, loc, onFirst, value, fillIdentity());
  rewriter.replaceOp(op, value);
  return success();
}

static LogicalResult
lowerWait(WaitOp op, WaitOp::GenericAdaptor<ArrayRef<ValueRange>> adaptor,
          ConversionPatternRewriter &rewriter, DistToMPIState &state) {
  ValueRange future = adaptor.getFuture();
  if (future.size() != 2)
    return rewriter.notifyMatchFailure(op, "future not lowered");
  Value recv = future[0], request = future[1];
  Location loc = op.getLoc();
  if (failed(waitInRuntime(state, rewriter, op, request, recv)))
    return failure();
  // The collective is still in the IR (a conversion erases replaced ops at
  // its end) and, by dist.wait's verifier, in this block.
  Operation *collective = op.getFuture().getDefiningOp();
  if (isa_and_nonnull<AllGatherOp, ReduceScatterOp, AllToAllOp>(collective)) {
    rewriter.replaceOp(op,
                       unpackRedistribution(rewriter, loc, collective, recv));
    return success();
  }
  auto resultType =
      cast<RankedTensorType>(dropDistEncoding(op.getResult().getType()));
  auto recvType = cast<MemRefType>(recv.getType());
  auto received =
      RankedTensorType::get(resultType.getShape(), recvType.getElementType());
  Value result = unflatten(rewriter, loc, recv, received);
  rewriter.replaceOp(
      op, convertElements(rewriter, loc, result, resultType.getElementType()));
  return success();
}

/// What a transfer moves and over which communicator: the elements widened
/// as a collective widens them, and the group along the transfer's axis,
/// whose rank of a process is its coordinate there.
template <typename OpT>
static FailureOr<std::pair<Type, Value>>
prepareTransfer(OpT op, ConversionPatternRewriter &rewriter,
                DistToMPIState &state) {
  RankedTensorType type = op.getTensorType();
  if (!type.hasStaticShape())
    return op->emitOpError("cannot be lowered to MPI: its shape ")
           << type << " is not static";
  Type element = getReductionElementType(type.getElementType());
  if (!element)
    return op->emitOpError("cannot be lowered to MPI: no MPI type for ")
           << type.getElementType();
  int64_t axis = op.getAxis();
  Value comm = state.getComm(rewriter, op, op.getMesh(), {axis});
  if (!comm)
    return failure();
  return std::make_pair(element, comm);
}

/// Calls the runtime's transfer `prefix` (dist_send_ or dist_irecv_, for
/// `buffer`'s element type) with the op's peer and tag over `comm`; the
/// receive returns its request.
template <typename OpT>
static FailureOr<func::CallOp>
callTransfer(OpT op, ConversionPatternRewriter &rewriter, DistToMPIState &state,
             StringRef prefix, Value buffer, Value comm) {
  Location loc = op.getLoc();
  auto i64 = rewriter.getI64Type();
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  SmallVector<Type> results;
  if (isa<RecvOp>(op.getOperation()))
    results.push_back(i64);
  func::FuncOp callee = state.getRuntimeFunction(
      rewriter, op, (prefix + runtimeSuffix(element)).str(),
      rewriter.getFunctionType({buffer.getType(), i64, i64, comm.getType()},
                               results),
      /*cInterface=*/true);
  if (!callee)
    return failure();
  Value peer = arith::ConstantOp::create(
      rewriter, loc, rewriter.getI64IntegerAttr(op.getPeer()));
  Value tag = arith::ConstantOp::create(
      rewriter, loc, rewriter.getI64IntegerAttr(op.getTag()));
  return func::CallOp::create(rewriter, loc, callee,
                              ValueRange{buffer, peer, tag, comm});
}

static LogicalResult lowerSend(SendOp op, SendOp::Adaptor adaptor,
                               ConversionPatternRewriter &rewriter,
                               DistToMPIState &state) {
  FailureOr<std::pair<Type, Value>> prepared =
      prepareTransfer(op, rewriter, state);
  if (failed(prepared))
    return failure();
  auto [element, comm] = *prepared;
  Location loc = op.getLoc();
  Value flat =
      flatten(rewriter, loc,
              convertElements(rewriter, loc, adaptor.getInput(), element));
  if (failed(callTransfer(op, rewriter, state, DIST_RUNTIME_SEND_PREFIX,
                          anySize(rewriter, loc, flat), comm)))
    return failure();
  rewriter.eraseOp(op);
  return success();
}

/// A receive is posted (dist_irecv); a blocking one is waited for at once,
/// a future one becomes the receive buffer and the request, as an
/// asynchronous collective does.
static LogicalResult lowerRecv(RecvOp op, RecvOp::Adaptor,
                               ConversionPatternRewriter &rewriter,
                               DistToMPIState &state) {
  FailureOr<std::pair<Type, Value>> prepared =
      prepareTransfer(op, rewriter, state);
  if (failed(prepared))
    return failure();
  auto [element, comm] = *prepared;
  Location loc = op.getLoc();
  RankedTensorType type = op.getTensorType();
  Value recv = memref::AllocOp::create(
      rewriter, loc, MemRefType::get({type.getNumElements()}, element));
  FailureOr<func::CallOp> posted =
      callTransfer(op, rewriter, state, DIST_RUNTIME_IRECV_PREFIX,
                   anySize(rewriter, loc, recv), comm);
  if (failed(posted))
    return failure();
  Value request = posted->getResult(0);
  if (op.isAsync()) {
    rewriter.replaceOpWithMultiple(op, {{recv, request}});
    return success();
  }
  if (failed(waitInRuntime(state, rewriter, op, request, recv)))
    return failure();
  Value received = unflatten(rewriter, loc, recv,
                             RankedTensorType::get(type.getShape(), element));
  rewriter.replaceOp(
      op, convertElements(rewriter, loc, received, type.getElementType()));
  return success();
}

static LogicalResult lowerProcessCoord(ProcessCoordOp op,
                                       ProcessCoordOp::Adaptor,
                                       ConversionPatternRewriter &rewriter,
                                       DistToMPIState &state) {
  rewriter.replaceOp(op,
                     state.getCoords(rewriter, op, op.getMesh())[op.getAxis()]);
  return success();
}

void mlir::dist::populateDistToMPIConversionPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    DistToMPIState &state) {
  patterns
      .add<CollectiveLowering<AllReduceOp>, CollectiveLowering<BroadcastOp>,
           CollectiveLowering<CIdentityOp>, CollectiveLowering<AllGatherOp>,
           CollectiveLowering<ReduceScatterOp>, CollectiveLowering<AllToAllOp>,
           FunctionLowering<lowerAllSlice>, FunctionLowering<lowerMakePartial>,
           FunctionLowering<lowerWait>, FunctionLowering<lowerProcessCoord>,
           FunctionLowering<lowerSend>, FunctionLowering<lowerRecv>>(
          converter, patterns.getContext(), state);
}

void mlir::dist::addDistToMPIIllegalOps(ConversionTarget &target) {
  target.addIllegalOp<AllReduceOp, BroadcastOp, CIdentityOp, AllGatherOp,
                      ReduceScatterOp, AllToAllOp, AllSliceOp, MakePartialOp,
                      WaitOp, ProcessCoordOp, SendOp, RecvOp>();
}

LogicalResult mlir::dist::addMPIInitAndFinalize(func::FuncOp entry,
                                                bool withRuntime,
                                                int64_t worldSize) {
  // A second lowering (the other order, or a pipeline after a pass) finds
  // the entry bracketed already.
  if (!entry.getOps<mpi::InitOp>().empty())
    return success();
  OpBuilder b = OpBuilder::atBlockBegin(&entry.getBody().front());
  mpi::InitOp::create(b, entry.getLoc(), TypeRange{});
  if (worldSize > 0) {
    // A launcher's process count is not known when the program is lowered.
    func::FuncOp check = getOrDeclareRuntimeFunction(
        b, entry, DIST_RUNTIME_CHECK_WORLD_SIZE,
        b.getFunctionType({b.getI64Type()}, {}), /*cInterface=*/false);
    if (!check)
      return failure();
    Value expected = arith::ConstantOp::create(b, entry.getLoc(),
                                               b.getI64IntegerAttr(worldSize));
    func::CallOp::create(b, entry.getLoc(), check, expected);
  }
  ModuleOp module = entry->getParentOfType<ModuleOp>();
  entry.walk([&](func::ReturnOp ret) {
    b.setInsertionPoint(ret);
    if (withRuntime) {
      auto finalize = module.lookupSymbol<func::FuncOp>(DIST_RUNTIME_FINALIZE);
      if (!finalize) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(module.getBody());
        finalize =
            func::FuncOp::create(b, module.getLoc(), DIST_RUNTIME_FINALIZE,
                                 b.getFunctionType({}, {}));
        finalize.setPrivate();
      }
      func::CallOp::create(b, ret.getLoc(), finalize, ValueRange{});
    }
    mpi::FinalizeOp::create(b, ret.getLoc(), TypeRange{});
  });
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct ConvertDistToMPIPass
    : public CompletedPass<
          dist::impl::ConvertDistToMPIBase<ConvertDistToMPIPass>> {
  using CompletedPass::CompletedPass;

  /// The mpi ops this pass builds are freed around by buffer deallocation,
  /// which needs their memory effects.
  void getDependentDialects(DialectRegistry &registry) const override {
    ConvertDistToMPIBase::getDependentDialects(registry);
    registerMPIMemoryEffectModels(registry);
  }

  /// With `world-size`, a mesh that does not fit the run is an error: the
  /// processes would disagree about who holds what.
  LogicalResult checkMeshes(ModuleOp module) {
    if (worldSize < 0)
      return mlir::emitError(module.getLoc(), "world-size=")
             << static_cast<int64_t>(worldSize)
             << " must be a process count (or 0: unchecked)";
    if (worldSize == 0)
      return success();
    int64_t world = worldSize;
    // One error per mesh that does not fit, at its first op: a program
    // whose ops all use one mesh would otherwise repeat it per op.
    llvm::MapVector<MeshAttr, std::pair<Operation *, int64_t>> misfits;
    module.walk([&](Operation *op) {
      MeshAttr mesh;
      if (auto c = dyn_cast<CollectiveOpInterface>(op))
        mesh = c.getMesh();
      else if (auto p = dyn_cast<ProcessCoordOp>(op))
        mesh = p.getMesh();
      if (!mesh)
        return;
      if (mesh.getNumProcesses() != world ||
          *llvm::max_element(mesh.getProcessIds()) >= world) {
        auto [it, first] = misfits.try_emplace(mesh, op, 0);
        if (!first)
          ++it->second.second;
      }
    });
    for (auto &[mesh, misfit] : misfits) {
      auto [op, others] = misfit;
      InFlightDiagnostic diag = op->emitError("mesh ")
                                << mesh << " has " << mesh.getNumProcesses()
                                << " processes but the program runs on "
                                << world;
      if (others)
        diag << " (and " << others << " more op" << (others == 1 ? "" : "s")
             << " use it)";
    }
    return failure(!misfits.empty());
  }

  /// A program that is run starts at its entry: without a callable
  /// () -> () body there, MPI would never be initialised.
  LogicalResult checkEntry(ModuleOp module) {
    auto main = module.lookupSymbol<func::FuncOp>(entry);
    if (!main) {
      // At the module's location only: the module would be printed into a
      // note, which is the whole program. A parsed file's implicit module
      // is at line 0 of the file, which editors cannot show: its start.
      Location where = module.getLoc();
      if (auto file = dyn_cast<FileLineColLoc>(where); file && !file.getLine())
        where = FileLineColLoc::get(file.getFilename(), 1, 1);
      InFlightDiagnostic diag = mlir::emitError(where, "the entry function @")
                                << entry << " is not in the module";
      SmallVector<StringRef> candidates;
      for (auto func : module.getOps<func::FuncOp>())
        if (!func.isExternal() && func.getNumArguments() == 0 &&
            func.getNumResults() == 0)
          candidates.push_back(func.getSymName());
      if (candidates.empty()) {
        diag << " (it has no () -> () function to run)";
      } else {
        diag << "; functions it could run: ";
        llvm::interleaveComma(candidates, diag,
                              [&](StringRef n) { diag << "@" << n; });
      }
      return diag;
    }
    if (main.isExternal())
      return main.emitError("the entry function @")
             << entry << " is a declaration without a body";
    if (main.getNumArguments() != 0 || main.getNumResults() != 0)
      return main.emitError("the entry function @")
             << entry << " must take no arguments and return nothing, not "
             << main.getFunctionType();
    return success();
  }

  /// Brackets every function with a body with the runtime's function
  /// events, so that a trace shows each call (before MPI_Init is added: the
  /// entry's interval then ends before MPI_Finalize writes the timeline).
  LogicalResult traceFunctions(ModuleOp module, DistToMPIState &state) {
    OpBuilder b(module.getContext());
    auto string = MemRefType::get({ShapedType::kDynamic}, b.getI8Type());
    SmallVector<func::FuncOp> functions;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        functions.push_back(func);
    for (func::FuncOp func : functions) {
      func::FuncOp trace = state.getRuntimeFunction(
          b, func, DIST_RUNTIME_TRACE_FUNCTION,
          b.getFunctionType({string, b.getI64Type()}, {}),
          /*cInterface=*/true);
      if (!trace)
        return failure();
      auto call = [&](Location loc, int64_t begin) {
        Value name = buildRuntimeString(b, loc, func, func.getSymName());
        Value flag =
            arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(begin));
        func::CallOp::create(b, loc, trace, ValueRange{name, flag});
      };
      b.setInsertionPointToStart(&func.getBody().front());
      call(func.getLoc(), 1);
      func.walk([&](func::ReturnOp ret) {
        b.setInsertionPoint(ret);
        call(ret.getLoc(), 0);
      });
    }
    return success();
  }

  void runOnCompleted(ModuleOp module) override {
    MLIRContext *ctx = &getContext();
    // A schedule that could deadlock never reaches the runtime.
    if (failed(checkMeshes(module)) ||
        (requireEntry && failed(checkEntry(module))) ||
        failed(verifyPipelineTransfers(module)))
      return signalPassFailure();

    DistTypeConverter converter;
    ConversionTarget target(*ctx);
    configureDistConversionTarget(target, converter);
    addDistToMPIIllegalOps(target);
    RewritePatternSet patterns(ctx);
    DistToMPIState state(module, traceCollectives, traceEvents);
    populateDistEncodingDropPatterns(converter, patterns);
    populateDistToMPIConversionPatterns(converter, patterns, state);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();

    if (traceEvents && failed(traceFunctions(module, state)))
      return signalPassFailure();
    if (auto main = module.lookupSymbol<func::FuncOp>(entry);
        main && !main.isExternal()) {
      OpBuilder b(ctx);
      // mpi.init goes before them. Traced functions count as runtime use:
      // the timeline is written at the runtime's finalisation.
      if (failed(state.createAllComms(b, main)) ||
          failed(addMPIInitAndFinalize(main, state.usesRuntime(), worldSize)))
        return signalPassFailure();
    }
    // MLIR's MPI-to-LLVM conversion asks the module which MPI it targets;
    // --dist-strip-dlti takes the entry off again after it.
    DataLayoutEntryInterface mpich =
        DataLayoutEntryAttr::get(StringAttr::get(ctx, "MPI:Implementation"),
                                 StringAttr::get(ctx, "MPICH"));
    module->setAttr(DLTIDialect::kMapAttrName, MapAttr::get(ctx, {mpich}));
  }
};
} // namespace
