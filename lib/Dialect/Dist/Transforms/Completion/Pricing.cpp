//===- Pricing.cpp - reshards at conflicts, priced ------------------------===//

#include "Completion.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::completion;

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
std::optional<RankedTensorType>
completion::retyped(Value v, TensorDistAttr dist, bool explicitReplicated) {
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
