//===- Complete.cpp - the --dist-complete pass ----------------------------===//
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

#include "Completion.h"

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTCOMPLETE
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::completion;

/// The one place completion changes a type. A constant's value carries its
/// type; a function's type follows its entry block and what it returns.
/// The remarks made so far are emitted after, so that each shows its op as
/// completion makes it.
void Completion::writeDecisions() {
  for (auto [v, type] : decisions) {
    if (v.getType() == type)
      continue;
    v.setType(type);
    if (auto constant = v.getDefiningOp<arith::ConstantOp>())
      if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
        constant.setValueAttr(dense.reshape(cast<ShapedType>(type)));
  }
  decisions.clear();
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
  }
  for (auto &[op, remark] : pendingRemarks)
    op->emitRemark(remark.str());
  pendingRemarks.clear();
}

/// Whether `op` makes an unencoded tensor from nothing distributed: an empty
/// tensor, a constant, a splat, or a fill of one of those.
static bool isFreshTensor(Operation *op) {
  if (op->getNumResults() != 1 || !isTensor(op->getResult(0)) ||
      getTensorDist(op->getResult(0).getType()))
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
  Type pinned = typeOf(constraint.getResult());
  bool undecidedInput =
      marked && !distOf(in) &&
      !(isa<BlockArgument>(in) &&
        cast<BlockArgument>(in).getOwner()->isEntryBlock() &&
        isa<FunctionOpInterface>(
            cast<BlockArgument>(in).getOwner()->getParentOp()));
  Value out = in;
  if (undecidedInput) {
    setDecision(in, pinned);
    pins.try_emplace(in, constraint.getLoc());
  } else if (typeOf(in) != pinned) {
    OpBuilder b(constraint);
    FailureOr<Value> r = reshard(b, constraint.getLoc(), in, pinned);
    if (failed(r))
      return failure();
    out = *r;
    // The remark goes with the reshard, at the constraint's location: the
    // constraint is erased below, and remarks are emitted at the end.
    if (Operation *reshardOp = out.getDefiningOp();
        reshardOp && (!isReplicated(distOf(in)) || !isReplicated(distOf(out))))
      remarkAt(reshardOp, "completion: reshard of operand #0 from ")
          << describe(distOf(in)) << " to " << describe(distOf(out)) << ": "
          << describePin(constraint.getLoc(), distOf(out)) << ", and "
          << provenance(in);
  }
  constraint.getResult().replaceAllUsesWith(out);
  constraint->erase();
  return success();
}

LogicalResult Completion::run(ArrayRef<FunctionOpInterface> functions) {
  this->functions = functions;
  SmallVector<std::pair<Operation *, Operation *>> copies;
  for (FunctionOpInterface f : functions)
    splitFreshTensors(f, copies);
  LogicalResult decided = decideAll();
  writeDecisions();
  if (failed(decided))
    return failure();
  // Copies of a fresh tensor that their consumers decided alike are one
  // tensor again (a complete program comes out unchanged).
  for (auto [original, copy] : copies)
    if (OperationEquivalence::isEquivalentTo(
            original, copy, OperationEquivalence::IgnoreLocations)) {
      copy->replaceAllUsesWith(original);
      copy->erase();
    }
  for (FunctionOpInterface f : functions)
    f->removeAttr(DistDialect::kCompleteAttrName);
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

/// Consumes the constraints, finds what is undecided and runs the worklist
/// (and guessing) to a fixpoint.
LogicalResult Completion::decideAll() {
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
    Operation *unregistered = nullptr;
    f.getFunctionBody().walk([&](Operation *op) {
      if (!unregistered && rules::lacksRegisteredRule(op))
        unregistered = op;
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
    // A tool that forgot the upstream ops' rules is told so before
    // anything is decided.
    if (unregistered) {
      writeDecisions();
      return rules::requireRegisteredRule(unregistered);
    }
    for (auto it = std::next(f.getFunctionBody().begin());
         it != f.getFunctionBody().end(); ++it)
      for (BlockArgument arg : it->getArguments())
        if (isTensor(arg) && !distOf(arg))
          undecided.insert(arg);
  }
  // Nearly every undecided value gets a decision: the map grows once.
  decisions.reserve(decisions.size() + undecided.size());
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
      return success();
  }
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
