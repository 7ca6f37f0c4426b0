//===- Repairs.cpp - ops with a rule; repairs of partials -----------------===//
//
// An op with a rule is decided in three steps, none of which builds what a
// later one takes back: the repairs are planned as types (a partial operand
// completed, an init made partial) and the rule is asked for them; the
// operands' types are chosen against the reshards after the op
// (Pricing.cpp); then the reshards are built and the results decided.
//
//===----------------------------------------------------------------------===//

#include "Completion.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::completion;

static bool hasPartial(ArrayRef<Type> types) {
  return llvm::any_of(types, [](Type t) {
    TensorDistAttr d = getTensorDist(t);
    return d && d.isPartial();
  });
}

/// `type` with its pending reductions completed.
static Type completeOf(Type type) {
  TensorDistAttr d = getTensorDist(type);
  return withDist(type, d ? d.dropPartial(d.getPartialAxes()) : d);
}

/// `use` takes the complete value of a partial one. When that value comes
/// through ops completion decided that pass the partial sum on (a dropout,
/// a scale: each with one use, computing the complete value from a
/// complete operand), the sum is completed where the tensor is smallest on
/// the way, the earliest on a tie (right after a row-parallel product, as
/// Megatron does), and the ops between take the complete value. Returns
/// the op the completion follows, or null when it stays at `use`.
FailureOr<Operation *> Completion::hoistCompletion(OpOperand &use) {
  // The chain back from the partial value, latest first.
  SmallVector<Value> chain{use.get()};
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
    // Would `def` compute the complete value from its operand completed?
    Value in = partialOperands[0];
    SmallVector<Type> operands = typesOf(def->getOperands());
    for (auto [v, t] : llvm::zip(def->getOperands(), operands))
      if (v == in)
        t = completeOf(t);
    std::string ignored;
    llvm::raw_string_ostream os(ignored);
    FailureOr<SmallVector<rules::Dist>> inferred = infer(rule, operands, os);
    auto type = cast<RankedTensorType>(typeOf(cur));
    TensorDistAttr want = getTensorDist(completeOf(type));
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
        CostModel::tensorBytes(cast<RankedTensorType>(typeOf(v)));
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
  OpOperand *firstUse = nullptr;
  for (OpOperand &u : best.getUses())
    if (u.getOwner()->getNumResults() &&
        llvm::is_contained(chain, u.getOwner()->getResult(0)))
      firstUse = &u;
  if (!firstUse)
    return nullptr;
  for (Value v : chain) {
    if (v == best)
      break;
    setDecision(v, completeOf(typeOf(v)));
  }
  OpBuilder b(firstUse->getOwner());
  FailureOr<Value> r =
      reshard(b, use.getOwner()->getLoc(), best, completeOf(typeOf(best)));
  if (failed(r))
    return failure();
  firstUse->set(*r);
  return best.getDefiningOp() ? best.getDefiningOp() : r->getDefiningOp();
}

/// A linalg op that reduces over a split loop into an init that is
/// neither partial nor the reduction's identity (a replicated accumulator)
/// would count the init once per process: the init is resharded to the
/// output loops' split, partial over the split reduction loops (a local
/// make_partial: one process keeps it). The kind is the first of sum, max
/// and min that the rule accepts (it reads the combiner from the region).
LogicalResult
Completion::planInitRepairs(linalg::LinalgOp op, DistributionRuleInterface rule,
                            OperandPlan &plan,
                            FailureOr<SmallVector<rules::Dist>> &inferred) {
  MeshAttr mesh = meshOf(op);
  if (!mesh || op.getNumDpsInits() == 0)
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
  for (ReductionKind kind :
       {ReductionKind::Sum, ReductionKind::Max, ReductionKind::Min}) {
    SmallVector<Type> operands(plan.baseTypes);
    SmallVector<unsigned> changed;
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
      TensorDistAttr to = TensorDistAttr::get(mesh, dims, partial);
      unsigned n = init.getOperandNumber();
      if (partial.empty() || to == getTensorDist(operands[n]))
        continue;
      Type target = withDist(operands[n], to);
      if (failed(checkReshardable(op.getLoc(), operands[n], target)))
        return failure();
      operands[n] = target;
      changed.push_back(n);
    }
    if (changed.empty())
      return success();
    std::string ignored;
    llvm::raw_string_ostream os(ignored);
    inferred = infer(rule, operands, plan.results, os);
    if (failed(inferred))
      continue;
    for (unsigned n : changed) {
      plan.repaired[n] = operands[n];
      plan.remarks.emplace_back(
          n, remarkAt(op, "completion: reshard of init #")
                 << n << " from " << describe(distOf(plan.bases[n])) << " to "
                 << describe(getTensorDist(operands[n]))
                 << ": the op reduces over a split loop into it, and "
                 << provenance(plan.bases[n]));
    }
    return success();
  }
  return success();
}

/// A nonlinear op of a partial value, or a partial plus a replicated one:
/// the partial operands are completed first, where the rule then holds
/// (the completion hoisted to where it is cheapest); where it still does
/// not, nothing is planned and `why` says the first reason.
LogicalResult Completion::planPartialRepairs(
    Operation *op, DistributionRuleInterface rule, OperandPlan &plan,
    FailureOr<SmallVector<rules::Dist>> &inferred, std::string &why) {
  std::string first = why;
  SmallVector<Type> operands(plan.baseTypes);
  for (Type &t : operands)
    if (TensorDistAttr d = getTensorDist(t); d && d.isPartial())
      t = completeOf(t);
  why.clear();
  llvm::raw_string_ostream os(why);
  inferred = infer(rule, operands, plan.results, os);
  if (failed(inferred)) {
    why = first;
    return success();
  }
  for (OpOperand &use : op->getOpOperands()) {
    unsigned i = use.getOperandNumber();
    if (operands[i] == plan.baseTypes[i])
      continue;
    Remark remark = remarkAt(op, "completion: reshard of operand #")
                    << i << " from " << describe(distOf(plan.bases[i]))
                    << " to " << describe(getTensorDist(operands[i])) << ": "
                    << provenance(plan.bases[i]) << ", and '" << op->getName()
                    << "' needs it complete (" << first << ")";
    plan.repaired[i] = operands[i];
    FailureOr<Operation *> at = hoistCompletion(use);
    if (failed(at))
      return failure();
    if (*at) {
      remark << "; completed after '" << (*at)->getName() << "' at "
             << (*at)->getLoc()
             << ", where the ops between pass the partial sum on";
      plan.hoisted[i] = true;
      plan.baseTypes[i] = typeOf(plan.bases[i]);
    }
    plan.remarks.emplace_back(i, std::move(remark));
  }
  return success();
}

/// Decides the results of `op` as its rule computes them (`inferred`); a
/// result declared otherwise gets a reshard after the op.
LogicalResult Completion::decideResults(Operation *op,
                                        ArrayRef<rules::Dist> inferred,
                                        StringRef pricedNot) {
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    auto type = dyn_cast<RankedTensorType>(typeOf(result));
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
      decided = typeOf(op->getOperand(0));
    if (isUndecided(result)) {
      decide(result, decided, op);
      if (failed(completeFanOut(op, cast<OpResult>(result))))
        return failure();
      continue;
    }
    if (holdsAsDecided(op, result, computed, type.getRank()))
      continue;
    // Declared (or decided from its uses) otherwise: the op computes what
    // its rule says, in the local shape it was verified with, and a
    // reshard after it gives the rest the declared distribution (of the
    // same global tensor, or reshard says why not).
    Type declared = type;
    std::string declaredWhy = provenance(result);
    setDecision(result, withDist(declared, attr));
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
    if (!result || !isa<RankedTensorType>(typeOf(init.get())) ||
        typeOf(init.get()) == typeOf(result))
      continue;
    TensorDistAttr from = distOf(init.get()), to = distOf(result);
    FailureOr<Value> r = reshard(b, op->getLoc(), init.get(), typeOf(result));
    if (failed(r))
      return failure();
    // Replicated written out on one side only changes no data.
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
  OperandPlan plan;
  plan.baseTypes = typesOf(op->getOperands());
  plan.results = typesOf(op->getResults());
  std::string why;
  llvm::raw_string_ostream os(why);
  FailureOr<SmallVector<rules::Dist>> inferred =
      infer(rule, plan.baseTypes, plan.results, os);
  // The common case: the rule holds as the operands are, and computes every
  // decided result as it is. Nothing to repair, price or build.
  if (succeeded(inferred) &&
      llvm::all_of(llvm::enumerate(op->getResults()), [&](auto it) {
        auto [i, result] = it;
        auto type = dyn_cast<RankedTensorType>(plan.results[i]);
        return !type || isUndecided(result) ||
               holdsAsDecided(op, result, (*inferred)[i], type.getRank());
      })) {
    if (failed(decideResults(op, *inferred, "")))
      return failure();
    return reshardInits(op);
  }
  plan.bases = llvm::to_vector(op->getOperands());
  plan.repaired = plan.baseTypes;
  plan.hoisted.resize(op->getNumOperands());
  // Reshards before the op that replace the repairs, if cheaper.
  std::optional<SmallVector<Type>> instead;
  // A repair's remark is reported once the op's reshards are settled: a
  // repair that a reshard before the op replaces never happened.
  llvm::scope_exit reportRepairs([&] {
    for (auto &[i, remark] : plan.remarks)
      if (plan.hoisted[i] || !instead || (*instead)[i] == plan.repaired[i])
        remark.report();
      else
        remark.abandon();
  });
  if (failed(inferred) && hasPartial(plan.baseTypes) &&
      failed(planPartialRepairs(op, rule, plan, inferred, why)))
    return failure();
  if (failed(inferred))
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      if (failed(planInitRepairs(linalgOp, rule, plan, inferred)))
        return failure();
  if (failed(inferred))
    return errorAt(op, "has no correct distribution: ") << why;
  std::string pricedNot;
  SmallVector<Value> conflicts;
  double seconds = 0, asIs = 0;
  instead = chooseOperandTypes(op, rule, *inferred, plan, pricedNot, conflicts,
                               seconds, asIs);
  if ((instead || plan.repaired != plan.baseTypes) &&
      failed(buildOperandReshards(op, plan, instead ? *instead : plan.repaired,
                                  conflicts, seconds, asIs)))
    return failure();
  if (instead) {
    why.clear();
    inferred = infer(rule, *instead, plan.results, os);
    if (failed(inferred))
      return errorAt(op, "has no correct distribution: ") << why;
  }
  if (failed(decideResults(op, *inferred, pricedNot)))
    return failure();
  return reshardInits(op);
}
