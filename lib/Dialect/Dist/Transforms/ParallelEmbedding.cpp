//===- ParallelEmbedding.cpp - vocab-parallel embedding lowering ----------===//
//
// Implements --dist-parallel-embedding. Paddle computes start_index per rank
// while building each rank's program (and PIR from the global rank, which is
// wrong once data parallelism > 1); here it is computed in the IR from the
// process's mesh coordinate, so one SPMD program serves every process and
// --dist-specialize-rank recovers the per-rank constants.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/Transforms/CompletedPass.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTPARALLELEMBEDDING
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

static constexpr llvm::StringLiteral kRewriteTag = "dist-parallel-embedding";

namespace {
/// How an embedding table is split: rows over `axis` of `mesh`, `rows` local
/// rows; `batchAxis` is the mesh axis splitting the ids' batch dim, or -1.
struct RowSplit {
  MeshAttr mesh;
  int64_t axis;
  int64_t rows;
  int64_t batchAxis;
};
} // namespace

/// Decides whether the lookup of `ids` in `weight` is row-parallel. Returns
/// failure with a diagnostic for bad input, nothing for a local lookup.
static FailureOr<std::optional<RowSplit>> analyzeTable(Operation *op, Value ids,
                                                       Value weight,
                                                       Type rowsType,
                                                       bool requireRowSplit) {
  auto weightType = cast<RankedTensorType>(weight.getType());
  TensorDistAttr weightDist = getTensorDist(weightType);
  // A split of the columns keeps the lookup local: each process reads its
  // columns of the rows it is given (and, with the rows split too, of the
  // rows it holds).
  int64_t rowAxis = weightDist ? weightDist.getMeshAxis(0) : -1;
  if (rowAxis == -1) {
    if (requireRowSplit)
      return op->emitError("weight rows are not split over a mesh axis; "
                           "nothing to lower to a vocab-parallel embedding");
    return std::optional<RowSplit>();
  }
  if (weightType.isDynamicDim(0))
    return op->emitError("weight has a dynamic row count; start_index needs "
                         "the local row count");
  MeshAttr mesh = weightDist.getMesh();

  int64_t batchAxis = -1;
  if (TensorDistAttr idsDist = getTensorDist(ids.getType())) {
    if (idsDist.getMesh() != mesh)
      return op->emitError("ids and weight are distributed on different "
                           "meshes");
    if (!idsDist.getDimsMapping().empty())
      batchAxis = idsDist.getMeshAxis(0);
  }
  if (batchAxis == rowAxis)
    return op->emitError("ids batch dim is split over mesh axis ")
           << rowAxis << ", which also splits the weight rows";
  if (TensorDistAttr rowsDist = getTensorDist(rowsType)) {
    if (rowsDist.getMesh() != mesh)
      return op->emitError("looked-up rows and weight are distributed on "
                           "different meshes");
    if (rowsDist.getDimOfMeshAxis(rowAxis))
      return op->emitError("looked-up rows are split over mesh axis ")
             << rowAxis << ", on which the lookup is partial";
  }
  return std::optional<RowSplit>(
      RowSplit{mesh, rowAxis, weightType.getDimSize(0), batchAxis});
}

/// start_index = coord(axis) * rows, computed for the executing process.
static Value buildStartIndex(OpBuilder &b, Location loc,
                             const RowSplit &split) {
  Value coord = ProcessCoordOp::create(b, loc, split.mesh, split.axis);
  Value rows = arith::ConstantIndexOp::create(b, loc, split.rows);
  return arith::MulIOp::create(b, loc, coord, rows);
}

/// The dist.all_slice along the rows' axis that is the lookup's one use
/// (through a cast that writes its replication out), if there is one: the
/// lookup's allreduce and that slice are then one reduce-scatter, as under
/// Megatron's sequence parallelism.
static AllSliceOp soleSliceAlongRows(EmbeddingOp op, const RowSplit &split) {
  Value v = op.getResult();
  if (!v.hasOneUse())
    return nullptr;
  Operation *user = *v.getUsers().begin();
  if (auto cast = dyn_cast<tensor::CastOp>(user)) {
    if (!cast.getResult().hasOneUse())
      return nullptr;
    user = *cast.getResult().getUsers().begin();
  }
  auto slice = dyn_cast<AllSliceOp>(user);
  if (!slice || slice.getMesh() != split.mesh ||
      slice.getAxes() != ArrayRef<int64_t>{split.axis})
    return nullptr;
  return slice;
}

static void lowerForward(OpBuilder &b, EmbeddingOp op, const RowSplit &split) {
  Location loc = rewriteLoc(op.getLoc(), kRewriteTag);
  b.setInsertionPoint(op);
  Value start = buildStartIndex(b, loc, split);
  // An unannotated result is replicated; the shard's lookup still has to
  // say that it is partial, so it gets an encoding on the table's mesh.
  RankedTensorType resultType = op.getResult().getType();
  TensorDistAttr resultDist = getTensorDist(resultType);
  if (!resultDist)
    resultDist = TensorDistAttr::get(
        split.mesh, SmallVector<int64_t>(resultType.getRank(), -1));
  auto partial = CEmbeddingOp::create(
      b, loc,
      withTensorDist(resultType,
                     resultDist.addPartial(split.axis, ReductionKind::Sum)),
      op.getIds(), op.getWeight(), start);
  if (AllSliceOp slice = soleSliceAlongRows(op, split)) {
    b.setInsertionPoint(slice);
    Value scattered = ReduceScatterOp::create(
        b, loc, slice.getType(), partial.getResult(), split.mesh, split.axis,
        ReductionKind::Sum, nullptr);
    Operation *cast = slice.getInput().getDefiningOp();
    slice.replaceAllUsesWith(scattered);
    slice.erase();
    if (cast != op)
      cast->erase();
    op.erase();
    return;
  }
  Value reduced = AllReduceOp::create(
      b, loc, withTensorDist(resultType, resultDist), partial.getResult(),
      split.mesh, split.axis, ReductionKind::Sum, nullptr);
  if (reduced.getType() != resultType)
    reduced = tensor::CastOp::create(b, loc, resultType, reduced);
  op.getResult().replaceAllUsesWith(reduced);
  op.erase();
}

static void lowerBackward(OpBuilder &b, EmbeddingGradOp op,
                          const RowSplit &split, bool useAvg) {
  Location loc = rewriteLoc(op.getLoc(), kRewriteTag);
  b.setInsertionPoint(op);
  Value start = buildStartIndex(b, loc, split);
  Value outGrad = op.getOutGrad();
  auto identity = CIdentityOp::create(b, loc, outGrad.getType(), outGrad,
                                      split.mesh, split.axis, nullptr);

  // The shard's gradient is what c_embedding_grad's rule says: partial over
  // every axis that splits an ids dim (each process saw other ids).
  RankedTensorType gradType = op.getWeightGrad().getType();
  auto local =
      CEmbeddingGradOp::create(b, loc, gradType, op.getIds(), op.getWeight(),
                               identity.getResult(), start);
  std::string unused;
  llvm::raw_string_ostream os(unused);
  // analyzeTable accepted the lookup, and the logical op verified; should
  // the shard's rule still fail, its result keeps the logical op's type
  // and the verifier after the pass says why.
  FailureOr<SmallVector<TensorDistAttr>> inferred =
      rules::inferResultAttrs(local, os);
  TensorDistAttr localDist =
      succeeded(inferred) && !inferred->empty() ? inferred->front() : nullptr;
  if (!localDist)
    localDist = getTensorDist(gradType);
  if (!localDist)
    localDist = TensorDistAttr::getReplicated(split.mesh, gradType.getRank());
  SmallVector<int64_t> trivial;
  for (int64_t axis : localDist.getPartialAxes())
    if (split.mesh.getAxisSize(axis) == 1)
      trivial.push_back(axis);
  localDist = localDist.dropPartial(trivial);
  local.getWeightGrad().setType(withTensorDist(gradType, localDist));

  // Reduce what the logical gradient does not leave partial. The batch
  // axis is data parallelism: Paddle averages its replicas' gradients
  // (one avg allreduce, or a sum and a scale); the other axes split one
  // sample's ids, whose contributions add up.
  TensorDistAttr declared = getTensorDist(gradType);
  SmallVector<int64_t> sumAxes;
  int64_t dp = split.batchAxis;
  bool syncDp = false;
  for (auto [axis, kind] : localDist.getPartials()) {
    // A partial value over an axis of one process is complete already.
    if ((declared && declared.getPartialKind(axis)) ||
        split.mesh.getAxisSize(axis) == 1)
      continue;
    if (axis == dp)
      syncDp = true;
    else
      sumAxes.push_back(axis);
  }
  Value grad = local.getWeightGrad();
  TensorDistAttr current = localDist;
  if (!sumAxes.empty()) {
    current = current.dropPartial(sumAxes);
    grad =
        AllReduceOp::create(b, loc, withTensorDist(gradType, current), grad,
                            split.mesh, sumAxes, ReductionKind::Sum, nullptr);
  }
  if (syncDp) {
    current = current.dropPartial(dp);
    ReductionKind kind = useAvg ? ReductionKind::Avg : ReductionKind::Sum;
    grad = AllReduceOp::create(b, loc, withTensorDist(gradType, current), grad,
                               split.mesh, dp, kind, nullptr);
    if (!useAvg)
      grad = ScaleOp::create(
          b, loc, grad,
          b.getF64FloatAttr(1.0 / double(split.mesh.getAxisSize(dp))));
  }
  op.getWeightGrad().replaceAllUsesWith(grad);
  op.erase();
}

/// The parameter name of `value` when it is an argument of a function marked
/// with dist.param.
static std::optional<StringAttr> getParamName(Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg)
    return std::nullopt;
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func || arg.getOwner() != &func.getBody().front())
    return std::nullopt;
  if (auto name = func.getArgAttrOfType<StringAttr>(
          arg.getArgNumber(), DistDialect::kParamAttrName))
    return name;
  return std::nullopt;
}

namespace {
/// The startup function: the parameters come in as arguments and leave,
/// synchronised, as the results carrying the same dist.param name.
class StartupFunction {
public:
  StartupFunction(ModuleOp module) : module(module) {}

  /// Finds the startup function and checks that the pass can extend it:
  /// one function, with a body of one block that returns.
  LogicalResult find() {
    for (auto f : module.getOps<func::FuncOp>()) {
      if (!f->hasAttr(DistDialect::kStartupAttrName))
        continue;
      if (func) {
        InFlightDiagnostic diag =
            f.emitError("more than one function is marked '")
            << DistDialect::kStartupAttrName
            << "'; the parameters' broadcasts need one";
        diag.attachNote(func.getLoc()) << "the other one";
        return diag;
      }
      func = f;
    }
    if (!func)
      return success();
    if (func.isExternal())
      return func.emitError("the '")
             << DistDialect::kStartupAttrName << "' function @"
             << func.getName()
             << " is a declaration; the parameters' broadcasts go into its "
                "body";
    if (!func.getBody().hasOneBlock() ||
        !isa<func::ReturnOp>(func.getBody().front().getTerminator()))
      return func.emitError("the '")
             << DistDialect::kStartupAttrName << "' function @"
             << func.getName()
             << " must be one block ending in func.return, where the "
                "parameters' broadcasts go";
    return success();
  }

  /// Broadcasts parameter `name` (of type `type`) from group-local root 0
  /// along `axis`, unless the startup function does already. Returns whether
  /// a broadcast was added.
  bool syncParameter(StringAttr name, RankedTensorType type, MeshAttr mesh,
                     int64_t axis, Location loc) {
    getOrCreate(loc);
    unsigned resultIndex = getOrAddParameter(name, type);
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    Value current = ret.getOperand(resultIndex);
    Value v = current;
    while (auto bcast = v.getDefiningOp<BroadcastOp>()) {
      if (bcast.getAxes() == ArrayRef<int64_t>{axis})
        return false;
      v = bcast.getInput();
    }
    OpBuilder b(ret);
    auto bcast = BroadcastOp::create(b, loc, current.getType(), current, mesh,
                                     axis, /*root=*/0, nullptr);
    ret->setOperand(resultIndex, bcast.getResult());
    return true;
  }

private:
  void getOrCreate(Location loc) {
    if (func)
      return;
    OpBuilder b(module.getContext());
    func = func::FuncOp::create(loc, "startup", b.getFunctionType({}, {}));
    func->setAttr(DistDialect::kStartupAttrName, b.getUnitAttr());
    // Inserting through the symbol table renames ours on a clash with a
    // user function of the same name.
    SymbolTable(module).insert(func);
    Block *entry = func.addEntryBlock();
    b.setInsertionPointToEnd(entry);
    func::ReturnOp::create(b, loc);
  }

  /// Index of the result returning parameter `name`, adding an argument and
  /// a result that passes it through when the function lacks it.
  unsigned getOrAddParameter(StringAttr name, RankedTensorType type) {
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (func.getResultAttrOfType<StringAttr>(
              i, DistDialect::kParamAttrName) == name)
        return i;
    Block &entry = func.getBody().front();
    std::optional<unsigned> argIndex;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (func.getArgAttrOfType<StringAttr>(i, DistDialect::kParamAttrName) ==
          name)
        argIndex = i;
    MLIRContext *ctx = module.getContext();
    auto paramAttr =
        NamedAttribute(StringAttr::get(ctx, DistDialect::kParamAttrName), name);
    if (!argIndex) {
      argIndex = func.getNumArguments();
      (void)func.insertArgument(*argIndex, type,
                                DictionaryAttr::get(ctx, {paramAttr}),
                                func.getLoc());
    }
    unsigned resultIndex = func.getNumResults();
    (void)func.insertResult(resultIndex, type,
                            DictionaryAttr::get(ctx, {paramAttr}));
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    SmallVector<Value> operands(ret.getOperands());
    operands.push_back(entry.getArgument(*argIndex));
    ret->setOperands(operands);
    return resultIndex;
  }

  ModuleOp module;
  func::FuncOp func;
};

struct DistParallelEmbeddingPass
    : public CompletedPass<
          dist::impl::DistParallelEmbeddingBase<DistParallelEmbeddingPass>> {
  using CompletedPass::CompletedPass;

  void runOnCompleted(ModuleOp module) override {
    SmallVector<Operation *> lookups;
    module.walk([&](Operation *op) {
      if (isa<EmbeddingOp, EmbeddingGradOp>(op))
        lookups.push_back(op);
    });

    // Parameters to sync, in first-use order so the output is deterministic.
    llvm::MapVector<StringAttr, std::pair<RankedTensorType, Location>> params;
    OpBuilder b(&getContext());
    bool hadError = false;
    for (Operation *op : lookups) {
      Value ids = op->getOperand(0), weight = op->getOperand(1);
      // The looked-up rows: the forward result, or the backward out_grad.
      Type rowsType = isa<EmbeddingOp>(op) ? op->getResult(0).getType()
                                           : op->getOperand(2).getType();
      FailureOr<std::optional<RowSplit>> split =
          analyzeTable(op, ids, weight, rowsType, requireRowSplit);
      if (failed(split)) {
        hadError = true;
        continue;
      }
      if (!*split)
        continue;
      if (auto fwd = dyn_cast<EmbeddingOp>(op)) {
        if (!fwd->hasAttr(DistDialect::kRecomputeAttrName))
          if (std::optional<StringAttr> name = getParamName(weight))
            params.insert(
                {*name,
                 {cast<RankedTensorType>(weight.getType()), weight.getLoc()}});
        lowerForward(b, fwd, **split);
        ++numForward;
      } else {
        lowerBackward(b, cast<EmbeddingGradOp>(op), **split, useAvgAllreduce);
        ++numBackward;
      }
    }
    if (hadError)
      return signalPassFailure();

    StartupFunction startup(module);
    if (!params.empty() && failed(startup.find()))
      return signalPassFailure();
    for (auto &[name, typeAndLoc] : params) {
      auto [type, loc] = typeAndLoc;
      TensorDistAttr dist = getTensorDist(type);
      MeshAttr mesh = dist.getMesh();
      // Every process of a group along an axis that does not split the
      // parameter must start from the same values.
      for (int64_t axis = 0; axis < mesh.getRank(); ++axis)
        if (mesh.getAxisSize(axis) > 1 && !dist.getDimOfMeshAxis(axis) &&
            startup.syncParameter(name, type, mesh, axis,
                                  rewriteLoc(loc, kRewriteTag)))
          ++numBroadcasts;
    }
  }
};
} // namespace
