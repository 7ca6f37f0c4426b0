//===- Repairs.cpp - ops with a rule; repairs of partials -----------------===//

#include "Completion.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::completion;

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

/// A nonlinear op of a partial value, or a partial plus a replicated one:
/// the partial operands are completed first, where the rule then holds
/// (the completion hoisted to where it is cheapest); where it still does
/// not, the program is left as it was and `why` says the first reason.
LogicalResult
Completion::repairPartialOperands(Operation *op, DistributionRuleInterface rule,
                                  FailureOr<SmallVector<rules::Dist>> &inferred,
                                  std::string &why) {
  llvm::raw_string_ostream os(why);
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
  return success();
}

/// Decides the results of `op` as its rule computes them (`inferred`); a
/// result declared otherwise gets a reshard after the op.
LogicalResult Completion::decideResults(Operation *op,
                                        ArrayRef<rules::Dist> inferred,
                                        StringRef pricedNot) {
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type)
      continue;
    const rules::Dist &computed = inferred[i];
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
  return success();
}

/// A destination-style op's result has its init's type: an init decided
/// otherwise (a partial result into a replicated init) is resharded.
LogicalResult Completion::reshardInits(Operation *op) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  if (!dps)
    return success();
  OpBuilder b(op);
  for (OpOperand &init : dps.getDpsInitsMutable()) {
    Value result = dps.getTiedOpResult(&init);
    if (!result || !isa<RankedTensorType>(init.get().getType()) ||
        init.get().getType() == result.getType())
      continue;
    FailureOr<Value> r = reshard(b, op->getLoc(), init.get(), result.getType());
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
  return success();
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
  if (failed(inferred) && hasPartialOperand(op) &&
      failed(repairPartialOperands(op, rule, inferred, why)))
    return failure();
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

  if (failed(decideResults(op, *inferred, pricedNot)))
    return failure();
  return reshardInits(op);
}
