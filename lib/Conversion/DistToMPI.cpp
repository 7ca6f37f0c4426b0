//===- DistToMPI.cpp - lower dist collectives to the mpi dialect ----------===//
//
// Implements --convert-dist-to-mpi. A process finds its mesh coordinate from
// its MPI rank (its position in the mesh's process-id list, through a lookup
// table when the ids are not 0..N-1), and each (mesh, axes) group becomes a
// communicator split from MPI_COMM_WORLD with the group's index as color and
// the process's position in the group as key, so communicator ranks follow
// mesh::processGroup's order.
//
//===----------------------------------------------------------------------===//

#include "dist/Conversion/Passes.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/AsmParser/AsmParser.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_CONVERTDISTTOMPI
#include "dist/Conversion/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

namespace {
/// Per-function values every collective of the function shares, created
/// once at the top of the function (after mpi.init in the entry function).
class FunctionContext {
public:
  FunctionContext(ModuleOp module, Block &entry, Operation *after)
      : module(module), builder(entry.getParentOp()->getContext()) {
    if (after)
      builder.setInsertionPointAfter(after);
    else
      builder.setInsertionPointToStart(&entry);
    loc = entry.getParentOp()->getLoc();
  }

  Value world() {
    if (!worldComm)
      worldComm = mpi::CommWorldOp::create(builder, loc,
                                           mpi::CommType::get(ctx()));
    return worldComm;
  }

  /// This process's position in `mesh`'s process-id list.
  Value position(MeshAttr mesh) {
    Value &pos = positions[mesh];
    if (pos)
      return pos;
    Value rank = mpi::CommRankOp::create(builder, loc, Type(),
                                         builder.getI32Type(), world())
                     .getRank();
    pos = arith::IndexCastOp::create(builder, loc, builder.getIndexType(), rank);
    if (!mesh.hasDefaultProcessIds()) {
      // table[rank] = position; ranks outside the mesh map to 0 (a world
      // larger than the mesh is rejected before this runs).
      int64_t maxId = *llvm::max_element(mesh.getProcessIds());
      SmallVector<int64_t> table(maxId + 1, 0);
      for (auto [position, id] : llvm::enumerate(mesh.getProcessIds()))
        table[id] = position;
      auto type = RankedTensorType::get({maxId + 1}, builder.getIndexType());
      Value constant = arith::ConstantOp::create(
          builder, loc, type,
          DenseElementsAttr::get(type, ArrayRef<int64_t>(table)));
      pos = tensor::ExtractOp::create(builder, loc, constant, ValueRange{pos});
    }
    return pos;
  }

  /// This process's coordinate along `axis` of `mesh`.
  Value coord(MeshAttr mesh, int64_t axis) {
    Value &c = coords[{mesh, axis}];
    if (c)
      return c;
    int64_t stride = 1;
    for (int64_t a = axis + 1; a < mesh.getRank(); ++a)
      stride *= mesh.getAxisSize(a);
    Value pos = position(mesh);
    Value strideValue = index(stride);
    Value v = arith::DivUIOp::create(builder, loc, pos, strideValue);
    Value size = index(mesh.getAxisSize(axis));
    c = arith::RemUIOp::create(builder, loc, v, size);
    return c;
  }

  /// The row-major index of this process's coordinates along `axes`.
  Value ravel(MeshAttr mesh, ArrayRef<int64_t> axes) {
    Value linear = index(0);
    for (int64_t axis : axes) {
      Value c = coord(mesh, axis);
      Value size = index(mesh.getAxisSize(axis));
      Value scaled = arith::MulIOp::create(builder, loc, linear, size);
      linear = arith::AddIOp::create(builder, loc, scaled, c);
    }
    return linear;
  }

  /// This process's position in its group along `axes`.
  Value groupPosition(MeshAttr mesh, ArrayRef<int64_t> axes) {
    return ravel(mesh, axes);
  }

  /// The communicator of this process's group along `axes`.
  Value comm(MeshAttr mesh, ArrayRef<int64_t> axes) {
    Value &c = comms[groupKey(mesh, axes)];
    if (c)
      return c;
    auto [color, rankInGroup] = splitArgs(mesh, axes, builder.getI32Type());
    c = mpi::CommSplitOp::create(builder, loc, Type(), mpi::CommType::get(ctx()),
                                 world(), color, rankInGroup)
            .getNewcomm();
    return c;
  }

  /// The declaration of runtime function `name` (libdist_runtime.so),
  /// added to the module on first use.
  func::FuncOp runtimeFunction(StringRef name, FunctionType type,
                               bool cInterface) {
    if (auto existing = module.lookupSymbol<func::FuncOp>(name))
      return existing;
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    auto decl = func::FuncOp::create(b, module.getLoc(), name, type);
    decl.setPrivate();
    if (cInterface)
      decl->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    return decl;
  }

  /// A runtime communicator handle for this process's group along `axes`
  /// (the runtime's own MPI_Comm_split, for non-blocking collectives).
  Value runtimeComm(MeshAttr mesh, ArrayRef<int64_t> axes) {
    Value &c = runtimeComms[groupKey(mesh, axes)];
    if (c)
      return c;
    auto i64 = builder.getI64Type();
    auto [color, rankInGroup] = splitArgs(mesh, axes, i64);
    func::FuncOp split = runtimeFunction(
        "dist_comm_split", builder.getFunctionType({i64, i64}, {i64}),
        /*cInterface=*/false);
    c = func::CallOp::create(builder, loc, split,
                             ValueRange{color, rankInGroup})
            .getResult(0);
    return c;
  }

private:
  MLIRContext *ctx() { return builder.getContext(); }

  std::pair<Attribute, Attribute> groupKey(MeshAttr mesh,
                                           ArrayRef<int64_t> axes) {
    return {mesh, builder.getDenseI64ArrayAttr(axes)};
  }

  /// MPI_Comm_split's color (the coordinates off `axes`, one value per
  /// group) and key (the position along `axes`), as `type`.
  std::pair<Value, Value> splitArgs(MeshAttr mesh, ArrayRef<int64_t> axes,
                                    Type type) {
    SmallVector<int64_t> others;
    for (int64_t a = 0; a < mesh.getRank(); ++a)
      if (!llvm::is_contained(axes, a))
        others.push_back(a);
    Value color =
        arith::IndexCastOp::create(builder, loc, type, ravel(mesh, others));
    Value key =
        arith::IndexCastOp::create(builder, loc, type, ravel(mesh, axes));
    return {color, key};
  }
  Value index(int64_t v) { return arith::ConstantIndexOp::create(builder, loc, v); }

  ModuleOp module;
  OpBuilder builder;
  Location loc = UnknownLoc::get(builder.getContext());
  llvm::DenseMap<std::pair<Attribute, Attribute>, Value> runtimeComms;
  Value worldComm;
  llvm::DenseMap<Attribute, Value> positions;
  llvm::DenseMap<std::pair<Attribute, int64_t>, Value> coords;
  llvm::DenseMap<std::pair<Attribute, Attribute>, Value> comms;
};
} // namespace

/// `tensor` as a read-only 1-D buffer: MLIR 22's MPI-to-LLVM lowering
/// counts only the first dimension of a memref.
static Value flatten(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  Value buffer = bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                                   /*read_only=*/true);
  auto flatType = MemRefType::get({type.getNumElements()},
                                  type.getElementType());
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

/// Runs `mpi.allreduce` on a tensor.
static Value allreduceTensor(OpBuilder &b, Location loc, Value tensor,
                             mpi::MPI_ReductionOpEnum kind, Value comm) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value flat = flatten(b, loc, tensor);
  Value out = memref::AllocOp::create(
      b, loc, MemRefType::get({type.getNumElements()}, type.getElementType()));
  mpi::AllReduceOp::create(b, loc, Type(), flat, out, kind, comm);
  return unflatten(b, loc, out, type);
}

static Value zerosLike(OpBuilder &b, Location loc, RankedTensorType type) {
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                        type.getElementType());
  Value zero = arith::ConstantOp::create(b, loc, type.getElementType(),
                                         b.getZeroAttr(type.getElementType()));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

namespace {
/// A non-blocking allreduce in flight: its request handle and the 1-D buffer
/// it receives into.
struct Started {
  Value request, recv;
};
} // namespace

/// Starts a non-blocking sum/max/min/prod allreduce of `contribution`
/// through libdist_runtime (MPI_Iallreduce); nothing when the element type
/// has no runtime entry point.
static std::optional<Started> startAsync(OpBuilder &b, Location loc,
                                         FunctionContext &fn,
                                         CollectiveOpInterface op,
                                         Value contribution, int64_t kind) {
  auto type = cast<RankedTensorType>(contribution.getType());
  Type element = type.getElementType();
  StringRef suffix = element.isF32()          ? "f32"
                     : element.isF64()        ? "f64"
                     : element.isInteger(32)  ? "i32"
                     : element.isInteger(64)  ? "i64"
                                              : "";
  if (suffix.empty())
    return std::nullopt;
  auto flatType = MemRefType::get({type.getNumElements()}, element);
  auto anySize = MemRefType::get({ShapedType::kDynamic}, element);
  auto i64 = b.getI64Type();
  Value flat = flatten(b, loc, contribution);
  // MPI reads the send buffer until the wait: it gets its own copy, so that
  // bufferization may reuse the tensor's buffer in the meantime.
  Value send = memref::AllocOp::create(b, loc, flatType);
  memref::CopyOp::create(b, loc, flat, send);
  Value recv = memref::AllocOp::create(b, loc, flatType);
  Value sendAny = memref::CastOp::create(b, loc, anySize, send);
  Value recvAny = memref::CastOp::create(b, loc, anySize, recv);
  Value kindValue = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(kind));
  Value comm = fn.runtimeComm(op.getMesh(), op.getAxes());
  func::FuncOp start = fn.runtimeFunction(
      ("dist_iallreduce_" + suffix).str(),
      b.getFunctionType({anySize, anySize, i64, i64}, {i64}),
      /*cInterface=*/true);
  Value request =
      func::CallOp::create(b, loc, start,
                           ValueRange{sendAny, recvAny, kindValue, comm})
          .getResult(0);
  return Started{request, recv};
}

/// `sum / groupSize` for an avg allreduce.
static FailureOr<Value> averageOver(OpBuilder &b, Location loc, Operation *op,
                                    Value sum, int64_t groupSize) {
  auto type = cast<RankedTensorType>(sum.getType());
  auto elementType = dyn_cast<FloatType>(type.getElementType());
  if (!elementType)
    return op->emitError("an avg allreduce of integers cannot be lowered");
  Value factor = arith::ConstantOp::create(
      b, loc, elementType, b.getFloatAttr(elementType, 1.0 / double(groupSize)));
  Value splat = tensor::SplatOp::create(b, loc, type, factor);
  auto map = AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext());
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{sum, splat},
             ValueRange{zerosLike(b, loc, type)},
             ArrayRef<AffineMap>{map, map, map},
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [](OpBuilder &nb, Location nloc, ValueRange args) {
               Value product =
                   arith::MulFOp::create(nb, nloc, args[0], args[1]);
               linalg::YieldOp::create(nb, nloc, product);
             })
      .getResult(0);
}

/// What a broadcast sends: the input at the group-local root, zeros
/// elsewhere, so that a sum hands the root's value to every member (the mpi
/// dialect has no broadcast op).
static Value broadcastContribution(OpBuilder &b, Location loc,
                                   FunctionContext &fn, BroadcastOp op) {
  auto type = cast<RankedTensorType>(op.getInput().getType());
  Value position = fn.groupPosition(op.getMesh(), op.getAxes());
  Value root = arith::ConstantIndexOp::create(b, loc, op.getRoot());
  Value isRoot =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, position, root);
  Value zero = zerosLike(b, loc, type);
  return arith::SelectOp::create(b, loc, isRoot, op.getInput(), zero);
}

/// The MPI reduction an allreduce of `kind` performs; avg is a sum that
/// the caller scales afterwards.
static mpi::MPI_ReductionOpEnum toMPIReduction(ReductionKind kind) {
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

static FailureOr<Value> lowerCollective(OpBuilder &b, FunctionContext &fn,
                                        CollectiveOpInterface op) {
  Location loc = op.getLoc();
  MeshAttr mesh = op.getMesh();
  ArrayRef<int64_t> axes = op.getAxes();
  Value input = op.getInput();
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](AllReduceOp ar) -> FailureOr<Value> {
        Value result = allreduceTensor(
            b, loc, input, toMPIReduction(ar.getKind()), fn.comm(mesh, axes));
        if (ar.getKind() != ReductionKind::Avg)
          return result;
        return averageOver(b, loc, ar, result, mesh::groupSize(mesh, axes));
      })
      .Case([&](BroadcastOp bc) -> FailureOr<Value> {
        return allreduceTensor(b, loc, broadcastContribution(b, loc, fn, bc),
                               mpi::MPI_ReductionOpEnum::MPI_SUM,
                               fn.comm(mesh, axes));
      })
      .Case([&](CIdentityOp) -> FailureOr<Value> { return input; })
      .Default([](Operation *op) -> FailureOr<Value> {
        return op->emitError("no MPI lowering for this collective");
      });
}

namespace {
struct ConvertDistToMPIPass
    : public dist::impl::ConvertDistToMPIBase<ConvertDistToMPIPass> {
  using Base::Base;

  LogicalResult checkMeshes(ModuleOp module) {
    if (worldSize <= 0)
      return success();
    int64_t world = worldSize;
    LogicalResult result = success();
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
        op->emitError("mesh ") << mesh << " has " << mesh.getNumProcesses()
                               << " processes but the program runs on "
                               << world;
        result = failure();
      }
    });
    return result;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (failed(checkMeshes(module)))
      return signalPassFailure();

    // The encodings have served their purpose (the compute lowering read
    // them); upstream bufferization does not know them.
    AttrTypeReplacer stripper;
    stripper.addReplacement([](RankedTensorType type) -> std::optional<Type> {
      if (!isa_and_nonnull<TensorDistAttr>(type.getEncoding()))
        return std::nullopt;
      return RankedTensorType::get(type.getShape(), type.getElementType());
    });
    // Futures are rebuilt from their (stripped) value type by the replacer.
    stripper.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);

    bool hadError = false;
    // The loop may add runtime declarations to the module: iterate a copy.
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal())
        continue;
      Block &entryBlock = func.getBody().front();
      Operation *init = nullptr;
      if (func.getName() == entry) {
        OpBuilder b = OpBuilder::atBlockBegin(&entryBlock);
        init = mpi::InitOp::create(b, func.getLoc(), TypeRange{});
        func.walk([&](func::ReturnOp ret) {
          b.setInsertionPoint(ret);
          mpi::FinalizeOp::create(b, ret.getLoc(), TypeRange{});
        });
      }
      FunctionContext fn(module, entryBlock, init);
      SmallVector<Operation *> ops;
      func.walk([&](Operation *op) {
        if (isa<CollectiveOpInterface, ProcessCoordOp>(op))
          ops.push_back(op);
      });
      OpBuilder b(ctx);
      // Erase only at the end: the function context inserts before the op
      // that followed mpi.init, which may be one of these.
      SmallVector<Operation *> dead;
      for (Operation *op : ops) {
        b.setInsertionPoint(op);
        if (auto coord = dyn_cast<ProcessCoordOp>(op)) {
          coord.getResult().replaceAllUsesWith(
              fn.coord(coord.getMesh(), coord.getAxis()));
          dead.push_back(op);
          continue;
        }
        auto collective = cast<CollectiveOpInterface>(op);
        if (collective.isAsync() && isa<AllReduceOp, BroadcastOp>(op)) {
          // Issue now (MPI_Iallreduce), complete at the dist.wait.
          auto allreduce = dyn_cast<AllReduceOp>(op);
          Value contribution =
              allreduce ? collective.getInput()
                        : broadcastContribution(b, op->getLoc(), fn,
                                                cast<BroadcastOp>(op));
          // ReductionKind order; avg is a sum scaled after the wait.
          int64_t kind = 0;
          if (allreduce && allreduce.getKind() != ReductionKind::Avg)
            kind = static_cast<int64_t>(allreduce.getKind());
          if (std::optional<Started> started = startAsync(
                  b, op->getLoc(), fn, collective, contribution, kind)) {
            auto tensorType = collective.getResultTensorType();
            func::FuncOp wait = fn.runtimeFunction(
                "dist_wait", b.getFunctionType({b.getI64Type()}, {}),
                /*cInterface=*/false);
            for (Operation *user : op->getResult(0).getUsers()) {
              auto waitOp = cast<WaitOp>(user);
              b.setInsertionPoint(waitOp);
              func::CallOp::create(b, waitOp.getLoc(), wait,
                                   ValueRange{started->request});
              Value result =
                  unflatten(b, waitOp.getLoc(), started->recv, tensorType);
              if (allreduce && allreduce.getKind() == ReductionKind::Avg) {
                FailureOr<Value> average = averageOver(
                    b, waitOp.getLoc(), op, result,
                    mesh::groupSize(collective.getMesh(), collective.getAxes()));
                if (failed(average)) {
                  hadError = true;
                  break;
                }
                result = *average;
              }
              waitOp.getResult().replaceAllUsesWith(result);
              dead.push_back(waitOp);
            }
            dead.push_back(op);
            continue;
          }
        }
        FailureOr<Value> lowered = lowerCollective(b, fn, collective);
        if (failed(lowered)) {
          hadError = true;
          continue;
        }
        // An asynchronous collective completes where it is issued; its wait
        // becomes the identity.
        for (Operation *user : op->getResult(0).getUsers())
          if (auto wait = dyn_cast<WaitOp>(user)) {
            wait.getResult().replaceAllUsesWith(*lowered);
            dead.push_back(wait);
          }
        op->getResult(0).replaceAllUsesWith(*lowered);
        dead.push_back(op);
      }
      // Each wait was pushed before its collective: users go first.
      for (Operation *op : dead)
        op->erase();
    }
    if (hadError)
      return signalPassFailure();

    module.walk([&](Operation *op) {
      if (isa<DistDialect>(op->getDialect())) {
        op->emitError("'") << op->getName()
                           << "' cannot be lowered to MPI: run "
                              "--convert-dist-to-linalg first";
        hadError = true;
      }
    });
    if (hadError)
      return signalPassFailure();

    // MLIR's MPI-to-LLVM lowering asks the module which MPI it targets.
    module->setAttr("dlti.map",
                    parseAttribute("#dlti.map<\"MPI:Implementation\" = \"MPICH\">",
                                   ctx));
  }
};
} // namespace
