//===- Pipeline.cpp - a training step as pipeline stages ------------------===//
//
// Implements --dist-pipeline. The input is a training step on one
// microbatch whose ops say their stage (`dist.stage = k`); the output runs M
// microbatches through P stages on the pipeline axis of the mesh, each
// stage's work in the order the schedule gives it (PipelineSchedule.h),
// activations and their gradients passed by dist.send/dist.recv, the
// gradients averaged over the microbatches before the update.
//
// The step's ops fall into phases by what they feed: the forward is what
// the loss (the result marked `dist.loss`) is computed from; the update is
// every optimizer op and what is computed from one; the backward is the
// rest that a result or the update needs. For zb-h1 each dist.matmul_grad
// becomes its two products first and the backward splits into W, the
// weight-gradient products and what is computed from them alone, and B,
// the rest (the chain of activation gradients). A phase of one stage for
// one microbatch is an action of the schedule.
//
//===----------------------------------------------------------------------===//

#include "dist/Analysis/CostModel.h"
#include "dist/Analysis/PipelineCheck.h"
#include "dist/Analysis/PipelineSchedule.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"
#include "dist/Support/TraceSvg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTPIPELINE
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

static constexpr llvm::StringLiteral kRewriteTag = "dist-pipeline";
static constexpr int64_t kMaxTag = 32767;

namespace {

enum class Phase { Forward, Backward, Weight, Update };

/// One action of the schedule on its stage: a phase of one chunk.
struct ActionKey {
  PipelineAction::Kind kind;
  int64_t chunk;
  bool operator==(const ActionKey &o) const {
    return kind == o.kind && chunk == o.chunk;
  }
};

/// A value one stage sends another for one microbatch.
struct Message {
  Value value;
  int64_t microbatch, from, to, tag = -1;
  /// Positions in the sender's and the receiver's order.
  size_t sentAfter, readAt;
};

/// Ops that make a value from nothing: each stage clones them where used.
bool isFree(Operation *op) {
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         !op->hasAttr(DistDialect::kStageAttrName) &&
         (isa<arith::ConstantOp, tensor::EmptyOp, ProcessCoordOp>(op));
}

/// Everything an op reads: its operands and what its regions capture.
SmallVector<Value> usedValues(Operation *op) {
  SmallVector<Value> used(op->getOperands());
  if (op->getNumRegions()) {
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    used.append(captured.begin(), captured.end());
  }
  return used;
}

class StepPipeliner {
public:
  StepPipeliner(func::FuncOp func, MeshAttr mesh, int64_t axis,
                PipelineScheduleKind kind, int64_t microbatches, int64_t chunks,
                bool remarks, StringRef svgFile)
      : func(func), mesh(mesh), axis(axis), kind(kind), M(microbatches),
        V(chunks), P(mesh.getAxisSize(axis)), remarks(remarks),
        svgFile(svgFile), body(func.getBody().front()) {}

  LogicalResult run();

private:
  LogicalResult assignStages();
  void splitWeightProducts();
  LogicalResult assignPhases();
  LogicalResult assignData();
  PipelineCosts estimateCosts();
  SmallVector<int64_t> heldBytes() const;
  void report();
  LogicalResult writeSvg(StringRef path);
  LogicalResult planMessages();
  void emit();
  void emitStage(int64_t stage, Block &block, TypeRange plainTypes);
  Value lookup(OpBuilder &b, Value value, int64_t microbatch);
  void emitAction(OpBuilder &b, int64_t stage, size_t index);

  int64_t processOf(Operation *op) const { return stageOf.lookup(op) % P; }
  int64_t chunkOf(Operation *op) const { return stageOf.lookup(op) / P; }
  ActionKey actionOf(Operation *op) const {
    Phase phase = phaseOf.lookup(op);
    PipelineAction::Kind k = phase == Phase::Forward ? PipelineAction::Forward
                             : phase == Phase::Weight
                                 ? PipelineAction::Weight
                                 : PipelineAction::Backward;
    return {k, chunkOf(op)};
  }
  /// Where action `key` for `microbatch` is in `stage`'s order.
  size_t positionOf(int64_t stage, ActionKey key, int64_t microbatch) const {
    for (auto [i, timed] : llvm::enumerate(schedule->order[stage]))
      if (timed.action.kind == key.kind && timed.action.chunk == key.chunk &&
          timed.action.microbatch == microbatch)
        return i;
    llvm_unreachable("every action is in its stage's order");
  }

  func::FuncOp func;
  MeshAttr mesh;
  int64_t axis;
  PipelineScheduleKind kind;
  int64_t M, V, P;
  bool remarks;
  std::string svgFile;
  Block &body;
  /// How many actions ahead a receive is posted: one suffices for GPipe and
  /// 1F1B; the interleaved and zero-bubble orders, where a stage's next
  /// action need not be the one its peer feeds, post every receive first.
  size_t lookahead = 1;

  std::optional<PipelineSchedule> schedule;
  /// Whether the schedule's times are the cost model's seconds (else units
  /// of a forward).
  bool priced = false;
  DenseMap<Operation *, int64_t> stageOf;
  DenseMap<Operation *, Phase> phaseOf;
  /// The ops that run, in program order.
  SmallVector<Operation *> ops;
  /// Arguments that take one value per microbatch (the data).
  llvm::SmallDenseSet<unsigned> perMicrobatch;
  /// Values averaged over microbatches: the results and what the update
  /// reads of the forward and backward.
  SetVector<Value> averaged;
  SmallVector<Message> messages;

  // Emission state of the stage being built.
  SmallVector<IRMapping> maps;
  IRMapping shared;
  DenseMap<Value, Value> sums;
  SmallVector<Value> newArgs;
  DenseMap<unsigned, unsigned> firstNewArg;
  Block *stageBlock = nullptr;
};

} // namespace

LogicalResult StepPipeliner::assignStages() {
  // An op without a stage (a collective completion placed, a product the
  // overlap pass split) is in its first staged operand's, or else in the
  // stage of its first user (a reshard of a constant).
  DenseMap<Operation *, int64_t> unit;
  for (Operation &op : body.without_terminator()) {
    if (isFree(&op))
      continue;
    if (auto stage =
            op.getAttrOfType<IntegerAttr>(DistDialect::kStageAttrName)) {
      unit[&op] = stage.getInt();
      continue;
    }
    for (Value v : usedValues(&op))
      if (Operation *def = v.getDefiningOp(); def && unit.count(def)) {
        unit[&op] = unit[def];
        break;
      }
  }
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (isFree(&op) || unit.count(&op))
      continue;
    for (Operation *user : op.getUsers())
      if (Operation *top = body.findAncestorOpInBlock(*user);
          top && unit.count(top)) {
        unit[&op] = unit[top];
        break;
      }
    if (!unit.count(&op))
      return op.emitOpError("has no '")
             << DistDialect::kStageAttrName
             << "', and neither what it reads nor what reads it has one: say "
                "which stage it is in";
  }
  int64_t units = 0;
  for (auto [op, u] : unit)
    units = std::max(units, u + 1);
  if (units > (int64_t(1) << 20))
    return func.emitOpError("has ") << units << " stages, more than 2^20";
  int64_t virtualStages = P * V;
  if (units % virtualStages != 0)
    return func.emitOpError("has ")
           << units << " stages, which do not group evenly into " << P
           << " pipeline stages"
           << (V > 1 ? " of " + std::to_string(V) + " chunks" : std::string());
  int64_t perStage = units / virtualStages;
  for (auto [op, u] : unit)
    stageOf[op] = u / perStage;
  return success();
}

/// Zero-bubble schedules defer the weight gradients (W) behind the input
/// gradients (B), so a dist.matmul_grad, which computes both, becomes its
/// two products, each in the stage of the op it replaces.
void StepPipeliner::splitWeightProducts() {
  struct Created : OpBuilder::Listener {
    SmallVector<Operation *> ops;
    void notifyOperationInserted(Operation *op,
                                 OpBuilder::InsertPoint) override {
      ops.push_back(op);
    }
  };
  for (auto op : llvm::make_early_inc_range(body.getOps<MatmulGradOp>())) {
    std::string whyNot;
    if (failed(canBuildMatmulGradProducts(op, whyNot)))
      continue;
    Created created;
    OpBuilder b(op);
    b.setListener(&created);
    auto [dx, dy] = buildMatmulGradProducts(b, op, op.getLoc());
    for (Operation *product : created.ops)
      stageOf[product] = stageOf.lookup(op);
    op.getXGrad().replaceAllUsesWith(dx);
    op.getYGrad().replaceAllUsesWith(dy);
    stageOf.erase(op);
    op.erase();
  }
}

LogicalResult StepPipeliner::assignPhases() {
  Operation *ret = body.getTerminator();
  std::optional<unsigned> lossIndex;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (func.getResultAttr(i, DistDialect::kLossAttrName)) {
      if (lossIndex)
        return func.emitOpError("marks two results '")
               << DistDialect::kLossAttrName << "'";
      lossIndex = i;
    }
  if (!lossIndex)
    return func.emitOpError("has no result marked '")
           << DistDialect::kLossAttrName
           << "': the forward of a pipelined step is what the loss needs";
  // The forward: what the loss is computed from.
  SmallVector<Value> work{ret->getOperand(*lossIndex)};
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || isFree(def) || phaseOf.count(def))
      continue;
    phaseOf[def] = Phase::Forward;
    llvm::append_range(work, usedValues(def));
  }
  // The update: optimizer ops and what is computed from them.
  for (Operation &op : body.without_terminator()) {
    bool fromUpdate =
        isa<SgdOp, AdamWOp>(op) || llvm::any_of(usedValues(&op), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && phaseOf.lookup(def) == Phase::Update &&
                 phaseOf.count(def);
        });
    if (!fromUpdate)
      continue;
    if (phaseOf.count(&op))
      return op.emitOpError("is both in the forward (the loss needs it) and "
                            "computed from an optimizer update");
    phaseOf[&op] = Phase::Update;
  }
  // The backward: the rest of what the results and the update need.
  for (Value v : ret->getOperands())
    work.push_back(v);
  for (auto [op, phase] : phaseOf)
    if (phase == Phase::Update)
      llvm::append_range(work, usedValues(op));
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || isFree(def) || phaseOf.count(def))
      continue;
    phaseOf[def] = Phase::Backward;
    llvm::append_range(work, usedValues(def));
  }
  for (Operation &op : body.without_terminator())
    if (phaseOf.count(&op))
      ops.push_back(&op);
  // zb-h1: W is the weight-gradient products (X^T * dOut, as
  // splitWeightProducts makes them) and what is computed from them alone (a
  // data-parallel allreduce of one); B is the rest, the chain of activation
  // gradients that the stage before waits for or that a W product reads.
  if (kind == PipelineScheduleKind::ZeroBubbleH1) {
    for (Operation *op : ops) {
      if (phaseOf[op] != Phase::Backward)
        continue;
      auto product = dyn_cast<MatmulOp>(op);
      bool fromWeight = false, fromB = false;
      for (Value v : usedValues(op)) {
        Operation *def = v.getDefiningOp();
        if (!def || !phaseOf.count(def))
          continue;
        fromWeight |= phaseOf[def] == Phase::Weight;
        fromB |= phaseOf[def] == Phase::Backward;
      }
      if ((product && product.getTransposeX()) || (fromWeight && !fromB))
        phaseOf[op] = Phase::Weight;
    }
    // A microbatch's W step runs after its B step, so a product of that
    // shape that B reads (a hand-written activation gradient through
    // X^T * Y) stays in B. Readers follow their definitions: one pass from
    // the end also returns to B the W ops that such a product reads.
    // (Another stage's W may read a W value: the transfer then happens
    // between W steps, and the deadlock check sees it like any other.)
    for (Operation *op : llvm::reverse(ops)) {
      if (phaseOf[op] != Phase::Weight)
        continue;
      if (llvm::any_of(op->getUsers(), [&](Operation *user) {
            Operation *top = body.findAncestorOpInBlock(*user);
            return top && phaseOf.count(top) && phaseOf[top] == Phase::Backward;
          }))
        phaseOf[op] = Phase::Backward;
    }
  }
  return assignData();
}

/// Which arguments are data (one per microbatch), what is averaged.
LogicalResult StepPipeliner::assignData() {
  Operation *ret = body.getTerminator();
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (func.getArgAttr(i, DistDialect::kParamAttrName) ||
        func.getArgAttr(i, DistDialect::kStateAttrName) ||
        func.getArgAttr(i, DistDialect::kLossScaleAttrName))
      continue;
    if (llvm::any_of(arg.getUsers(), [&](Operation *user) {
          Operation *top = body.findAncestorOpInBlock(*user);
          return top && phaseOf.count(top) && phaseOf[top] != Phase::Update;
        }))
      perMicrobatch.insert(i);
  }
  auto perStep = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (auto arg = dyn_cast<BlockArgument>(v))
      return perMicrobatch.contains(arg.getArgNumber());
    return def && phaseOf.count(def) && phaseOf[def] != Phase::Update;
  };
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    if (isa<BlockArgument>(v) && perStep(v))
      return func.emitOpError("returns data argument #")
             << cast<BlockArgument>(v).getArgNumber() << " (result #" << i
             << "), which the pipeline splits into "
             << "microbatches";
    if (!perStep(v))
      continue;
    if (!func.getResultAttr(i, DistDialect::kLossAttrName) &&
        !func.getResultAttr(i, DistDialect::kGradAttrName))
      return func.emitOpError("result #")
             << i << " differs by microbatch but is neither the loss nor a "
             << "gradient; a pipelined step returns their means over the "
             << "microbatches and what its updates compute";
    averaged.insert(v);
  }
  for (Operation *op : ops)
    if (phaseOf[op] == Phase::Update)
      for (Value v : usedValues(op))
        if (perStep(v)) {
          if (isa<BlockArgument>(v))
            return op->emitOpError("in the update reads a data argument");
          Operation *def = v.getDefiningOp();
          if (processOf(def) != processOf(op))
            return op->emitOpError("in the update of stage ")
                   << processOf(op) << " reads a value of stage "
                   << processOf(def) << "; put an update on its gradient's "
                   << "stage";
          averaged.insert(v);
        }
  for (Value v : averaged) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !isa<FloatType>(type.getElementType()))
      return (v.getDefiningOp() ? v.getDefiningOp() : func.getOperation())
                 ->emitOpError("makes a value averaged over microbatches ")
             << "(a result, or what an update reads) of type " << v.getType()
             << "; only float tensors are averaged";
  }
  return success();
}

LogicalResult StepPipeliner::planMessages() {
  for (Operation *op : ops) {
    if (phaseOf[op] == Phase::Update)
      continue;
    int64_t from = processOf(op);
    for (Value v : op->getResults()) {
      // The first action of each other stage that reads it.
      llvm::MapVector<int64_t, SmallVector<ActionKey>> readers;
      for (Operation *user : v.getUsers()) {
        Operation *top = body.findAncestorOpInBlock(*user);
        if (!top || !phaseOf.count(top))
          continue;
        int64_t to = processOf(top);
        if (to == from)
          continue;
        if (phaseOf[top] == Phase::Update)
          return top->emitOpError("in the update of stage ")
                 << to << " reads a value of stage " << from;
        readers[to].push_back(actionOf(top));
      }
      for (auto &[to, keys] : readers)
        for (int64_t m = 0; m < M; ++m) {
          size_t first = SIZE_MAX;
          for (ActionKey key : keys)
            first = std::min(first, positionOf(to, key, m));
          messages.push_back(
              {v, m, from, to, -1, positionOf(from, actionOf(op), m), first});
        }
    }
  }
  // Tags in the order the senders send, one per message.
  for (auto [i, message] : llvm::enumerate(messages))
    message.tag = i;
  llvm::sort(messages, [](const Message &a, const Message &b) {
    return std::tie(a.from, a.sentAfter, a.tag) <
           std::tie(b.from, b.sentAfter, b.tag);
  });
  if (static_cast<int64_t>(messages.size()) > kMaxTag + 1)
    return func.emitOpError("needs ")
           << messages.size() << " transfers, more than the " << kMaxTag + 1
           << " tags MPI guarantees";
  for (auto [i, message] : llvm::enumerate(messages))
    message.tag = i;
  return success();
}

Value StepPipeliner::lookup(OpBuilder &b, Value value, int64_t microbatch) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    unsigned i = arg.getArgNumber();
    unsigned first = firstNewArg.lookup(i);
    return newArgs[first + (perMicrobatch.contains(i) ? microbatch : 0)];
  }
  if (Value mapped =
          microbatch >= 0 ? maps[microbatch].lookupOrNull(value) : Value())
    return mapped;
  if (Value mapped = shared.lookupOrNull(value))
    return mapped;
  Operation *def = value.getDefiningOp();
  assert(def && isFree(def) && "a value of an action that has not run");
  OpBuilder atStart = OpBuilder::atBlockBegin(stageBlock);
  Operation *clone = atStart.clone(*def);
  shared.map(def->getResults(), clone->getResults());
  return shared.lookup(value);
}

void StepPipeliner::emitAction(OpBuilder &b, int64_t stage, size_t index) {
  const PipelineAction &action = schedule->order[stage][index].action;
  int64_t m = action.microbatch;
  Location loc = rewriteLoc(func.getLoc(), kRewriteTag);
  auto post = [&](size_t at) {
    for (const Message &msg : messages)
      if (msg.to == stage && msg.readAt == at) {
        auto type = cast<RankedTensorType>(msg.value.getType());
        Value f = RecvOp::create(b, loc, FutureType::get(b.getContext(), type),
                                 msg.from, mesh, axis, msg.tag);
        maps[msg.microbatch].map(msg.value, f);
      }
  };
  // Receives are posted `lookahead` actions ahead, so that the sender's
  // blocking send returns while this stage computes.
  size_t actions = schedule->order[stage].size();
  if (index == 0)
    for (size_t at = 0; at < std::min(lookahead, actions); ++at)
      post(at);
  if (lookahead < actions && index + lookahead < actions)
    post(index + lookahead);
  for (const Message &msg : messages)
    if (msg.to == stage && msg.readAt == index) {
      Value f = maps[m].lookup(msg.value);
      maps[m].map(msg.value,
                  WaitOp::create(b, loc, msg.value.getType(), f).getResult());
    }
  for (Operation *op : ops) {
    if (phaseOf[op] == Phase::Update || processOf(op) != stage ||
        chunkOf(op) != action.chunk || actionOf(op).kind != action.kind)
      continue;
    for (Value v : usedValues(op))
      if (!maps[m].contains(v))
        maps[m].map(v, lookup(b, v, m));
    Operation *clone = b.clone(*op, maps[m]);
    clone->removeAttr(DistDialect::kStageAttrName);
    for (Value r : op->getResults()) {
      if (!averaged.contains(r))
        continue;
      Value now = maps[m].lookup(r);
      Value &sum = sums[r];
      sum = sum ? arith::AddFOp::create(b, loc, sum, now).getResult() : now;
    }
  }
  for (const Message &msg : messages)
    if (msg.from == stage && msg.sentAfter == index)
      SendOp::create(b, loc, maps[m].lookup(msg.value), msg.to, mesh, axis,
                     msg.tag);
}

void StepPipeliner::emitStage(int64_t stage, Block &block,
                              TypeRange plainTypes) {
  stageBlock = &block;
  maps.assign(M, IRMapping());
  shared.clear();
  sums.clear();
  OpBuilder b = OpBuilder::atBlockEnd(&block);
  Location loc = rewriteLoc(func.getLoc(), kRewriteTag);
  for (size_t i = 0, e = schedule->order[stage].size(); i < e; ++i)
    emitAction(b, stage, i);
  // The microbatches' mean, which the update reads and the step returns.
  IRMapping update;
  for (Value v : averaged) {
    Value sum = sums.lookup(v);
    if (!sum)
      continue;
    Value mean = M > 1 ? ScaleOp::create(b, loc, sum.getType(), sum,
                                         b.getF64FloatAttr(1.0 / M))
                             .getResult()
                       : sum;
    update.map(v, mean);
  }
  for (Operation *op : ops) {
    if (phaseOf[op] != Phase::Update || processOf(op) != stage)
      continue;
    for (Value v : usedValues(op))
      if (!update.contains(v))
        update.map(v, lookup(b, v, -1));
    b.clone(*op, update)->removeAttr(DistDialect::kStageAttrName);
  }
  SmallVector<Value> yields;
  Operation *ret = body.getTerminator();
  for (auto [v, plain] : llvm::zip_equal(ret->getOperands(), plainTypes)) {
    Operation *def = v.getDefiningOp();
    int64_t owner = def && stageOf.count(def) ? processOf(def) : 0;
    // What a case yields is a new tensor, never a constant or an argument:
    // the broadcast after the switch is lowered in place, and One-Shot
    // Bufferize (MLIR 22) does not see that a switch result aliases a
    // read-only global one of its cases yields.
    auto tensorType = dyn_cast<RankedTensorType>(plain);
    Value out;
    if (owner != stage) {
      out =
          tensorType
              ? linalg::FillOp::create(b, loc,
                                       ValueRange{arith::ConstantOp::create(
                                           b, loc,
                                           cast<TypedAttr>(b.getZeroAttr(
                                               tensorType.getElementType())))},
                                       ValueRange{tensor::EmptyOp::create(
                                           b, loc, tensorType.getShape(),
                                           tensorType.getElementType())})
                    .getResult(0)
              : arith::ConstantOp::create(b, loc,
                                          cast<TypedAttr>(b.getZeroAttr(plain)))
                    .getResult();
    } else {
      out = update.contains(v) ? update.lookup(v) : lookup(b, v, -1);
      if (out.getType() != plain)
        out = tensor::CastOp::create(b, loc, plain, out);
      Operation *made = out.getDefiningOp();
      if (tensorType && (!made || isa<tensor::CastOp>(made) || isFree(made)))
        out = linalg::CopyOp::create(
                  b, loc, out,
                  tensor::EmptyOp::create(b, loc, tensorType.getShape(),
                                          tensorType.getElementType())
                      .getResult())
                  .getResult(0);
    }
    yields.push_back(out);
  }
  scf::YieldOp::create(b, loc, yields);
}

void StepPipeliner::emit() {
  // The new signature: a data argument becomes one per microbatch.
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
    firstNewArg[i] = argTypes.size();
    int64_t copies = perMicrobatch.contains(i) ? M : 1;
    for (int64_t m = 0; m < copies; ++m) {
      argTypes.push_back(arg.getType());
      argAttrs.push_back(func.getArgAttrDict(i));
    }
  }
  // Built after the old body, which it replaces at the end.
  Block *newBody = new Block();
  func.getBody().push_back(newBody);
  for (Type t : argTypes)
    newBody->addArgument(t, func.getLoc());
  newArgs.assign(newBody->getArguments().begin(),
                 newBody->getArguments().end());

  Operation *ret = body.getTerminator();
  SmallVector<Type> plainTypes;
  for (Type t : ret->getOperandTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    plainTypes.push_back(tensor ? RankedTensorType::get(tensor.getShape(),
                                                        tensor.getElementType())
                                : t);
  }
  Location loc = rewriteLoc(func.getLoc(), kRewriteTag);
  OpBuilder b = OpBuilder::atBlockEnd(newBody);
  Value coord = ProcessCoordOp::create(b, loc, mesh, axis);
  SmallVector<int64_t> cases = llvm::to_vector(llvm::seq<int64_t>(0, P - 1));
  auto sw = scf::IndexSwitchOp::create(b, loc, plainTypes, coord, cases,
                                       cases.size());
  // Cases 0 .. P-2 are their stages, the default the last stage.
  for (int64_t stage = 0; stage < P; ++stage) {
    Region &region =
        stage + 1 < P ? sw.getCaseRegions()[stage] : sw.getDefaultRegion();
    Block &block = region.emplaceBlock();
    emitStage(stage, block, plainTypes);
  }
  // Every process returns every result: each from the stage that made it.
  SmallVector<Value> results;
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    Operation *def = v.getDefiningOp();
    int64_t owner = def && stageOf.count(def) ? processOf(def) : 0;
    Value r = sw.getResult(i);
    if (auto tensor = dyn_cast<RankedTensorType>(r.getType())) {
      if (P > 1)
        r = BroadcastOp::create(b, loc, tensor, r, mesh,
                                b.getDenseI64ArrayAttr({axis}), owner,
                                StreamKindAttr())
                .getResult();
      if (r.getType() != v.getType())
        r = tensor::CastOp::create(b, loc, v.getType(), r);
    }
    results.push_back(r);
  }
  func::ReturnOp::create(b, ret->getLoc(), results);

  SmallVector<Type> resultTypes(func.getResultTypes());
  body.dropAllDefinedValueUses();
  body.erase();
  func.setFunctionType(
      FunctionType::get(func.getContext(), argTypes, resultTypes));
  func.setAllArgAttrs(argAttrs);
}

PipelineCosts StepPipeliner::estimateCosts() {
  // The mean time of a virtual stage's phases, by the cost model (which
  // prices products); unit costs where it prices nothing.
  CostModel model;
  double forward = 0, backward = 0, weight = 0;
  for (Operation *op : ops) {
    double t = model.computeTime(op).value_or(0);
    switch (phaseOf.lookup(op)) {
    case Phase::Forward:
      forward += t;
      break;
    case Phase::Backward:
      backward += t;
      break;
    case Phase::Weight:
      weight += t;
      break;
    case Phase::Update:
      break;
    }
  }
  PipelineCosts costs;
  priced = forward > 0 && backward + weight > 0;
  if (priced) {
    // Per chunk: the generator divides by the chunks itself.
    costs.forward = forward / P;
    costs.backward = backward / P;
    costs.weight = weight / P;
  } else if (kind == PipelineScheduleKind::ZeroBubbleH1) {
    costs.backward = costs.weight = 1;
  }
  return costs;
}

SmallVector<int64_t> StepPipeliner::heldBytes() const {
  // What a stage holds from a microbatch's forward to its backward: the
  // values its forward makes or receives that its backward reads.
  SmallVector<int64_t> bytes(P, 0);
  SmallVector<DenseSet<Value>> counted(P);
  for (Operation *op : ops) {
    Phase phase = phaseOf.lookup(op);
    if (phase != Phase::Backward && phase != Phase::Weight)
      continue;
    int64_t p = processOf(op);
    for (Value v : usedValues(op)) {
      Operation *def = v.getDefiningOp();
      if (!def || !phaseOf.count(def) || phaseOf.lookup(def) != Phase::Forward)
        continue;
      bool here = processOf(def) == p ||
                  llvm::any_of(v.getUsers(), [&](Operation *user) {
                    Operation *top = body.findAncestorOpInBlock(*user);
                    return top && phaseOf.count(top) &&
                           phaseOf.lookup(top) == Phase::Forward &&
                           processOf(top) == p;
                  });
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!here || !type || !counted[p].insert(v).second)
        continue;
      bytes[p] += CostModel::tensorBytes(type).value_or(0);
    }
  }
  // Per microbatch-chunk.
  for (int64_t &b : bytes)
    b /= V;
  return bytes;
}

void StepPipeliner::report() {
  InFlightDiagnostic remark = func.emitRemark();
  remark << stringifyPipelineScheduleKind(kind) << " on " << P << " stages, "
         << M << " microbatches"
         << (V > 1 ? ", " + std::to_string(V) + " chunks" : "") << ": "
         << messages.size() << " transfers, bubble "
         << llvm::formatv("{0:F4}", schedule->bubbleOverCompute())
         << " of the compute ("
         << llvm::formatv("{0:F4}", schedule->bubbleOverMakespan())
         << " of the step), step ";
  if (priced)
    remark << llvm::formatv("{0:E3}", schedule->makespan * 1e6)
           << " us of compute by the cost model (transfers not priced)";
  else
    remark << llvm::formatv("{0:F1}", schedule->makespan)
           << " forwards (the cost model prices none of its ops)";
  SmallVector<int64_t> bytes = heldBytes();
  for (int64_t p = 0; p < P; ++p)
    remark << "\nstage " << p << ": at most " << schedule->peakActivations[p]
           << " microbatch" << (V > 1 ? "-chunks" : "es") << " held, "
           << bytes[p] << " bytes each, peak "
           << bytes[p] * schedule->peakActivations[p] << " bytes";
  remark << "\n" << schedule->table();
}

/// The estimated schedule in the run trace format (python/dist/run/
/// trace.py): a process per stage, an interval per action, in
/// microseconds of the estimate; drawn by the one trace drawer.
static std::string scheduleTrace(const PipelineSchedule &schedule,
                                 StringRef title) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os);
  json.object([&] {
    json.attribute("dist-trace", 1);
    json.attribute("displayTimeUnit", "ms");
    json.attribute("title", title);
    json.attributeArray("traceEvents", [&] {
      for (size_t stage = 0; stage < schedule.order.size(); ++stage) {
        json.object([&] {
          json.attribute("name", "process_name");
          json.attribute("ph", "M");
          json.attribute("pid", int64_t(stage));
          json.attributeObject("args", [&] {
            json.attribute("name", "stage " + std::to_string(stage));
          });
        });
        json.object([&] {
          json.attribute("name", "thread_name");
          json.attribute("ph", "M");
          json.attribute("pid", int64_t(stage));
          json.attribute("tid", 0);
          json.attributeObject("args",
                               [&] { json.attribute("name", "actions"); });
        });
        for (const TimedAction &t : schedule.order[stage])
          json.object([&] {
            std::string name =
                (t.action.letter() + Twine(t.action.microbatch)).str();
            if (schedule.chunks > 1)
              name += "." + std::to_string(t.action.chunk);
            json.attribute("name", name);
            json.attribute("cat", "compute");
            json.attribute("ph", "X");
            json.attribute("pid", int64_t(stage));
            json.attribute("tid", 0);
            json.attribute("ts", t.start * 1e6);
            json.attribute("dur", (t.end - t.start) * 1e6);
          });
      }
    });
  });
  return text;
}

LogicalResult StepPipeliner::writeSvg(StringRef path) {
  std::string title =
      (stringifyPipelineScheduleKind(kind) + " on " + Twine(P) + " stages, " +
       Twine(M) + " microbatches: the estimated schedule")
          .str();
  llvm::Expected<llvm::json::Value> trace =
      llvm::json::parse(scheduleTrace(*schedule, title));
  if (!trace)
    return func.emitOpError("cannot draw the schedule: ")
           << llvm::toString(trace.takeError());
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &error);
  if (!file)
    return func.emitOpError("cannot write the schedule's SVG: ") << error;
  if (llvm::Error e = renderTraceSvg(*trace, file->os()))
    return func.emitOpError("cannot draw the schedule: ")
           << llvm::toString(std::move(e));
  file->keep();
  return success();
}

LogicalResult StepPipeliner::run() {
  if (kind == PipelineScheduleKind::Interleaved ||
      kind == PipelineScheduleKind::ZeroBubbleH1)
    lookahead = SIZE_MAX;
  if (failed(assignStages()))
    return failure();
  if (kind == PipelineScheduleKind::ZeroBubbleH1)
    splitWeightProducts();
  if (failed(assignPhases()))
    return failure();
  std::string error;
  schedule = buildPipelineSchedule(kind, P, M, V, estimateCosts(), error);
  if (!schedule)
    return func.emitOpError("cannot be pipelined: ") << error;
  if (failed(planMessages()))
    return failure();
  if (remarks)
    report();
  if (!svgFile.empty() && failed(writeSvg(svgFile)))
    return failure();
  emit();
  return success();
}

namespace {
struct DistPipelinePass
    : public dist::impl::DistPipelineBase<DistPipelinePass> {
  using DistPipelineBase::DistPipelineBase;

  /// The mesh that has `axis` (a name or a number) among those the
  /// function's types and coordinates use.
  FailureOr<std::pair<MeshAttr, int64_t>> findAxis(func::FuncOp func) {
    llvm::SetVector<MeshAttr> meshes;
    auto note = [&](Type t) {
      if (TensorDistAttr dist = getTensorDist(t))
        meshes.insert(dist.getMesh());
    };
    func.walk([&](Operation *op) {
      for (Type t : op->getOperandTypes())
        note(t);
      for (Type t : op->getResultTypes())
        note(t);
      if (auto coord = dyn_cast<ProcessCoordOp>(op))
        meshes.insert(coord.getMesh());
    });
    for (Type t : func.getArgumentTypes())
      note(t);
    SmallVector<std::pair<MeshAttr, int64_t>> found;
    int64_t index;
    bool numeric = !llvm::StringRef(axis).getAsInteger(10, index);
    for (MeshAttr mesh : meshes) {
      if (numeric) {
        if (index >= 0 && index < mesh.getRank())
          found.push_back({mesh, index});
        continue;
      }
      for (auto [i, name] : llvm::enumerate(mesh.getNames()))
        if (name == axis)
          found.push_back({mesh, static_cast<int64_t>(i)});
    }
    if (found.size() == 1)
      return found.front();
    func.emitOpError("needs one mesh with the pipeline axis '")
        << axis << "' among those its types use; found " << found.size();
    return failure();
  }

  void runOnOperation() override {
    std::optional<PipelineScheduleKind> kind =
        parsePipelineScheduleKind(schedule);
    if (!kind) {
      getOperation().emitError("--dist-pipeline: unknown schedule '")
          << schedule << "'; expected gpipe, 1f1b, interleaved or zb-h1";
      return signalPassFailure();
    }
    if (microbatches < 1 || chunks < 1 || microbatches > 4096 ||
        chunks > 4096) {
      getOperation().emitError("--dist-pipeline: microbatches and chunks "
                               "must be between 1 and 4096");
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> steps;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (llvm::any_of(func.getBody().getOps(), [](Operation &op) {
            return op.hasAttr(DistDialect::kStageAttrName);
          }))
        steps.push_back(func);
    }
    for (func::FuncOp func : steps) {
      if (!func.getBody().hasOneBlock()) {
        func.emitOpError("has several blocks; --dist-pipeline splits a "
                         "step of one block");
        return signalPassFailure();
      }
      if (func->hasAttr(DistDialect::kCompleteAttrName)) {
        func.emitOpError("is marked '")
            << DistDialect::kCompleteAttrName
            << "'; complete it before --dist-pipeline";
        return signalPassFailure();
      }
      if (std::optional<SymbolTable::UseRange> uses =
              SymbolTable::getSymbolUses(func, getOperation());
          uses && !uses->empty()) {
        uses->begin()->getUser()->emitOpError("calls @")
            << func.getName() << ", whose signature --dist-pipeline changes";
        return signalPassFailure();
      }
      FailureOr<std::pair<MeshAttr, int64_t>> found = findAxis(func);
      if (failed(found))
        return signalPassFailure();
      StepPipeliner pipeliner(func, found->first, found->second, *kind,
                              microbatches, chunks, remarks, svgFile);
      if (failed(pipeliner.run()))
        return signalPassFailure();
      // What the pass wrote must pass the check it promises.
      if (failed(verifyPipelineTransfers(func))) {
        func.emitOpError("got a schedule that does not verify; this is a "
                         "bug in --dist-pipeline");
        return signalPassFailure();
      }
    }
  }
};
} // namespace
