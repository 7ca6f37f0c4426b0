//===- Complete.cpp - infer the distributions a program leaves out --------===//
//
// Implements --dist-complete. Paddle's Completer and upstream's
// sharding-propagation sweep a program once or twice and replicate what they
// cannot decide; Shardy propagates factor by factor but replicates ops with
// no rule. Here the rules the checker uses (DistRules.h) are the transfer
// functions of one worklist that runs to a fixpoint, written encodings are
// never changed, and a disagreement becomes an explicit dist.reshard with a
// remark instead of a silent replication.
//
// Types in dist are local: a value's shape is what one process holds. A
// value completion decides keeps its written shape and gets an encoding;
// only a reshard, which changes how the global tensor is held, computes a
// new local shape (from the global one).
//
//===----------------------------------------------------------------------===//

#include "dist/Analysis/ControlFlowEdges.h"
#include "dist/Analysis/ReshardPlan.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/DistRules.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"
#include "dist/Dialect/Dist/Transforms/CostModelPass.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <deque>

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTCOMPLETE
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

static bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

static TensorDistAttr distOf(Value v) { return getTensorDist(v.getType()); }

/// "replicated" or the encoding, as remarks name a distribution.
static std::string describe(TensorDistAttr dist) {
  if (!dist || dist.isReplicated())
    return "replicated";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(dist.getDimsMapping(), os);
  os << "]";
  if (dist.isPartial()) {
    os << " partial [";
    llvm::interleaveComma(dist.getPartials(), os, [&](auto p) {
      os << p.first << " : " << stringifyReductionKind(p.second);
    });
    os << "]";
  }
  return s;
}

/// Where a value's distribution came from, for the remark at a conflict:
/// "'dist.matmul' at loc(...) computes [-1, 0]".
static std::string describeOrigin(Value v, Operation *origin) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (origin)
    os << "'" << origin->getName() << "' at " << origin->getLoc()
       << " computes ";
  else if (auto arg = dyn_cast<BlockArgument>(v))
    os << "block argument #" << arg.getArgNumber() << " is declared ";
  else
    os << "result #" << cast<OpResult>(v).getResultNumber() << " of '"
       << v.getDefiningOp()->getName() << "' is declared ";
  os << describe(distOf(v));
  return s;
}

static std::string describePin(Location loc, TensorDistAttr dist) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "'dist.constraint' at " << loc << " pins " << describe(dist);
  return s;
}

/// The one mesh of `op`'s encoded tensors, or null (none, or several).
static MeshAttr meshOf(Operation *op) {
  std::string ignored;
  llvm::raw_string_ostream os(ignored);
  FailureOr<MeshAttr> mesh = rules::commonMesh(op, os);
  return succeeded(mesh) ? *mesh : MeshAttr();
}

/// Unencoded or the replicated encoding written out.
static bool isReplicated(TensorDistAttr dist) {
  return !dist || dist.isReplicated();
}

static bool inMarkedFunction(Operation *op) {
  auto f = op->getParentOfType<FunctionOpInterface>();
  return f && f->hasAttr(DistDialect::kCompleteAttrName);
}

/// Gives `v` the type `type`; a constant's value carries its type.
static void retype(Value v, Type type) {
  if (v.getType() == type)
    return;
  v.setType(type);
  if (auto constant = v.getDefiningOp<arith::ConstantOp>())
    if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
      constant.setValueAttr(dense.reshape(cast<ShapedType>(type)));
}

namespace {
/// Along a forwarding edge (ControlFlowEdges.h) two values must have one
/// type.
using Edge = ForwardingEdge;

class Completion {
public:
  Completion(bool replicateUnknownOps, bool remarks, const CostModel &model)
      : replicateUnknownOps(replicateUnknownOps), remarks(remarks),
        model(model) {}

  LogicalResult run(ArrayRef<FunctionOpInterface> functions);

  unsigned numCompleted = 0, numReshards = 0;

private:
  bool isUndecided(Value v) const { return undecided.contains(v); }
  bool isKnown(Value v) const { return !isTensor(v) || !isUndecided(v); }

  void enqueue(Operation *op) {
    if (queued.insert(op).second)
      worklist.push_back(op);
  }
  void enqueueUsers(Value v);
  void decide(Value v, Type type, Operation *origin);
  /// Where `v`'s distribution came from, for remarks.
  std::string provenance(Value v) const {
    if (auto it = pins.find(v); it != pins.end())
      return describePin(it->second, distOf(v));
    return describeOrigin(v, origins.lookup(v));
  }
  LogicalResult consumeConstraint(ConstraintOp constraint, bool marked);
  LogicalResult visit(Operation *op);
  void collectEdges(Operation *op, SmallVectorImpl<Edge> &edges);
  LogicalResult visitEdge(const Edge &edge);
  LogicalResult visitRuleOp(Operation *op, DistributionRuleInterface rule);
  LogicalResult visitOpWithoutRule(Operation *op);
  Operation *hoistCompletion(OpOperand &use);
  /// Completes a partial sum with several uses where it is made.
  LogicalResult completeFanOut(Operation *op, OpResult result);
  /// Takes back reshards inserted on trial: each use gets its old value.
  void undoReshards(ArrayRef<std::pair<OpOperand *, Value>> undo) {
    for (auto [use, old] : undo) {
      Operation *r = use->get().getDefiningOp();
      use->set(old);
      placed.erase(r);
      r->erase();
      --numReshards;
    }
  }
  LogicalResult repairInits(linalg::LinalgOp op, DistributionRuleInterface rule,
                            FailureOr<SmallVector<rules::Dist>> &inferred);
  bool reshardOperandsInstead(Operation *op, DistributionRuleInterface rule,
                              ArrayRef<rules::Dist> inferred,
                              std::string &pricedNot);
  /// The operands' candidate types for reshardOperandsInstead.
  struct OperandOptions {
    /// Each operand as it was before this op's repairs.
    SmallVector<Value> bases;
    /// The types each operand may take: as it is first, then as it was.
    SmallVector<SmallVector<Type, 4>> types;
  };
  OperandOptions operandOptions(Operation *op, MeshAttr mesh,
                                ArrayRef<Value> conflicts,
                                ArrayRef<TensorDistAttr> declared);
  std::optional<std::pair<SmallVector<unsigned>, double>>
  cheapestOperands(Operation *op, DistributionRuleInterface rule,
                   const OperandOptions &options);
  void reshardOperands(Operation *op, const OperandOptions &options,
                       ArrayRef<unsigned> choice, ArrayRef<Value> conflicts,
                       double seconds, double asIs);
  std::optional<double> reshardSeconds(RankedTensorType from,
                                       RankedTensorType to) const;
  LogicalResult visitCallResults(CallOpInterface call);
  bool guess();
  bool guessOperands(Operation *op);
  FailureOr<Value> reshard(OpBuilder &b, Location loc, Value v, Type to);
  FailureOr<Value> reshardUses(OpResult result, Type declared);
  void finish(ArrayRef<FunctionOpInterface> functions);

  SymbolTableCollection symbols;
  bool replicateUnknownOps;
  /// Whether each reshard placed gets a remark that says why.
  bool remarks;
  /// A remark at `op` when remarks are on, else a diagnostic that reports
  /// nothing.
  InFlightDiagnostic remarkAt(Operation *op, const Twine &message) {
    if (!remarks)
      return InFlightDiagnostic();
    return op->emitRemark(message);
  }
  /// Prices the places a partial sum can be completed at, and reshards
  /// before an op against after it.
  const CostModel &model;
  /// Unencoded tensors whose distribution is not decided yet.
  llvm::DenseSet<Value> undecided;
  /// The op whose rule decided a value, for remarks.
  llvm::DenseMap<Value, Operation *> origins;
  /// The values a dist.constraint pinned (where it was): written
  /// encodings, for remarks.
  llvm::DenseMap<Value, Location> pins;
  /// The reshards placed since the current op's visit began, the remarks
  /// of those that repaired its operands, and those taken back (erased:
  /// compared, never read).
  llvm::SmallPtrSet<Operation *, 4> placed;
  SmallVector<std::pair<Operation *, InFlightDiagnostic>> repairRemarks;
  llvm::SmallPtrSet<Operation *, 4> takenBack;
  /// The values completion decided (not written or pinned).
  llvm::DenseSet<Value> completed;
  /// The ops of the completed functions in program order: where guessing
  /// looks, so that it is deterministic.
  SmallVector<Operation *> order;
  /// The call sites of each function, whose results follow its returns.
  llvm::DenseMap<Operation *, SmallVector<CallOpInterface>> callers;
  std::deque<Operation *> worklist;
  llvm::DenseSet<Operation *> queued;
};
} // namespace

void Completion::enqueueUsers(Value v) {
  for (Operation *user : v.getUsers())
    enqueue(user);
  if (auto arg = dyn_cast<BlockArgument>(v))
    enqueue(arg.getOwner()->getParentOp());
  else if (Operation *def = v.getDefiningOp())
    enqueue(def);
}

void Completion::decide(Value v, Type type, Operation *origin) {
  undecided.erase(v);
  ++numCompleted;
  completed.insert(v);
  if (origin)
    origins[v] = origin;
  retype(v, type);
  enqueueUsers(v);
  // What a function returns, its callers' results are.
  Operation *user = nullptr;
  for (Operation *u : v.getUsers())
    if (u->hasTrait<OpTrait::ReturnLike>() &&
        isa<FunctionOpInterface>(u->getParentOp()))
      user = u;
  if (user)
    for (CallOpInterface call : callers.lookup(user->getParentOp()))
      enqueue(call);
}

FailureOr<Value> Completion::reshard(OpBuilder &b, Location loc, Value v,
                                     Type to) {
  auto from = cast<RankedTensorType>(v.getType());
  auto target = cast<RankedTensorType>(to);
  if (!getTensorDist(from) && !getTensorDist(target))
    return v;
  // Local shapes are written: two ends whose global shapes differ hold
  // different tensors, which no redistribution reconciles.
  SmallVector<int64_t> a = mesh::globalShape(from.getShape(), distOf(v));
  SmallVector<int64_t> c =
      mesh::globalShape(target.getShape(), getTensorDist(target));
  if (a != c) {
    InFlightDiagnostic diag =
        mlir::emitError(loc, "completion: cannot reshard ")
        << describe(distOf(v)) << " to " << describe(getTensorDist(target))
        << ": with the local shapes written the global shapes differ, [";
    llvm::interleaveComma(a, diag);
    diag << "] and [";
    llvm::interleaveComma(c, diag);
    diag << "]";
    return failure();
  }
  ++numReshards;
  auto r = ReshardOp::create(b, loc, target, v);
  placed.insert(r);
  return r.getResult();
}

/// Reshards `result` to `declared` right after its op, for every use but
/// the reshard itself: the uses keep the declared distribution while the
/// result takes the one its op computes.
FailureOr<Value> Completion::reshardUses(OpResult result, Type declared) {
  Operation *op = result.getOwner();
  OpBuilder b(op->getContext());
  b.setInsertionPointAfter(op);
  FailureOr<Value> r = reshard(b, op->getLoc(), result, declared);
  if (succeeded(r))
    result.replaceAllUsesExcept(*r, r->getDefiningOp());
  return r;
}

/// `type` with encoding `dist`, unencoded when `dist` is replicated (the
/// local shape, which the ops were verified with, stays).
static RankedTensorType withDist(Type type, TensorDistAttr dist) {
  return withTensorDist(cast<RankedTensorType>(type),
                        dist && !dist.isReplicated() ? dist : nullptr);
}

void Completion::collectEdges(Operation *op, SmallVectorImpl<Edge> &edges) {
  SmallVector<ForwardingEdge> all;
  getForwardingEdges(op, symbols, all);
  for (const ForwardingEdge &edge : all)
    if (isTensor(edge.sink))
      edges.push_back(edge);
}

LogicalResult Completion::visitEdge(const Edge &edge) {
  Value source = edge.use->get();
  if (isUndecided(source))
    return success(); // Guessing may take it from the sink.
  if (isUndecided(edge.sink)) {
    decide(edge.sink, source.getType(), origins.lookup(source));
    return success();
  }
  if (source.getType() == edge.sink.getType())
    return success();
  Operation *user = edge.use->getOwner();
  OpBuilder b(user);
  FailureOr<Value> r = reshard(b, user->getLoc(), source, edge.sink.getType());
  if (failed(r))
    return failure();
  remarkAt(user, "completion: reshard of operand #")
      << edge.use->getOperandNumber() << " from " << describe(distOf(source))
      << " to " << describe(distOf(edge.sink))
      << ", where it goes: " << provenance(source)
      << ", and what it joins there: " << provenance(edge.sink);
  edge.use->set(*r);
  return success();
}

LogicalResult Completion::visitCallResults(CallOpInterface call) {
  FunctionOpInterface callee = getCalleeWithBody(call, symbols);
  if (!callee)
    return success();
  Operation *ret = callee.getFunctionBody().back().getTerminator();
  if (!ret || !ret->hasTrait<OpTrait::ReturnLike>() ||
      ret->getNumOperands() != call->getNumResults())
    return success();
  for (auto [result, returned] :
       llvm::zip(call->getResults(), ret->getOperands())) {
    if (!isTensor(result) || isUndecided(returned))
      continue;
    if (isUndecided(result)) {
      decide(result, returned.getType(), origins.lookup(returned));
      continue;
    }
    if (result.getType() == returned.getType())
      continue;
    // The call's result was declared otherwise: the call returns what the
    // callee does, and a reshard after it gives the declared distribution.
    Type declared = result.getType();
    result.setType(returned.getType());
    if (failed(reshardUses(cast<OpResult>(result), declared)))
      return failure();
    remarkAt(call, "completion: reshard of result #")
        << cast<OpResult>(result).getResultNumber() << " from "
        << describe(distOf(result)) << ", which the callee returns, to "
        << describe(getTensorDist(declared)) << ", as it is declared";
  }
  return success();
}

/// The repair of a rule that fails on partial operands: the ones that are
/// partial, completed by a reshard to the same split without the partial
/// axes.
static bool hasPartialOperand(Operation *op) {
  return llvm::any_of(op->getOperands(), [](Value v) {
    TensorDistAttr d = distOf(v);
    return d && d.isPartial();
  });
}

/// `use` takes a reshard that completes a partial value. When that value
/// comes through ops completion decided that pass the partial sum on (a
/// dropout, a scale: each with one use, computing the complete value from
/// a complete operand), the sum is completed where the tensor is smallest
/// on the way, the earliest on a tie (right after a row-parallel product,
/// as Megatron does), and the ops between take the complete value. Returns
/// the op the reshard now follows, or null when it stays.
Operation *Completion::hoistCompletion(OpOperand &use) {
  auto reshardOp = use.get().getDefiningOp<ReshardOp>();
  if (!reshardOp)
    return nullptr;
  auto completeOf = [](Value v) {
    TensorDistAttr d = distOf(v);
    return withDist(v.getType(), d ? d.dropPartial(d.getPartialAxes()) : d);
  };
  // The chain back from the partial value, latest first.
  SmallVector<Value> chain{reshardOp.getInput()};
  while (true) {
    Value cur = chain.back();
    Operation *def = cur.getDefiningOp();
    auto rule = dyn_cast_or_null<DistributionRuleInterface>(def);
    if (!rule || origins.lookup(cur) != def || !cur.hasOneUse() ||
        def->getNumResults() != 1 || def->getNumRegions())
      break;
    SmallVector<Value> partialOperands;
    for (Value v : def->getOperands())
      if (TensorDistAttr d = distOf(v); d && d.isPartial())
        partialOperands.push_back(v);
    if (partialOperands.size() != 1 ||
        distOf(partialOperands[0]).getPartials() != distOf(cur).getPartials())
      break;
    Value in = partialOperands[0];
    Type saved = in.getType();
    in.setType(completeOf(in));
    std::string ignored;
    llvm::raw_string_ostream os(ignored);
    FailureOr<SmallVector<rules::Dist>> inferred =
        rule.inferResultDistributions(os);
    in.setType(saved);
    auto type = cast<RankedTensorType>(cur.getType());
    TensorDistAttr want = getTensorDist(completeOf(cur));
    if (failed(inferred) ||
        !rules::holds(want, inferred->front(), type.getRank()))
      break;
    chain.push_back(in);
  }
  // The cheapest allreduce by the cost model, the earliest on a tie.
  TensorDistAttr pending = distOf(chain.front());
  int64_t group = mesh::groupSize(pending.getMesh(), pending.getPartialAxes());
  auto cost = [&](Value v) -> std::optional<double> {
    std::optional<int64_t> bytes =
        CostModel::tensorBytes(cast<RankedTensorType>(v.getType()));
    if (!bytes)
      return std::nullopt;
    return model.collectiveTime(RedistributionKind::AllReduce, *bytes, group);
  };
  Value best = chain.front();
  std::optional<double> bestCost = cost(best);
  for (Value v : llvm::drop_begin(chain)) {
    std::optional<double> c = cost(v);
    if (c && (!bestCost || *c <= *bestCost)) {
      best = v;
      bestCost = c;
    }
  }
  if (best == chain.front())
    return nullptr;
  // `best` is completed where its one chain user takes it; the values
  // after it hold the complete sum.
  Value old = chain.front();
  OpOperand *firstUse = nullptr;
  for (OpOperand &u : best.getUses())
    if (llvm::is_contained(chain, u.getOwner()->getResult(0)))
      firstUse = &u;
  if (!firstUse)
    return nullptr;
  for (Value v : chain) {
    if (v == best)
      break;
    v.setType(completeOf(v));
  }
  reshardOp->moveBefore(firstUse->getOwner());
  reshardOp->setOperand(0, best);
  reshardOp.getResult().setType(cast<RankedTensorType>(completeOf(best)));
  firstUse->set(reshardOp.getResult());
  use.set(old);
  return best.getDefiningOp() ? best.getDefiningOp() : reshardOp.getOperation();
}

/// A linalg op that reduces over a split loop into an init that is
/// neither partial nor the reduction's identity (a replicated accumulator)
/// would count the init once per process: the init is resharded to the
/// output loops' split, partial over the split reduction loops (a local
/// make_partial: one process keeps it). The kind is the first of sum, max
/// and min that the rule accepts (it reads the combiner from the region).
LogicalResult
Completion::repairInits(linalg::LinalgOp op, DistributionRuleInterface rule,
                        FailureOr<SmallVector<rules::Dist>> &inferred) {
  std::string ignored;
  llvm::raw_string_ostream os(ignored);
  FailureOr<MeshAttr> mesh = rules::commonMesh(op, os);
  if (failed(mesh) || !*mesh || op.getNumDpsInits() == 0)
    return success();
  // The loops' axes from the inputs.
  SmallVector<int64_t> loopAxis(op.getNumLoops(), -1);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (OpOperand *in : op.getDpsInputOperands()) {
    TensorDistAttr d = distOf(in->get());
    if (!d)
      continue;
    for (auto [dim, e] :
         llvm::enumerate(maps[in->getOperandNumber()].getResults()))
      if (auto loop = dyn_cast<AffineDimExpr>(e))
        if (d.getMeshAxis(dim) >= 0)
          loopAxis[loop.getPosition()] = d.getMeshAxis(dim);
  }
  OpBuilder b(op);
  for (ReductionKind kind :
       {ReductionKind::Sum, ReductionKind::Max, ReductionKind::Min}) {
    SmallVector<std::pair<OpOperand *, Value>> undo;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      AffineMap map = maps[init.getOperandNumber()];
      SmallVector<int64_t> dims;
      llvm::SmallDenseSet<unsigned> output;
      for (AffineExpr e : map.getResults()) {
        auto loop = dyn_cast<AffineDimExpr>(e);
        dims.push_back(loop ? loopAxis[loop.getPosition()] : -1);
        if (loop)
          output.insert(loop.getPosition());
      }
      SmallVector<std::pair<int64_t, ReductionKind>> partial;
      for (auto [loop, axis] : llvm::enumerate(loopAxis))
        if (axis >= 0 && !output.contains(loop))
          partial.push_back({axis, kind});
      llvm::sort(partial, llvm::less_first());
      TensorDistAttr to = TensorDistAttr::get(*mesh, dims, partial);
      if (partial.empty() || to == distOf(init.get()))
        continue;
      FailureOr<Value> r = reshard(b, op.getLoc(), init.get(),
                                   withDist(init.get().getType(), to));
      if (failed(r))
        return failure();
      undo.push_back({&init, init.get()});
      init.set(*r);
    }
    if (undo.empty())
      return success();
    ignored.clear();
    inferred = rule.inferResultDistributions(os);
    if (succeeded(inferred)) {
      for (auto [init, old] : undo)
        repairRemarks.emplace_back(
            init->get().getDefiningOp(),
            remarkAt(op, "completion: reshard of init #")
                << init->getOperandNumber() << " from " << describe(distOf(old))
                << " to " << describe(distOf(init->get()))
                << ": the op reduces over a split loop into it, and "
                << provenance(old));
      return success();
    }
    undoReshards(undo);
  }
  return success();
}

/// Seconds of the plan --dist-lower-reshard would pick from `from` to `to`
/// (two local types of one global tensor); nothing where it finds none
/// (dynamic shapes, an element type without a size, another mesh).
std::optional<double> Completion::reshardSeconds(RankedTensorType from,
                                                 RankedTensorType to) const {
  TensorDistAttr a = getTensorDist(from), c = getTensorDist(to);
  if (!a && !c)
    return 0.0;
  if (!from.hasStaticShape() || !to.hasStaticShape())
    return std::nullopt;
  if (!a)
    a = TensorDistAttr::getReplicated(c.getMesh(), from.getRank());
  if (!c)
    c = TensorDistAttr::getReplicated(a.getMesh(), to.getRank());
  if (a.getMesh() != c.getMesh())
    return std::nullopt;
  std::string whyNot;
  FailureOr<ReshardPlan> plan =
      planReshard(mesh::globalShape(from.getShape(), a), from.getElementType(),
                  a, c, model, whyNot);
  if (failed(plan))
    return std::nullopt;
  return plan->seconds;
}

/// The local type of `v`'s global tensor distributed as `dist`, or nothing
/// when a split dim does not divide. Replicated is unencoded unless
/// `explicitReplicated`.
static std::optional<RankedTensorType>
retyped(Value v, TensorDistAttr dist, bool explicitReplicated = false) {
  auto type = cast<RankedTensorType>(v.getType());
  std::optional<SmallVector<int64_t>> local =
      mesh::localShape(mesh::globalShape(type.getShape(), distOf(v)), dist);
  if (!local)
    return std::nullopt;
  auto shaped = RankedTensorType::get(*local, type.getElementType());
  return explicitReplicated ? withTensorDist(shaped, dist)
                            : withDist(shaped, dist);
}

/// The distributions of a linalg op's operands whose loops take the splits
/// of the results as `declared` (null: that result's loops stay as its
/// rule computes them unsplit) and reduction loops none.
static SmallVector<TensorDistAttr>
linalgOperandsFor(linalg::LinalgOp op, MeshAttr mesh,
                  ArrayRef<TensorDistAttr> declared) {
  SmallVector<int64_t> loopAxis(op.getNumLoops(), -1);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (auto [i, d] : llvm::enumerate(declared)) {
    if (!d || i >= static_cast<size_t>(op.getNumDpsInits()))
      continue;
    AffineMap map = maps[op.getDpsInitOperand(i)->getOperandNumber()];
    for (auto [dim, e] : llvm::enumerate(map.getResults()))
      if (auto loop = dyn_cast<AffineDimExpr>(e))
        if (d.getMeshAxis(dim) >= 0)
          loopAxis[loop.getPosition()] = d.getMeshAxis(dim);
  }
  SmallVector<TensorDistAttr> out;
  for (OpOperand &use : op->getOpOperands()) {
    if (use.getOperandNumber() >= maps.size() || !isTensor(use.get())) {
      out.push_back(nullptr);
      continue;
    }
    SmallVector<int64_t> dims;
    for (AffineExpr e : maps[use.getOperandNumber()].getResults()) {
      auto loop = dyn_cast<AffineDimExpr>(e);
      dims.push_back(loop ? loopAxis[loop.getPosition()] : -1);
    }
    out.push_back(TensorDistAttr::get(mesh, dims));
  }
  return out;
}

/// A result declared otherwise than the op's rule computes from its
/// operands gets its declared distribution after the op (a reshard of the
/// result) or before it (reshards of operands, so that the rule computes
/// it). The operands may each stay, take the distribution of a declared
/// result of their rank, be replicated, or (a linalg op) take the split of
/// their loops in the declared results; the combination the cost model
/// prices cheapest (its reshards and the op's compute, where the model
/// knows it), the first on a tie, is taken when it is cheaper than the
/// reshard after the op. An operand that a repair for this op resharded
/// (`placed`: a partial sum completed, an init made partial) is priced from
/// the value before that repair. Returns whether operands were resharded.
/// The types each operand of `op` may take instead of its own: as it was
/// before this op's repairs, as a conflicting result is declared (`declared`)
/// when the ranks agree, as a linalg op's loops want the declared results,
/// and replicated.
Completion::OperandOptions
Completion::operandOptions(Operation *op, MeshAttr mesh,
                           ArrayRef<Value> conflicts,
                           ArrayRef<TensorDistAttr> declared) {
  OperandOptions options;
  SmallVector<Value> &bases = options.bases;
  for (Value v : op->getOperands()) {
    Value base = v;
    if (Operation *def = v.getDefiningOp();
        def && placed.contains(def) && v.hasOneUse())
      base = cast<ReshardOp>(def).getInput();
    bases.push_back(base);
    options.types.push_back({v.getType()});
    if (base != v)
      options.types.back().push_back(base.getType());
  }
  auto offer = [&](unsigned i, TensorDistAttr d, bool explicitReplicated) {
    Value base = bases[i];
    if (!isTensor(base) || (d && d.getMesh() != mesh))
      return;
    if (std::optional<RankedTensorType> t =
            retyped(base, d, explicitReplicated);
        t && !llvm::is_contained(options.types[i], Type(*t)))
      options.types[i].push_back(*t);
  };
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i) {
    auto type = dyn_cast<RankedTensorType>(bases[i].getType());
    if (!type)
      continue;
    // As written (an init has its result's type), and as completion
    // writes a replicated value.
    for (Value r : conflicts)
      if (cast<RankedTensorType>(r.getType()).getRank() == type.getRank())
        for (bool explicitReplicated : {true, false})
          offer(i, distOf(r), explicitReplicated);
  }
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    for (auto [i, d] :
         llvm::enumerate(linalgOperandsFor(linalgOp, mesh, declared)))
      if (d)
        offer(i, d, false);
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
    offer(i, nullptr, false);
  return options;
}

/// The cheapest choice of operand types among `options` (by index) under
/// which `rule` computes every decided result of `op` as declared, the op
/// verifies and an init has its result's type, and its price (the reshards
/// before the op and its compute); none when no choice but the first does.
std::optional<std::pair<SmallVector<unsigned>, double>>
Completion::cheapestOperands(Operation *op, DistributionRuleInterface rule,
                             const OperandOptions &options) {
  ArrayRef<Value> bases = options.bases;
  SmallVector<Type> current(op->getOperandTypes());
  SmallVector<unsigned> pick(options.types.size(), 0), best;
  std::optional<double> bestSeconds;
  auto next = [&] {
    for (unsigned i = pick.size(); i-- > 0;) {
      if (++pick[i] < options.types[i].size())
        return true;
      pick[i] = 0;
    }
    return false;
  };
  std::string ignored;
  llvm::raw_string_ostream os(ignored);
  // The trial types are not the program's: the op verifier's complaints
  // about them are not reported.
  ScopedDiagnosticHandler quiet(op->getContext(),
                                [](Diagnostic &) { return success(); });
  while (next()) {
    double seconds = 0;
    bool priced = true;
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      Type t = options.types[i][pick[i]];
      if (t != bases[i].getType()) {
        std::optional<double> s =
            reshardSeconds(cast<RankedTensorType>(bases[i].getType()),
                           cast<RankedTensorType>(t));
        priced = priced && s;
        seconds += s.value_or(0.0);
      }
      v.setType(t);
    }
    ignored.clear();
    FailureOr<SmallVector<rules::Dist>> now = rule.inferResultDistributions(os);
    bool accepted = priced && succeeded(now);
    for (auto [i, result] : llvm::enumerate(op->getResults()))
      if (accepted && isTensor(result) && !isUndecided(result))
        accepted =
            rules::holds(distOf(result), (*now)[i],
                         cast<RankedTensorType>(result.getType()).getRank());
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op); accepted && dps)
      for (OpOperand &init : dps.getDpsInitsMutable())
        if (Value result = dps.getTiedOpResult(&init);
            result && !isUndecided(result))
          accepted = accepted && init.get().getType() == result.getType();
    accepted =
        accepted && succeeded(mlir::verify(op, /*verifyRecursively=*/false));
    if (accepted)
      seconds += model.computeTime(op).value_or(0.0);
    for (auto [v, t] : llvm::zip(op->getOperands(), current))
      v.setType(t);
    if (accepted && (!bestSeconds || seconds < *bestSeconds)) {
      bestSeconds = seconds;
      best = pick;
    }
  }
  if (!bestSeconds)
    return std::nullopt;
  return std::pair(std::move(best), *bestSeconds);
}

/// Gives `op`'s operands the types `choice` picks among `options`, taking
/// back the repairs it replaces, with a remark per reshard that says what
/// it costs (`seconds`) against the reshards after the op (`asIs`).
void Completion::reshardOperands(Operation *op, const OperandOptions &options,
                                 ArrayRef<unsigned> choice,
                                 ArrayRef<Value> conflicts, double seconds,
                                 double asIs) {
  ArrayRef<Value> bases = options.bases;
  OpBuilder b(op);
  for (OpOperand &use : op->getOpOperands()) {
    unsigned i = use.getOperandNumber();
    Type t = options.types[i][choice[i]];
    if (t == use.get().getType())
      continue;
    Value old = use.get();
    // A repair this choice replaces is taken back.
    if (bases[i] != old) {
      use.set(bases[i]);
      placed.erase(old.getDefiningOp());
      takenBack.insert(old.getDefiningOp());
      old.getDefiningOp()->erase();
      --numReshards;
    }
    if (t == bases[i].getType())
      continue;
    FailureOr<Value> r = reshard(b, op->getLoc(), bases[i], t);
    if (failed(r))
      continue;
    use.set(*r);
    // Only the replicated encoding written out: nothing to remark on.
    if (isReplicated(distOf(bases[i])) && isReplicated(distOf(*r)))
      continue;
    InFlightDiagnostic remark = remarkAt(op, "completion: reshard of operand #")
                                << i << " from " << describe(distOf(bases[i]))
                                << " to " << describe(distOf(*r)) << " before '"
                                << op->getName() << "', which then computes ";
    llvm::interleaveComma(conflicts, remark, [&](Value c) {
      remark << "result #" << cast<OpResult>(c).getResultNumber() << " as "
             << describe(distOf(c)) << " (" << provenance(c) << ")";
    });
    remark << llvm::formatv(": {0:f3} us by the cost model, against {1:f3} us "
                            "with a reshard of the result after it",
                            seconds * 1e6, asIs * 1e6)
                  .str();
  }
}

bool Completion::reshardOperandsInstead(Operation *op,
                                        DistributionRuleInterface rule,
                                        ArrayRef<rules::Dist> inferred,
                                        std::string &pricedNot) {
  SmallVector<TensorDistAttr> declared(op->getNumResults());
  SmallVector<Value> conflicts;
  double afterSeconds = model.computeTime(op).value_or(0.0);
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type || isUndecided(result) ||
        rules::holds(distOf(result), inferred[i], type.getRank()))
      continue;
    std::optional<double> s =
        reshardSeconds(withDist(type, inferred[i].toAttr()), type);
    if (!s)
      return false;
    afterSeconds += *s;
    declared[i] = distOf(result);
    conflicts.push_back(result);
  }
  if (conflicts.empty())
    return false;
  MeshAttr mesh = meshOf(op);
  if (!mesh)
    return false;
  OperandOptions options = operandOptions(op, mesh, conflicts, declared);
  // The search is over few operands; an op with many options keeps the
  // reshard after it.
  uint64_t combinations = 1;
  for (const auto &o : options.types)
    combinations *= o.size();
  if (combinations > 256)
    return false;
  std::optional<std::pair<SmallVector<unsigned>, double>> best =
      cheapestOperands(op, rule, options);

  // What the repairs chose (the options as they are) is priced as it is.
  double asIs = afterSeconds;
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (options.bases[i] != v)
      asIs += reshardSeconds(cast<RankedTensorType>(options.bases[i].getType()),
                             cast<RankedTensorType>(v.getType()))
                  .value_or(0.0);
  if (best && best->second >= asIs)
    pricedNot = llvm::formatv(" ({0:f3} us by the cost model, against {1:f3} "
                              "us with reshards of operands before it)",
                              asIs * 1e6, best->second * 1e6)
                    .str();
  if (!best || best->second >= asIs)
    return false;
  reshardOperands(op, options, best->first, conflicts, best->second, asIs);
  return true;
}

LogicalResult Completion::visitRuleOp(Operation *op,
                                      DistributionRuleInterface rule) {
  if (!llvm::all_of(op->getOperands(), [&](Value v) { return isKnown(v); }))
    return success();
  placed.clear();
  // A repair's remark is reported once the op's reshards are settled: a
  // repair that reshardOperandsInstead takes back never happened.
  llvm::scope_exit reportRepairs([&] {
    for (auto &[reshardOp, remark] : repairRemarks) {
      if (takenBack.contains(reshardOp))
        remark.abandon();
      else
        remark.report();
    }
    repairRemarks.clear();
    takenBack.clear();
  });
  std::string why;
  llvm::raw_string_ostream os(why);
  FailureOr<SmallVector<rules::Dist>> inferred =
      rule.inferResultDistributions(os);
  if (failed(inferred) && hasPartialOperand(op)) {
    // A nonlinear op of a partial value, or a partial plus a replicated
    // one: the partial operands are summed first.
    std::string first = why;
    SmallVector<std::pair<OpOperand *, Value>> undo;
    OpBuilder b(op);
    for (OpOperand &use : op->getOpOperands()) {
      TensorDistAttr d = distOf(use.get());
      if (!d || !d.isPartial())
        continue;
      FailureOr<Value> r = reshard(
          b, op->getLoc(), use.get(),
          withDist(use.get().getType(), d.dropPartial(d.getPartialAxes())));
      if (failed(r))
        return failure();
      undo.push_back({&use, use.get()});
      use.set(*r);
    }
    why.clear();
    inferred = rule.inferResultDistributions(os);
    if (failed(inferred)) {
      // No better: leave the program as it was for the error.
      undoReshards(undo);
      why = first;
    } else {
      for (auto [use, old] : undo) {
        InFlightDiagnostic remark =
            remarkAt(op, "completion: reshard of operand #")
            << use->getOperandNumber() << " from " << describe(distOf(old))
            << " to " << describe(distOf(use->get())) << ": " << provenance(old)
            << ", and '" << op->getName() << "' needs it complete (" << first
            << ")";
        Operation *placedFor = use->get().getDefiningOp();
        if (Operation *at = hoistCompletion(*use))
          remark << "; completed after '" << at->getName() << "' at "
                 << at->getLoc()
                 << ", where the ops between pass the partial sum on";
        repairRemarks.emplace_back(placedFor, std::move(remark));
      }
    }
  }
  if (failed(inferred))
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      if (failed(repairInits(linalgOp, rule, inferred)))
        return failure();
  if (failed(inferred))
    return op->emitOpError("has no correct distribution: ") << why;
  std::string pricedNot;
  if (reshardOperandsInstead(op, rule, *inferred, pricedNot)) {
    why.clear();
    inferred = rule.inferResultDistributions(os);
    if (failed(inferred))
      return op->emitOpError("has no correct distribution: ") << why;
  }

  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type)
      continue;
    const rules::Dist &computed = (*inferred)[i];
    TensorDistAttr attr = computed.toAttr();
    if (attr && attr.isReplicated())
      attr = nullptr;
    // Ops whose operands and results share one type keep sharing it.
    Type decided = withTensorDist(type, attr);
    if (op->hasTrait<OpTrait::SameOperandsAndResultType>() &&
        op->getNumOperands() &&
        rules::holds(distOf(op->getOperand(0)), computed, type.getRank()))
      decided = op->getOperand(0).getType();
    if (isUndecided(result)) {
      decide(result, decided, op);
      if (failed(completeFanOut(op, cast<OpResult>(result))))
        return failure();
      continue;
    }
    if (rules::holds(distOf(result), computed, type.getRank()))
      continue;
    // Declared (or decided from its uses) otherwise: the op computes what
    // its rule says, in the local shape it was verified with, and a
    // reshard after it gives the rest the declared distribution (of the
    // same global tensor, or reshard says why not).
    Type declared = result.getType();
    std::string declaredWhy = provenance(result);
    result.setType(withDist(declared, attr));
    origins[result] = op;
    if (failed(reshardUses(cast<OpResult>(result), declared)))
      return failure();
    remarkAt(op, "completion: reshard of result #")
        << i << " from " << describe(attr) << ", which the rule of '"
        << op->getName() << "' computes, to "
        << describe(getTensorDist(declared)) << ": " << declaredWhy
        << pricedNot;
  }
  // A destination-style op's result has its init's type: an init decided
  // otherwise (a partial result into a replicated init) is resharded.
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
    OpBuilder b(op);
    for (OpOperand &init : dps.getDpsInitsMutable()) {
      Value result = dps.getTiedOpResult(&init);
      if (!result || !isa<RankedTensorType>(init.get().getType()) ||
          init.get().getType() == result.getType())
        continue;
      FailureOr<Value> r =
          reshard(b, op->getLoc(), init.get(), result.getType());
      if (failed(r))
        return failure();
      // Replicated written out on one side only changes no data.
      TensorDistAttr from = distOf(init.get()), to = distOf(result);
      if ((from && !from.isReplicated()) || (to && !to.isReplicated()))
        remarkAt(op, "completion: reshard of init #")
            << init.getOperandNumber() << " from " << describe(from) << " to "
            << describe(to)
            << ": its result is computed so, and has its init's type";
      init.set(*r);
    }
  }
  return success();
}

/// A partial sum that several ops use is completed right after the op that
/// makes it, once. Left partial, it would flow through each use that passes
/// it on linearly and be completed on every branch: the gradient of a
/// LayerNorm's output, partial after a column-parallel backward, would make
/// its parameters' gradients and its input's gradient partial, three
/// allreduces where Megatron has one, and too late for
/// --dist-matmul-grad-overlap to hide behind the dW matmul. A sum with one
/// use stays partial, so that a later reshard can still be a
/// reduce-scatter or be hoisted (hoistCompletion).
LogicalResult Completion::completeFanOut(Operation *op, OpResult result) {
  TensorDistAttr d = distOf(result);
  if (!d || !d.isPartial() || result.hasOneUse() || result.use_empty() ||
      !inMarkedFunction(op) || llvm::any_of(d.getPartials(), [](auto p) {
        return p.second != ReductionKind::Sum && p.second != ReductionKind::Avg;
      }))
    return success();
  size_t uses = llvm::range_size(result.getUses());
  TensorDistAttr complete = d.dropPartial(d.getPartialAxes());
  if (failed(reshardUses(result, withDist(result.getType(), complete))))
    return failure();
  remarkAt(op, "completion: reshard of result #")
      << result.getResultNumber() << " from " << describe(d) << " to "
      << describe(complete) << " where it is made: its " << uses
      << " uses take the complete sum";
  return success();
}

/// Ops that pass values on or make them from nothing; their edges (or the
/// users of what they make) decide them.
static bool movesOrMakes(Operation *op) {
  return op->hasTrait<OpTrait::ReturnLike>() || isa<BranchOpInterface>(op) ||
         isa<RegionBranchOpInterface, RegionBranchTerminatorOpInterface,
             CallOpInterface>(op) ||
         isa<arith::ConstantOp, tensor::EmptyOp, tensor::SplatOp, tensor::DimOp,
             tensor::RankOp>(op);
}

LogicalResult Completion::visitOpWithoutRule(Operation *op) {
  auto distributed = [](Value v) {
    TensorDistAttr d = distOf(v);
    return d && !d.isReplicated();
  };
  if (!llvm::any_of(op->getOperands(), distributed) &&
      !llvm::any_of(op->getResults(), distributed)) {
    // Nothing distributed reaches it: what it makes is replicated, once
    // what it takes is known.
    if (llvm::all_of(op->getOperands(), [&](Value v) { return isKnown(v); }))
      for (Value r : op->getResults())
        if (isUndecided(r))
          decide(r, r.getType(), op);
    return success();
  }
  if (!replicateUnknownOps)
    return op->emitOpError(
        "has no distribution rule, so completion cannot tell what it "
        "computes on distributed tensors (--dist-complete="
        "\"replicate-unknown-ops=true\" completes its partial operands)");
  // Its types are written for the local shapes it is given: a split
  // operand gathered would not fit them, a partial one completed does.
  for (Value v : op->getOperands())
    if (TensorDistAttr d = distOf(v);
        d && !d.dropPartial(d.getPartialAxes()).isReplicated())
      return op->emitOpError("has no distribution rule and takes a split "
                             "tensor (")
             << describe(d)
             << "): replicating it would change the local shape the op is "
                "written for";
  OpBuilder b(op);
  for (OpOperand &use : op->getOpOperands()) {
    if (!distributed(use.get()))
      continue;
    auto from = cast<RankedTensorType>(use.get().getType());
    FailureOr<Value> r =
        reshard(b, op->getLoc(), use.get(), withDist(from, nullptr));
    if (failed(r))
      return failure();
    remarkAt(op, "completion: '")
        << op->getName() << "' has no distribution rule: operand #"
        << use.getOperandNumber() << " completed from "
        << describe(getTensorDist(from));
    use.set(*r);
  }
  for (Value r : op->getResults())
    if (isUndecided(r))
      decide(r, r.getType(), op);
  return success();
}

/// The dims a split over `axes` lands on: those whose written local size
/// the op shrinks, in order, one per axis; none when they do not match.
static std::optional<SmallVector<int64_t>>
splitDims(RankedTensorType in, RankedTensorType out, ArrayRef<int64_t> axes) {
  if (in.getRank() != out.getRank())
    return std::nullopt;
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (!in.isDynamicDim(d) && !out.isDynamicDim(d) &&
        out.getDimSize(d) < in.getDimSize(d))
      dims.push_back(d);
  if (dims.size() != axes.size())
    return std::nullopt;
  return dims;
}

/// What a synchronous collective in a function being completed makes of
/// its operand's distribution; its written local shapes say where a split
/// lands. None when that cannot be told (the verifier says why once the
/// marker is gone).
static std::optional<TensorDistAttr> collectiveResultDist(Operation *op) {
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!in || !out)
    return std::nullopt;
  // A c_identity keeps its operand's distribution, as a broadcast does.
  auto identity = dyn_cast<CIdentityOp>(op);
  auto redistribution = dyn_cast<RedistributionOpInterface>(op);
  if (!identity && !redistribution)
    return std::nullopt;
  MeshAttr mesh = identity ? identity.getMesh() : redistribution.getMesh();
  ArrayRef<int64_t> axes =
      identity ? identity.getAxes() : redistribution.getAxes();
  RedistributionKind kind = identity ? RedistributionKind::Broadcast
                                     : redistribution.getRedistributionKind();
  TensorDistAttr from = getTensorDist(in);
  if (!from)
    from = TensorDistAttr::getReplicated(mesh, in.getRank());
  if (from.getMesh() != mesh ||
      static_cast<int64_t>(from.getDimsMapping().size()) != in.getRank())
    return std::nullopt;
  SmallVector<int64_t> dims(from.getDimsMapping());
  SmallVector<std::pair<int64_t, ReductionKind>> partial = from.getPartials();
  auto dropPartial = [&] {
    llvm::erase_if(partial,
                   [&](auto p) { return llvm::is_contained(axes, p.first); });
  };
  auto splitOver = [&]() -> bool {
    std::optional<SmallVector<int64_t>> at = splitDims(in, out, axes);
    if (!at)
      return false;
    for (auto [d, axis] : llvm::zip(*at, axes))
      dims[d] = axis;
    return true;
  };
  auto unsplit = [&] {
    for (int64_t &a : dims)
      if (llvm::is_contained(axes, a))
        a = -1;
  };
  bool ok = true;
  switch (kind) {
  case RedistributionKind::AllReduce:
    dropPartial();
    break;
  case RedistributionKind::Broadcast:
    break;
  case RedistributionKind::AllGather:
    unsplit();
    break;
  case RedistributionKind::ReduceScatter:
    dropPartial();
    ok = splitOver();
    break;
  case RedistributionKind::AllToAll:
    unsplit();
    ok = splitOver();
    break;
  case RedistributionKind::AllSlice:
    ok = splitOver();
    break;
  case RedistributionKind::MakePartial:
    for (int64_t axis : axes)
      partial.push_back({axis, *redistribution.getReduction()});
    llvm::sort(partial, llvm::less_first());
    break;
  }
  if (!ok)
    return std::nullopt;
  // One use per axis: a dim's split or a pending reduction.
  llvm::SmallDenseSet<int64_t> used;
  for (int64_t a : dims)
    if (a >= 0 && (a >= mesh.getRank() || !used.insert(a).second))
      return std::nullopt;
  for (int64_t a : llvm::make_first_range(partial))
    if (a < 0 || a >= mesh.getRank() || !used.insert(a).second)
      return std::nullopt;
  return TensorDistAttr::get(mesh, dims, partial);
}

/// What a `dist.reshard` written between two undecided types in a function
/// being completed changes its operand's distribution `from` into: its
/// written local shapes say it. A dim that grows is gathered, pending
/// reductions are completed, and a dim that shrinks by k is split over a
/// mesh axis of size k that is then free (those the reshard freed first, in
/// order). None when no axis fits.
static std::optional<TensorDistAttr> reshardResultDist(RankedTensorType in,
                                                       RankedTensorType out,
                                                       TensorDistAttr from) {
  if (!from || in.getRank() != out.getRank() || !in.hasStaticShape() ||
      !out.hasStaticShape() ||
      static_cast<int64_t>(from.getDimsMapping().size()) != in.getRank())
    return std::nullopt;
  MeshAttr mesh = from.getMesh();
  SmallVector<int64_t> global = mesh::globalShape(in.getShape(), from);
  SmallVector<int64_t> dims(from.getDimsMapping());
  SmallVector<int64_t> freed;
  for (auto [axis, kind] : from.getPartials())
    freed.push_back(axis);
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (out.getDimSize(d) != in.getDimSize(d) && dims[d] >= 0) {
      freed.push_back(dims[d]);
      dims[d] = -1;
    }
  for (int64_t a = 0; a < mesh.getRank(); ++a)
    if (!llvm::is_contained(freed, a) && !llvm::is_contained(dims, a))
      freed.push_back(a);
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (out.getDimSize(d) == in.getDimSize(d) || out.getDimSize(d) == global[d])
      continue;
    auto *axis = llvm::find_if(freed, [&](int64_t a) {
      return out.getDimSize(d) * mesh.getShape()[a] == global[d];
    });
    if (axis == freed.end())
      return std::nullopt;
    dims[d] = *axis;
    freed.erase(axis);
  }
  return TensorDistAttr::get(mesh, dims, {});
}

LogicalResult Completion::visit(Operation *op) {
  SmallVector<Edge> edges;
  collectEdges(op, edges);
  for (const Edge &edge : edges)
    if (failed(visitEdge(edge)))
      return failure();
  if (auto call = dyn_cast<CallOpInterface>(op))
    return visitCallResults(call);
  if (failed(rules::requireRegisteredRule(op)))
    return failure();
  if (auto rule = dyn_cast<DistributionRuleInterface>(op))
    return visitRuleOp(op, rule);
  // A cast keeps the distribution (the check refuses one that changes it).
  if (auto cast = dyn_cast<tensor::CastOp>(op)) {
    auto type = dyn_cast<RankedTensorType>(cast.getType());
    Value source = cast.getSource();
    TensorDistAttr d = distOf(source);
    if (!type || !isKnown(source))
      return success();
    if (isUndecided(cast.getResult())) {
      decide(cast.getResult(),
             withTensorDist(type, d && !d.isReplicated() ? d : nullptr), op);
      return success();
    }
    // A source completion decided otherwise than the cast's written result
    // is resharded to it (a written source that disagrees stays for the
    // check to report).
    TensorDistAttr to = getTensorDist(type);
    if (!d || !to || d == to || !completed.contains(source) ||
        !inMarkedFunction(op))
      return success();
    std::optional<RankedTensorType> target =
        retyped(source, to, /*explicitReplicated=*/true);
    if (!target)
      return cast.emitOpError("completion: the operand, ")
             << describe(d) << ", does not divide as the result's " << to;
    OpBuilder b(op);
    FailureOr<Value> r = reshard(b, op->getLoc(), source, *target);
    if (failed(r))
      return failure();
    remarkAt(op, "completion: reshard of operand #0 from ")
        << describe(d) << " to " << describe(to) << ": " << provenance(source)
        << ", and the cast's result is declared " << describe(to);
    cast.getSourceMutable().set(*r);
    return success();
  }
  // A reshard between undecided types changes what its local shapes say
  // (outside a marked function, an unencoded result is replicated).
  auto r = dyn_cast<ReshardOp>(op);
  if (r && inMarkedFunction(op)) {
    if (!isUndecided(r.getResult()) || !isKnown(r.getInput()))
      return success();
    RankedTensorType in = r.getInput().getType();
    TensorDistAttr from = distOf(r.getInput());
    if (!from)
      return success();
    std::optional<TensorDistAttr> d =
        reshardResultDist(in, r.getResult().getType(), from);
    if (!d)
      return r.emitOpError("completion: no distribution of the operand's "
                           "global tensor, ")
             << describe(from) << ", has the local shape of the result "
             << r.getResult().getType();
    decide(r.getResult(), withTensorDist(r.getResult().getType(), *d), op);
    return success();
  }
  // A collective makes of its operand's distribution what it does.
  if (op->getNumResults() == 1 && isUndecided(op->getResult(0)) &&
      op->getNumOperands() && isKnown(op->getOperand(0)))
    if (std::optional<TensorDistAttr> d = collectiveResultDist(op)) {
      // Collectives keep their operand's encodedness (replicated written
      // out when the operand has an encoding).
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      decide(op->getResult(0),
             distOf(op->getOperand(0)) ? withTensorDist(type, *d)
                                       : withDist(type, *d),
             op);
      return success();
    }
  // The dist ops without a rule (collectives, seeds, waits) check their
  // encodings in their verifiers, unencoded results included: what they
  // declare is what they make.
  if (isa_and_nonnull<DistDialect>(op->getDialect())) {
    for (Value r : op->getResults())
      if (isUndecided(r))
        decide(r, r.getType(), op);
    return success();
  }
  if (movesOrMakes(op) || op->getNumRegions())
    return success();
  return visitOpWithoutRule(op);
}

/// The distributions of a linalg op's undecided operands from its loops:
/// each loop takes the mesh axis a known operand's dim over it is split on.
static SmallVector<TensorDistAttr>
linalgCandidate(linalg::LinalgOp op, MeshAttr mesh,
                const llvm::DenseSet<Value> &undecided) {
  SmallVector<int64_t> loopAxis(op.getNumLoops(), -1);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto loopOf = [](AffineExpr e) -> std::optional<unsigned> {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      return d.getPosition();
    return std::nullopt;
  };
  for (OpOperand &use : op->getOpOperands()) {
    TensorDistAttr d = distOf(use.get());
    if (undecided.contains(use.get()) || !d ||
        use.getOperandNumber() >= maps.size())
      continue;
    AffineMap map = maps[use.getOperandNumber()];
    for (auto [dim, e] : llvm::enumerate(map.getResults()))
      if (std::optional<unsigned> loop = loopOf(e))
        if (d.getMeshAxis(dim) >= 0 && loopAxis[*loop] < 0)
          loopAxis[*loop] = d.getMeshAxis(dim);
  }
  SmallVector<TensorDistAttr> out;
  for (OpOperand &use : op->getOpOperands()) {
    if (!undecided.contains(use.get()) ||
        use.getOperandNumber() >= maps.size()) {
      out.push_back(nullptr);
      continue;
    }
    SmallVector<int64_t> dims;
    for (AffineExpr e : maps[use.getOperandNumber()].getResults()) {
      std::optional<unsigned> loop = loopOf(e);
      dims.push_back(loop ? loopAxis[*loop] : -1);
    }
    out.push_back(TensorDistAttr::get(mesh, dims));
  }
  return out;
}

bool Completion::guessOperands(Operation *op) {
  SmallVector<OpOperand *> open;
  for (OpOperand &use : op->getOpOperands())
    if (isUndecided(use.get()))
      open.push_back(&use);
  if (open.empty())
    return false;
  // Edges: an undecided value passed to a known one takes its type.
  SmallVector<Edge> edges;
  collectEdges(op, edges);
  for (const Edge &edge : edges)
    if (isUndecided(edge.use->get()) && !isUndecided(edge.sink)) {
      decide(edge.use->get(), edge.sink.getType(), nullptr);
      return true;
    }
  auto rule = dyn_cast<DistributionRuleInterface>(op);
  MeshAttr mesh = meshOf(op);
  // Every tensor the op knows is replicated, left unencoded: what it leaves
  // open is replicated too, decided now, in program order, so that a later
  // op cannot pull it elsewhere (a replicated gradient made partial for one
  // use, and then completed for every other).
  auto knownTensor = [&](Value v) { return isTensor(v) && !isUndecided(v); };
  if (rule && !mesh && llvm::none_of(op->getOperands(), distOf) &&
      llvm::none_of(op->getResults(), distOf) &&
      (llvm::any_of(op->getOperands(), knownTensor) ||
       llvm::any_of(op->getResults(), knownTensor))) {
    for (OpOperand *use : open)
      if (isUndecided(use->get()))
        decide(use->get(), use->get().getType(), nullptr);
    return true;
  }
  if (!rule || !mesh)
    return false;
  std::string ignored;
  llvm::raw_string_ostream os(ignored);

  // Candidates, in order: from the loops (linalg), then the split of each
  // known operand and result of the same rank, then replicated.
  SmallVector<SmallVector<TensorDistAttr>> candidates;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    candidates.push_back(linalgCandidate(linalgOp, mesh, undecided));
  SmallVector<Value> known;
  for (Value v : op->getOperands())
    if (!isUndecided(v) && distOf(v))
      known.push_back(v);
  for (Value v : op->getResults())
    if (isTensor(v) && !isUndecided(v) && distOf(v))
      known.push_back(v);
  // Each known value's split, then (an init that holds a partial result,
  // a fill of the sum's zero) its split and partial axes.
  for (bool withPartial : {false, true})
    for (Value k : known) {
      TensorDistAttr d = distOf(k);
      if (withPartial && !d.isPartial())
        continue;
      TensorDistAttr like = withPartial ? d : d.dropPartial(d.getPartialAxes());
      SmallVector<TensorDistAttr> c;
      for (OpOperand &use : op->getOpOperands())
        c.push_back(
            isUndecided(use.get()) &&
                    cast<RankedTensorType>(use.get().getType()).getRank() ==
                        cast<RankedTensorType>(k.getType()).getRank()
                ? like
                : nullptr);
      candidates.push_back(std::move(c));
    }
  candidates.push_back(SmallVector<TensorDistAttr>(op->getNumOperands()));

  // First as the operands are, then with their partial sums completed, as
  // the forward step will (a quotient by a row sum of split columns).
  SmallVector<std::pair<Value, Type>> partials;
  for (Value v : op->getOperands())
    if (TensorDistAttr d = distOf(v); d && d.isPartial() && !isUndecided(v))
      partials.push_back({v, v.getType()});
  for (bool completed : {false, true}) {
    if (completed && partials.empty())
      continue;
    if (completed)
      for (auto [v, type] : partials) {
        TensorDistAttr d = distOf(v).dropPartial(distOf(v).getPartialAxes());
        v.setType(withTensorDist(cast<RankedTensorType>(type),
                                 d.isReplicated() ? nullptr : d));
      }
    auto restorePartials = [&, completed = completed] {
      if (completed)
        for (auto [v, type] : partials)
          v.setType(type);
    };
    bool last = completed || partials.empty();
    for (ArrayRef<TensorDistAttr> c : candidates) {
      SmallVector<Type> saved;
      for (OpOperand *use : open) {
        auto type = cast<RankedTensorType>(use->get().getType());
        saved.push_back(type);
        TensorDistAttr d = c[use->getOperandNumber()];
        use->get().setType(
            withTensorDist(type, d && !d.isReplicated() ? d : nullptr));
      }
      ignored.clear();
      FailureOr<SmallVector<rules::Dist>> inferred =
          rule.inferResultDistributions(os);
      // An undecided init of a destination-style op has its result's type:
      // its result's distribution, partial included, if the rule agrees.
      if (auto dps = dyn_cast<DestinationStyleOpInterface>(op);
          dps && succeeded(inferred)) {
        bool retyped = false;
        for (OpOperand *use : open) {
          if (!dps.isDpsInit(use))
            continue;
          Value result = dps.getTiedOpResult(use);
          TensorDistAttr d =
              (*inferred)[cast<OpResult>(result).getResultNumber()].toAttr();
          if (d && !d.isReplicated() && d != distOf(use->get())) {
            use->get().setType(withTensorDist(
                cast<RankedTensorType>(use->get().getType()), d));
            retyped = true;
          }
        }
        if (retyped) {
          ignored.clear();
          inferred = rule.inferResultDistributions(os);
        }
      }
      bool accepted = succeeded(inferred);
      for (auto [i, result] : llvm::enumerate(op->getResults()))
        if (accepted && isTensor(result) && !isUndecided(result))
          accepted =
              rules::holds(distOf(result), (*inferred)[i],
                           cast<RankedTensorType>(result.getType()).getRank());
      // Restore, then decide for real (decide enqueues the users).
      SmallVector<Type> chosen;
      for (auto [use, type] : llvm::zip(open, saved)) {
        chosen.push_back(use->get().getType());
        use->get().setType(type);
      }
      if (!accepted && (!last || c.data() != candidates.back().data()))
        continue;
      restorePartials();
      for (auto [use, type] : llvm::zip(open, chosen))
        if (isUndecided(use->get()))
          decide(use->get(), type, nullptr);
      return true;
    }
    restorePartials();
  }
  return false;
}

bool Completion::guess() {
  for (Operation *op : order)
    if (guessOperands(op))
      return true;
  // Nothing decides what is left: it is replicated, in program order.
  for (Operation *op : order) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (isUndecided(arg)) {
            decide(arg, arg.getType(), nullptr);
            return true;
          }
    for (Value r : op->getResults())
      if (isUndecided(r)) {
        decide(r, r.getType(), nullptr);
        return true;
      }
  }
  return false;
}

void Completion::finish(ArrayRef<FunctionOpInterface> functions) {
  for (FunctionOpInterface f : functions) {
    Block &entry = f.getFunctionBody().front();
    SmallVector<Type> results(f.getResultTypes());
    for (Block &block : f.getFunctionBody())
      if (Operation *t = block.getTerminator();
          t && t->hasTrait<OpTrait::ReturnLike>() &&
          t->getNumOperands() == results.size())
        results = llvm::to_vector(t->getOperandTypes());
    f.setType(
        FunctionType::get(f->getContext(), entry.getArgumentTypes(), results));
    f->removeAttr(DistDialect::kCompleteAttrName);
  }
}

/// Whether `op` makes an unencoded tensor from nothing distributed: an empty
/// tensor, a constant, a splat, or a fill of one of those.
static bool isFreshTensor(Operation *op) {
  if (op->getNumResults() != 1 || !isTensor(op->getResult(0)) ||
      distOf(op->getResult(0)))
    return false;
  if (isa<tensor::EmptyOp, arith::ConstantOp, tensor::SplatOp>(op))
    return true;
  auto fill = dyn_cast<linalg::FillOp>(op);
  return fill && fill.getOutputs().size() == 1 &&
         fill.getOutputs()[0].getDefiningOp() &&
         isFreshTensor(fill.getOutputs()[0].getDefiningOp());
}

/// Gives every use of a fresh tensor its own copy, so that each consumer
/// decides its distribution: which consumer came first in the program must
/// not matter, and making a tensor costs less than resharding it.
/// The copies are recorded as (original, copy), inits before their fills,
/// so that the copies that come out alike are merged back afterwards.
static void splitFreshTensors(
    FunctionOpInterface f,
    SmallVectorImpl<std::pair<Operation *, Operation *>> &copies) {
  SmallVector<Operation *> fresh;
  f.getFunctionBody().walk([&](Operation *op) {
    if (isFreshTensor(op) && !op->getResult(0).hasOneUse() &&
        !op->getResult(0).use_empty())
      fresh.push_back(op);
  });
  for (Operation *op : fresh) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : op->getResult(0).getUses())
      uses.push_back(&use);
    // Program order is not use-list order: the first use keeps the original.
    for (OpOperand *use : llvm::drop_begin(uses)) {
      OpBuilder b(use->getOwner());
      // A fill is cloned with its own init.
      IRMapping map;
      if (auto fill = dyn_cast<linalg::FillOp>(op)) {
        Operation *init = fill.getOutputs()[0].getDefiningOp();
        Operation *initCopy = b.clone(*init);
        copies.push_back({init, initCopy});
        map.map(init->getResult(0), initCopy->getResult(0));
      }
      Operation *copy = b.clone(*op, map);
      copies.push_back({op, copy});
      use->set(copy->getResult(0));
    }
  }
}

/// A constraint is a written encoding of its operand: an undecided operand
/// (in a marked function) takes it, one decided otherwise (an argument, a
/// written encoding, another constraint) is resharded to it. Either way the
/// constraint's users then take the operand.
LogicalResult Completion::consumeConstraint(ConstraintOp constraint,
                                            bool marked) {
  Value in = constraint.getInput();
  Type pinned = constraint.getResult().getType();
  bool undecidedInput =
      marked && !distOf(in) &&
      !(isa<BlockArgument>(in) &&
        cast<BlockArgument>(in).getOwner()->isEntryBlock() &&
        isa<FunctionOpInterface>(
            cast<BlockArgument>(in).getOwner()->getParentOp()));
  Value out = in;
  if (undecidedInput) {
    retype(in, pinned);
    pins.try_emplace(in, constraint.getLoc());
  } else if (in.getType() != pinned) {
    OpBuilder b(constraint);
    FailureOr<Value> r = reshard(b, constraint.getLoc(), in, pinned);
    if (failed(r))
      return failure();
    out = *r;
    if (!isReplicated(distOf(in)) || !isReplicated(distOf(out)))
      remarkAt(constraint, "completion: reshard of operand #0 from ")
          << describe(distOf(in)) << " to " << describe(distOf(out)) << ": "
          << describePin(constraint.getLoc(), distOf(out)) << ", and "
          << provenance(in);
  }
  constraint.getResult().replaceAllUsesWith(out);
  constraint->erase();
  return success();
}

LogicalResult Completion::run(ArrayRef<FunctionOpInterface> functions) {
  SmallVector<std::pair<Operation *, Operation *>> copies;
  for (FunctionOpInterface f : functions)
    splitFreshTensors(f, copies);
  for (FunctionOpInterface f : functions) {
    SmallVector<ConstraintOp> constraints;
    f.getFunctionBody().walk([&](ConstraintOp c) { constraints.push_back(c); });
    for (ConstraintOp c : constraints)
      if (failed(
              consumeConstraint(c, f->hasAttr(DistDialect::kCompleteAttrName))))
        return failure();
  }
  for (FunctionOpInterface f : functions) {
    // Arguments are what callers pass: constraints, replicated when
    // unencoded. In a function that is not marked (all-functions), a cast
    // to an unencoded tensor says what it says: the value leaves the
    // distributed program, replicated.
    bool marked = f->hasAttr(DistDialect::kCompleteAttrName);
    f.getFunctionBody().walk([&](Operation *op) {
      order.push_back(op);
      if (!marked && isa<tensor::CastOp>(op))
        return;
      for (Value r : op->getResults())
        if (isTensor(r) && !distOf(r))
          undecided.insert(r);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (isTensor(arg) && !distOf(arg))
              undecided.insert(arg);
      if (auto call = dyn_cast<CallOpInterface>(op))
        if (FunctionOpInterface callee = getCalleeWithBody(call, symbols))
          callers[callee].push_back(call);
    });
    for (auto it = std::next(f.getFunctionBody().begin());
         it != f.getFunctionBody().end(); ++it)
      for (BlockArgument arg : it->getArguments())
        if (isTensor(arg) && !distOf(arg))
          undecided.insert(arg);
  }
  for (Operation *op : order)
    enqueue(op);
  while (true) {
    while (!worklist.empty()) {
      Operation *op = worklist.front();
      worklist.pop_front();
      queued.erase(op);
      if (failed(visit(op)))
        return failure();
    }
    if (undecided.empty() || !guess())
      break;
  }
  // Copies of a fresh tensor that their consumers decided alike are one
  // tensor again (a complete program comes out unchanged).
  for (auto [original, copy] : copies)
    if (OperationEquivalence::isEquivalentTo(
            original, copy, OperationEquivalence::IgnoreLocations)) {
      copy->replaceAllUsesWith(original);
      copy->erase();
    }
  finish(functions);
  // The result must pass the check it was made for.
  bool ok = true;
  for (FunctionOpInterface f : functions)
    f.getFunctionBody().walk([&](Operation *op) {
      if (isa<DistributionRuleInterface>(op) &&
          !isa_and_nonnull<DistDialect>(op->getDialect()) &&
          failed(rules::verifyDistributionRule(op)))
        ok = false;
    });
  return success(ok);
}

namespace {
struct DistCompletePass
    : public CostModelPass<dist::impl::DistCompleteBase<DistCompletePass>> {
  using CostModelPass::CostModelPass;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The functions that say something about distributions.
    SmallVector<FunctionOpInterface> functions;
    module.walk([&](FunctionOpInterface f) {
      if (f.isExternal()) {
        // Nothing in it to decide.
        f->removeAttr(DistDialect::kCompleteAttrName);
        return;
      }
      if (f->hasAttr(DistDialect::kCompleteAttrName)) {
        functions.push_back(f);
        return;
      }
      if (!allFunctions)
        return;
      bool encoded = false;
      f->walk([&](Operation *op) {
        auto has = [](Type t) { return static_cast<bool>(getTensorDist(t)); };
        if (llvm::any_of(op->getResultTypes(), has))
          encoded = true;
        for (Region &region : op->getRegions())
          for (Block &block : region)
            if (llvm::any_of(block.getArgumentTypes(), has))
              encoded = true;
        return encoded ? WalkResult::interrupt() : WalkResult::advance();
      });
      if (encoded)
        functions.push_back(f);
    });
    FailureOr<CostModelOptions> options = costModelOptions();
    if (failed(options))
      return signalPassFailure();
    CostModel model(*options);
    Completion completion(replicateUnknownOps, remarks, model);
    if (failed(completion.run(functions)))
      return signalPassFailure();
    // A constraint outside the completed functions states what holds (its
    // verifier saw to that): the pass consumes it there too.
    // An unencoded operand pinned to the explicit replicated encoding
    // takes it through a reshard that lowers to a cast.
    module.walk([](ConstraintOp c) {
      Value out = c.getInput();
      if (out.getType() != c.getResult().getType()) {
        OpBuilder b(c);
        out = ReshardOp::create(b, c.getLoc(), c.getResult().getType(), out);
      }
      c.getResult().replaceAllUsesWith(out);
      c->erase();
    });
    numCompleted += completion.numCompleted;
    numReshards += completion.numReshards;
  }
};
} // namespace
