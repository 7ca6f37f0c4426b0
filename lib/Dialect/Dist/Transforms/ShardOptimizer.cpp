//===- ShardOptimizer.cpp - ZeRO stages 1 and 2 ---------------------------===//
//
// Implements --dist-shard-optimizer: each process of a data-parallel group
// keeps and updates its shard of every optimizer state. Shards are rows of a
// dist.pack buffer, so every parameter shards the same way, whatever its
// shape; the types of the states say what each process holds, which is what
// the overlap report's state memory reads.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/Transforms/CompletedPass.h"
#include "dist/Dialect/Dist/Transforms/Packing.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <map>

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTSHARDOPTIMIZER
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

static constexpr llvm::StringLiteral kRewriteTag = "dist-shard-optimizer";

namespace {
/// An optimizer update: which operands and results are the parameter, the
/// gradient and the states.
struct Update {
  Operation *op;
  Value param, grad;
  SmallVector<unsigned> stateOperands;
  SmallVector<unsigned> stateResults;
  unsigned newParam = 0;
};

/// How a parameter's tensors are sharded over the data-parallel axis: the
/// buffer of all processes' rows and one process's row.
struct Sharding {
  MeshAttr mesh;
  int64_t axis;
  int64_t size;
  /// The other axis that splits the parameter, or -1.
  int64_t other;
  RankedTensorType rows;  // D x c, replicated over the axis
  RankedTensorType shard; // 1 x c, split over the axis
};

/// The function's signature changes: the new type of each argument and
/// result that changes, which the calls are adapted to, in position order
/// (so that the conversions at a call come out in a stable order).
struct SignatureChange {
  std::map<unsigned, Type> arguments, results;

  Type newArgument(unsigned index) const {
    auto it = arguments.find(index);
    return it == arguments.end() ? Type() : it->second;
  }
};
} // namespace

static std::optional<Update> asUpdate(Operation *op) {
  if (auto sgd = dyn_cast<SgdOp>(op))
    return Update{op, sgd.getParam(), sgd.getGrad(), {2}, {1}, 0};
  if (auto adamw = dyn_cast<AdamWOp>(op))
    return Update{op, adamw.getParam(), adamw.getGrad(), {2, 3}, {1, 2}, 0};
  return std::nullopt;
}

/// The data-parallel axis of `mesh`: the first whose name is in `names`.
static std::optional<int64_t> dataParallelAxis(MeshAttr mesh,
                                               ArrayRef<std::string> names) {
  if (!mesh)
    return std::nullopt;
  ArrayRef<StringAttr> meshNames = mesh.getNames();
  for (auto [axis, name] : llvm::enumerate(meshNames))
    if (llvm::is_contained(names, name.getValue()))
      return axis;
  return std::nullopt;
}

/// The sharding of `update`'s parameter, nothing when there is no
/// data-parallel axis of more than one process to shard over, or failure
/// with an error.
static FailureOr<std::optional<Sharding>>
shardingOf(const Update &update, ArrayRef<std::string> dpAxes) {
  Operation *op = update.op;
  std::string why;
  llvm::raw_string_ostream os(why);
  FailureOr<MeshAttr> mesh = rules::commonMesh(op, os);
  if (failed(mesh))
    return op->emitOpError() << why;
  std::optional<int64_t> axis = dataParallelAxis(*mesh, dpAxes);
  if (!axis || (*mesh).getShape()[*axis] == 1)
    return std::optional<Sharding>();
  Sharding s;
  s.mesh = *mesh;
  s.axis = *axis;
  s.size = (*mesh).getShape()[*axis];
  s.other = -1;
  auto paramType = cast<RankedTensorType>(update.param.getType());
  TensorDistAttr dist = getTensorDist(paramType);
  std::string axisName = rules::axisName(s.mesh, s.axis);
  if (dist && (dist.getDimOfMeshAxis(s.axis) || dist.getPartialKind(s.axis)))
    return op->emitOpError("cannot shard the optimizer state over mesh ")
           << axisName << ": the parameter " << paramType
           << " is already split or partial over it";
  for (int64_t other : splitAxesOf(paramType)) {
    if (s.other != -1)
      return op->emitOpError("cannot shard the optimizer state of ")
             << paramType
             << ": the parameter is split over more than one other mesh "
                "axis, and a packed row holds one";
    s.other = other;
  }
  if (!paramType.hasStaticShape())
    return op->emitOpError("cannot shard the optimizer state of ")
           << paramType << ": packing needs a static shape";
  s.rows = packedType(TypeRange(paramType), s.size, s.mesh, {-1, s.other});
  // One process's row of the rows: split over the axis.
  s.shard = withTensorDist(RankedTensorType::get({1, s.rows.getDimSize(1)},
                                                 paramType.getElementType()),
                           TensorDistAttr::get(s.mesh, {s.axis, s.other}));
  return std::optional<Sharding>(s);
}

/// Checks that state operand `operand` of `update` is an argument marked
/// dist.state that nothing else reads, and result `result` one that only
/// the return gives, at a result marked dist.state; gives the argument and
/// result numbers.
static FailureOr<std::pair<unsigned, unsigned>> stateSlots(const Update &update,
                                                           unsigned operand,
                                                           unsigned result,
                                                           func::FuncOp func) {
  Operation *op = update.op;
  Value state = op->getOperand(operand);
  auto arg = dyn_cast<BlockArgument>(state);
  if (!arg || arg.getOwner() != &func.getBody().front() ||
      !func.getArgAttr(arg.getArgNumber(), DistDialect::kStateAttrName) ||
      !state.hasOneUse())
    return op->emitOpError("operand #")
           << operand << " is optimizer state: to shard it, it must be an "
           << "argument of the function marked '" << DistDialect::kStateAttrName
           << "' that only this update reads";
  Value next = op->getResult(result);
  auto ret = next.hasOneUse() ? dyn_cast<func::ReturnOp>(*next.user_begin())
                              : func::ReturnOp();
  if (!ret || !func.getResultAttr(next.use_begin()->getOperandNumber(),
                                  DistDialect::kStateAttrName))
    return op->emitOpError("result #")
           << result << " is optimizer state: to shard it, the function "
           << "must return it, and only that, at a result marked '"
           << DistDialect::kStateAttrName << "'";
  return std::make_pair(arg.getArgNumber(),
                        next.use_begin()->getOperandNumber());
}

/// `value` (of the parameter's type) as this process's shard: packed into
/// rows and sliced.
static Value toShard(OpBuilder &b, Location loc, Value value,
                     const Sharding &s) {
  Value packed = PackOp::create(b, loc, s.rows, ValueRange{value});
  return AllSliceOp::create(b, loc, s.shard, packed, s.mesh,
                            ArrayRef<int64_t>{s.axis});
}

/// A shard gathered and unpacked into `type`.
static Value fromShard(OpBuilder &b, Location loc, Value shard, Type type,
                       const Sharding &s) {
  Value rows = AllGatherOp::create(b, loc, s.rows, shard, s.mesh,
                                   ArrayRef<int64_t>{s.axis}, nullptr);
  return UnpackOp::create(b, loc, TypeRange(type), rows).getResult(0);
}

/// The gradient's shard: the allreduce over the axis that made `grad`
/// becomes a reduce-scatter of its packed operand, at its place; a gradient
/// already whole over the axis is sliced.
static Value gradientShard(OpBuilder &b, Location loc, Value grad,
                           const Sharding &s) {
  auto reduce = grad.getDefiningOp<AllReduceOp>();
  if (!reduce || cast<CollectiveOpInterface>(*reduce).isAsync() ||
      !llvm::is_contained(reduce.getAxes(), s.axis)) {
    OpBuilder::InsertionGuard guard(b);
    if (Operation *def = grad.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(grad).getOwner());
    return toShard(b, loc, grad, s);
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(reduce);
  Location reduceLoc = rewriteLoc(reduce.getLoc(), kRewriteTag);
  Value partial = reduce.getInput();
  auto partialType = cast<RankedTensorType>(partial.getType());
  SmallVector<int64_t> others;
  for (int64_t axis : reduce.getAxes())
    if (axis != s.axis)
      others.push_back(axis);
  if (!others.empty()) {
    // The other axes first: the buffer is then partial over this one only.
    partialType = withTensorDist(
        partialType, getTensorDist(partialType).dropPartial(others));
    partial = AllReduceOp::create(b, reduceLoc, partialType, partial, s.mesh,
                                  others, reduce.getKind(), nullptr);
  }
  RankedTensorType rows = withTensorDist(
      s.rows, getTensorDist(s.rows).addPartial({s.axis}, reduce.getKind()));
  Value packed = PackOp::create(b, reduceLoc, rows, ValueRange{partial});
  return ReduceScatterOp::create(b, reduceLoc, s.shard, packed, s.mesh,
                                 ArrayRef<int64_t>{s.axis}, reduce.getKind(),
                                 nullptr);
}

/// Shards `update` (in `func`, as `s` says); records the signature change.
static LogicalResult shardUpdate(const Update &update, const Sharding &s,
                                 func::FuncOp func, int64_t stage,
                                 SignatureChange &change) {
  Operation *op = update.op;
  SmallVector<std::pair<unsigned, unsigned>> slots;
  for (auto [operand, result] :
       llvm::zip_equal(update.stateOperands, update.stateResults)) {
    FailureOr<std::pair<unsigned, unsigned>> slot =
        stateSlots(update, operand, result, func);
    if (failed(slot))
      return failure();
    slots.push_back(*slot);
  }
  Location loc = rewriteLoc(op->getLoc(), kRewriteTag);
  // The gradient's uses besides the update, before the shard adds its own.
  Value grad = update.grad;
  SmallVector<OpOperand *> gradUses;
  for (OpOperand &use : grad.getUses())
    if (use.getOwner() != op)
      gradUses.push_back(&use);
  OpBuilder b(op);
  Value gradShard = gradientShard(b, loc, update.grad, s);
  Value paramShard = toShard(b, loc, update.param, s);

  SmallVector<Value> operands(op->getOperands());
  operands[0] = paramShard;
  operands[1] = gradShard;
  for (auto [operand, slot] : llvm::zip_equal(update.stateOperands, slots)) {
    BlockArgument arg = func.getArgument(slot.first);
    arg.setType(s.shard);
    change.arguments[slot.first] = s.shard;
    operands[operand] = arg;
  }
  OperationState state(loc, op->getName());
  state.addOperands(operands);
  state.addAttributes(op->getAttrs());
  state.addTypes(SmallVector<Type>(op->getNumResults(), s.shard));
  Operation *sharded = b.create(state);

  Value newParam = fromShard(b, loc, sharded->getResult(update.newParam),
                             update.param.getType(), s);
  op->getResult(update.newParam).replaceAllUsesWith(newParam);
  for (auto [result, slot] : llvm::zip_equal(update.stateResults, slots)) {
    op->getResult(result).replaceAllUsesWith(sharded->getResult(result));
    change.results[slot.second] = s.shard;
  }
  op->erase();

  // The gradient's other uses: the shard where stage 2 returns a gradient,
  // the gathered gradient elsewhere, gathered only before the first of them
  // (so that a bucket may still wait for later gradients).
  SmallVector<OpOperand *> wholeUses;
  for (OpOperand *use : gradUses) {
    Operation *user = use->getOwner();
    if (stage >= 2 && isa<func::ReturnOp>(user) &&
        func.getResultAttr(use->getOperandNumber(),
                           DistDialect::kGradAttrName)) {
      use->set(gradShard);
      change.results[use->getOperandNumber()] = s.shard;
      continue;
    }
    wholeUses.push_back(use);
  }
  if (!wholeUses.empty()) {
    Block *block = gradShard.getDefiningOp()->getBlock();
    Operation *first = nullptr;
    for (OpOperand *use : wholeUses) {
      Operation *at = block->findAncestorOpInBlock(*use->getOwner());
      if (at && (!first || at->isBeforeInBlock(first)))
        first = at;
    }
    OpBuilder::InsertionGuard guard(b);
    if (first)
      b.setInsertionPoint(first);
    else
      b.setInsertionPointAfter(gradShard.getDefiningOp());
    Value whole = fromShard(b, loc, gradShard, grad.getType(), s);
    for (OpOperand *use : wholeUses)
      use->set(whole);
  }
  if (Operation *def = grad.getDefiningOp();
      def && grad.use_empty() && isa<AllReduceOp>(def))
    def->erase();
  return success();
}

/// Converts the calls of `func` to its new signature. `oldType` is the
/// signature before; a value crosses between the old and new type of a
/// slot with `toShard`/`fromShard` of that slot's sharding.
static LogicalResult
adaptCalls(func::FuncOp func, FunctionType oldType,
           const SignatureChange &change,
           const llvm::DenseMap<Type, Sharding> &shardingOf, ModuleOp module) {
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(func, module);
  if (!uses)
    return func.emitOpError("has symbol uses the pass cannot see");
  SmallVector<func::CallOp> calls;
  for (const SymbolTable::SymbolUse &use : *uses) {
    auto call = dyn_cast<func::CallOp>(use.getUser());
    if (!call)
      return use.getUser()->emitOpError("references ")
             << func.getSymName()
             << ", whose signature --dist-shard-optimizer changes; only "
                "func.call can be adapted";
    calls.push_back(call);
  }
  auto sharding = [&](Type type) -> const Sharding & {
    return shardingOf.find(type)->second;
  };
  // Results first, so that a state one call returns and the next takes
  // keeps its new type.
  for (func::CallOp call : calls)
    for (auto [index, type] : change.results)
      call.getResult(index).setType(type);
  for (func::CallOp call : calls) {
    OpBuilder b(call);
    Location loc = rewriteLoc(call.getLoc(), kRewriteTag);
    for (auto [index, type] : change.arguments) {
      Value operand = call.getOperand(index);
      if (operand.getType() != type)
        call->setOperand(index, toShard(b, loc, operand, sharding(type)));
    }
  }
  for (func::CallOp call : calls) {
    OpBuilder b(call->getContext());
    b.setInsertionPointAfter(call);
    Location loc = rewriteLoc(call.getLoc(), kRewriteTag);
    for (auto [index, type] : change.results) {
      Value result = call.getResult(index);
      Value whole;
      for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
        auto next = dyn_cast<func::CallOp>(use.getOwner());
        if (next && next.getCallee() == func.getSymName() &&
            change.newArgument(use.getOperandNumber()) == type)
          continue;
        if (!whole)
          whole = fromShard(b, loc, result, oldType.getResult(index),
                            sharding(type));
        use.set(whole);
      }
    }
  }
  return success();
}

namespace {
struct DistShardOptimizerPass
    : public CompletedPass<
          dist::impl::DistShardOptimizerBase<DistShardOptimizerPass>> {
  using CompletedPass::CompletedPass;

  LogicalResult shardFunction(func::FuncOp func, ModuleOp module) {
    SmallVector<Update> updates;
    bool failedAny = false;
    bool oneBlock = func.getBody().hasOneBlock();
    func.walk([&](Operation *op) {
      std::optional<Update> update = asUpdate(op);
      if (!update)
        return;
      if (!oneBlock || op->getBlock() != &func.getBody().front()) {
        op->emitOpError("is not in the body block of a function of one "
                        "block, so --dist-shard-optimizer cannot shard its "
                        "states");
        failedAny = true;
        return;
      }
      updates.push_back(*update);
    });
    if (failedAny)
      return failure();
    FunctionType oldType = func.getFunctionType();
    SignatureChange change;
    llvm::DenseMap<Type, Sharding> shardings;
    for (const Update &update : updates) {
      FailureOr<std::optional<Sharding>> s = shardingOf(update, dpAxes);
      if (failed(s))
        return failure();
      if (!*s)
        continue;
      shardings.try_emplace((*s)->shard, **s);
      if (failed(shardUpdate(update, **s, func, stage, change)))
        return failure();
      ++numUpdates;
    }
    if (change.arguments.empty() && change.results.empty())
      return success();
    Operation *ret = func.getBody().front().getTerminator();
    func.setType(FunctionType::get(func.getContext(),
                                   func.getBody().front().getArgumentTypes(),
                                   ret->getOperandTypes()));
    return adaptCalls(func, oldType, change, shardings, module);
  }

  void runOnCompleted(ModuleOp module) override {
    if (stage != 1 && stage != 2) {
      module.emitError("--dist-shard-optimizer: stage must be 1 or 2, got ")
          << static_cast<int64_t>(stage);
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs)
      if (!func.isExternal() && failed(shardFunction(func, module)))
        return signalPassFailure();
  }
};
} // namespace
