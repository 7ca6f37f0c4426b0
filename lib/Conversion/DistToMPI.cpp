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
  FunctionContext(Block &entry, Operation *after) : builder(entry.getParentOp()->getContext()) {
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
    auto key = std::make_pair(Attribute(mesh),
                              Attribute(builder.getDenseI64ArrayAttr(axes)));
    Value &c = comms[key];
    if (c)
      return c;
    SmallVector<int64_t> others;
    for (int64_t a = 0; a < mesh.getRank(); ++a)
      if (!llvm::is_contained(axes, a))
        others.push_back(a);
    auto i32 = builder.getI32Type();
    Value color = arith::IndexCastOp::create(builder, loc, i32,
                                             ravel(mesh, others));
    Value rankInGroup = arith::IndexCastOp::create(builder, loc, i32,
                                                   ravel(mesh, axes));
    c = mpi::CommSplitOp::create(builder, loc, Type(), mpi::CommType::get(ctx()),
                                 world(), color, rankInGroup)
            .getNewcomm();
    return c;
  }

private:
  MLIRContext *ctx() { return builder.getContext(); }
  Value index(int64_t v) { return arith::ConstantIndexOp::create(builder, loc, v); }

  OpBuilder builder;
  Location loc = UnknownLoc::get(builder.getContext());
  Value worldComm;
  llvm::DenseMap<Attribute, Value> positions;
  llvm::DenseMap<std::pair<Attribute, int64_t>, Value> coords;
  llvm::DenseMap<std::pair<Attribute, Attribute>, Value> comms;
};
} // namespace

/// Runs `mpi.allreduce` on a tensor: through 1-D buffers, since MLIR 22's
/// MPI-to-LLVM lowering counts only the first dimension of a memref.
static Value allreduceTensor(OpBuilder &b, Location loc, Value tensor,
                             mpi::MPI_ReductionOpEnum kind, Value comm) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  Value buffer = bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                                   /*read_only=*/true);
  int64_t n = type.getNumElements();
  auto flatType = MemRefType::get({n}, type.getElementType());
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    all[0].push_back(d);
  Value flat = buffer;
  if (type.getRank() == 0)
    flat = memref::ExpandShapeOp::create(b, loc, flatType, buffer,
                                         ArrayRef<ReassociationIndices>{});
  else if (type.getRank() > 1)
    flat = memref::CollapseShapeOp::create(b, loc, buffer, all);
  Value out = memref::AllocOp::create(b, loc, flatType);
  mpi::AllReduceOp::create(b, loc, Type(), flat, out, kind, comm);
  Value shaped = out;
  if (type.getRank() == 0)
    shaped = memref::CollapseShapeOp::create(b, loc, out,
                                             ArrayRef<ReassociationIndices>{});
  else if (type.getRank() > 1)
    shaped = memref::ExpandShapeOp::create(b, loc, memrefType, out, all);
  return bufferization::ToTensorOp::create(b, loc, type, shaped,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

static Value zerosLike(OpBuilder &b, Location loc, RankedTensorType type) {
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                        type.getElementType());
  Value zero = arith::ConstantOp::create(b, loc, type.getElementType(),
                                         b.getZeroAttr(type.getElementType()));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

static FailureOr<Value> lowerCollective(OpBuilder &b, FunctionContext &fn,
                                        CollectiveOpInterface op) {
  Location loc = op.getLoc();
  MeshAttr mesh = op.getMesh();
  ArrayRef<int64_t> axes = op.getAxes();
  Value input = op.getInput();
  auto type = cast<RankedTensorType>(input.getType());
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](AllReduceOp ar) -> FailureOr<Value> {
        mpi::MPI_ReductionOpEnum kind;
        switch (ar.getKind()) {
        case ReductionKind::Sum:
        case ReductionKind::Avg:
          kind = mpi::MPI_ReductionOpEnum::MPI_SUM;
          break;
        case ReductionKind::Max:
          kind = mpi::MPI_ReductionOpEnum::MPI_MAX;
          break;
        case ReductionKind::Min:
          kind = mpi::MPI_ReductionOpEnum::MPI_MIN;
          break;
        case ReductionKind::Prod:
          kind = mpi::MPI_ReductionOpEnum::MPI_PROD;
          break;
        }
        Value result = allreduceTensor(b, loc, input, kind, fn.comm(mesh, axes));
        if (ar.getKind() != ReductionKind::Avg)
          return result;
        auto elementType = dyn_cast<FloatType>(type.getElementType());
        if (!elementType)
          return ar.emitError("an avg allreduce of integers cannot be lowered");
        double inverse = 1.0 / double(mesh::groupSize(mesh, axes));
        Value factor = arith::ConstantOp::create(
            b, loc, elementType, b.getFloatAttr(elementType, inverse));
        Value splat = tensor::SplatOp::create(b, loc, type, factor);
        auto map = AffineMap::getMultiDimIdentityMap(type.getRank(),
                                                     b.getContext());
        return linalg::GenericOp::create(
                   b, loc, type, ValueRange{result, splat},
                   ValueRange{zerosLike(b, loc, type)},
                   ArrayRef<AffineMap>{map, map, map},
                   SmallVector<utils::IteratorType>(
                       type.getRank(), utils::IteratorType::parallel),
                   [](OpBuilder &nb, Location nloc, ValueRange args) {
                     Value product =
                         arith::MulFOp::create(nb, nloc, args[0], args[1]);
                     linalg::YieldOp::create(nb, nloc, product);
                   })
            .getResult(0);
      })
      .Case([&](BroadcastOp bc) -> FailureOr<Value> {
        // Only the group-local root contributes; a sum hands its value to
        // every member (the mpi dialect has no broadcast op).
        Value position = fn.groupPosition(mesh, axes);
        Value root = arith::ConstantIndexOp::create(b, loc, bc.getRoot());
        Value isRoot = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             position, root);
        Value zero = zerosLike(b, loc, type);
        Value contribution =
            arith::SelectOp::create(b, loc, isRoot, input, zero);
        return allreduceTensor(b, loc, contribution,
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
    stripper.addReplacement([&](FutureType type) -> Type {
      return stripper.replace(type.getValueType());
    });
    stripper.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);

    bool hadError = false;
    for (auto func : module.getOps<func::FuncOp>()) {
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
      FunctionContext fn(entryBlock, init);
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
        FailureOr<Value> lowered =
            lowerCollective(b, fn, cast<CollectiveOpInterface>(op));
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
      // Users (waits) were pushed after their collectives: erase backwards.
      for (Operation *op : llvm::reverse(dead))
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
