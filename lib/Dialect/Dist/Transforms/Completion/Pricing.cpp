//===- Pricing.cpp - reshards at conflicts, priced ------------------------===//
//
// Where an op's rule computes a result otherwise than it is declared, the
// declared distribution is made after the op (a reshard of the result) or
// before it (reshards of operands, so that the rule computes it). Each
// choice of operand types is priced by asking the rule for those types and
// the cost model for their reshards and the op's compute: nothing is built
// until the choice is made.
//
//===----------------------------------------------------------------------===//

#include "Completion.h"

#include "dist/Dialect/Dist/IR/MatmulGeometry.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::completion;

LogicalResult Completion::checkReshardable(Location loc, Type from, Type to) {
  auto a = cast<RankedTensorType>(from), c = cast<RankedTensorType>(to);
  // Local shapes are written: two ends whose global shapes differ hold
  // different tensors, which no redistribution reconciles.
  SmallVector<int64_t> ga = mesh::globalShape(a.getShape(), getTensorDist(a));
  SmallVector<int64_t> gc = mesh::globalShape(c.getShape(), getTensorDist(c));
  if (ga == gc)
    return success();
  InFlightDiagnostic diag =
      errorAt(loc, "completion: cannot reshard ")
      << describe(getTensorDist(a)) << " to " << describe(getTensorDist(c))
      << ": with the local shapes written the global shapes differ, [";
  llvm::interleaveComma(ga, diag);
  diag << "] and [";
  llvm::interleaveComma(gc, diag);
  diag << "]";
  return failure();
}

FailureOr<Value> Completion::reshard(OpBuilder &b, Location loc, Value v,
                                     Type to) {
  Type from = typeOf(v);
  if (!getTensorDist(from) && !getTensorDist(to))
    return v;
  if (failed(checkReshardable(loc, from, to)))
    return failure();
  ++numReshards;
  return ReshardOp::create(b, loc, cast<RankedTensorType>(to), v).getResult();
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

std::optional<RankedTensorType> completion::retyped(RankedTensorType type,
                                                    TensorDistAttr dist,
                                                    bool explicitReplicated) {
  std::optional<SmallVector<int64_t>> local = mesh::localShape(
      mesh::globalShape(type.getShape(), getTensorDist(type)), dist);
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

/// The types each operand of `op` may take instead of its own: as it was
/// before this op's repairs, as a conflicting result is declared
/// (`declared`) when the ranks agree, as a linalg op's loops want the
/// declared results, and replicated.
Completion::OperandOptions
Completion::operandOptions(Operation *op, MeshAttr mesh,
                           const OperandPlan &plan, ArrayRef<Value> conflicts,
                           ArrayRef<TensorDistAttr> declared) {
  OperandOptions options;
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i) {
    options.types.push_back({plan.repaired[i]});
    if (plan.repairs(i))
      options.types.back().push_back(plan.baseTypes[i]);
  }
  auto offer = [&](unsigned i, TensorDistAttr d, bool explicitReplicated) {
    auto type = dyn_cast<RankedTensorType>(plan.baseTypes[i]);
    if (!type || (d && d.getMesh() != mesh))
      return;
    if (std::optional<RankedTensorType> t =
            retyped(type, d, explicitReplicated);
        t && !llvm::is_contained(options.types[i], Type(*t)))
      options.types[i].push_back(*t);
  };
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i) {
    auto type = dyn_cast<RankedTensorType>(plan.baseTypes[i]);
    if (!type)
      continue;
    // As written (an init has its result's type), and as completion
    // writes a replicated value.
    for (Value r : conflicts)
      if (cast<RankedTensorType>(typeOf(r)).getRank() == type.getRank())
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

/// The loop extents of `map`'s dims in a shape: false when a static extent
/// disagrees with one `extents` holds already.
static bool agreeOnLoops(AffineMap map, ArrayRef<int64_t> shape,
                         SmallVectorImpl<int64_t> &extents) {
  for (auto [dim, e] : llvm::enumerate(map.getResults())) {
    auto loop = dyn_cast<AffineDimExpr>(e);
    if (!loop || ShapedType::isDynamic(shape[dim]))
      continue;
    int64_t &extent = extents[loop.getPosition()];
    if (extent != ShapedType::kDynamic && extent != shape[dim])
      return false;
    extent = shape[dim];
  }
  return true;
}

static ArrayRef<int64_t> shapeOf(Type t) {
  return cast<ShapedType>(t).getShape();
}

/// What the verifiers of the dist ops with a rule check of their operand
/// and result types (DistOps.cpp), for given types: a product's shape, a
/// lookup's rows (the ids' shape and the table's columns), types that must
/// be one. None for other ops.
static std::optional<bool>
distOpKeepsWellFormed(Operation *op, TypeRange operands, TypeRange results) {
  auto given = [&](OpOperand &use) { return operands[use.getOperandNumber()]; };
  auto product = [&](auto productOp, Type out) {
    std::string ignored;
    llvm::raw_string_ostream os(ignored);
    std::optional<SmallVector<int64_t>> s = matmul::resultShape(
        shapeOf(given(productOp.getXMutable())),
        shapeOf(given(productOp.getYMutable())), productOp.getTransposeX(),
        productOp.getTransposeY(), os);
    return s && succeeded(verifyCompatibleShape(*s, shapeOf(out)));
  };
  auto lookupRows = [&](auto lookup, Type rows) {
    ArrayRef<int64_t> weight = shapeOf(given(lookup.getWeightMutable()));
    SmallVector<int64_t> expected(shapeOf(given(lookup.getIdsMutable())));
    if (weight.size() != 2)
      return false;
    expected.push_back(weight[1]);
    return succeeded(verifyCompatibleShape(shapeOf(rows), expected));
  };
  auto lookupGrad = [&](auto grad) {
    return lookupRows(grad, given(grad.getOutGradMutable())) &&
           succeeded(verifyCompatibleShape(
               shapeOf(given(grad.getWeightMutable())), shapeOf(results[0])));
  };
  return TypeSwitch<Operation *, std::optional<bool>>(op)
      .Case([&](MatmulOp m) { return product(m, results[0]); })
      .Case([&](MatmulGradOp g) {
        return product(g, given(g.getOutGradMutable())) &&
               shapeOf(results[0]) == shapeOf(given(g.getXMutable())) &&
               shapeOf(results[1]) == shapeOf(given(g.getYMutable()));
      })
      .Case<EmbeddingOp, CEmbeddingOp>(
          [&](auto lookup) { return lookupRows(lookup, results[0]); })
      .Case<EmbeddingGradOp, CEmbeddingGradOp>(
          [&](auto grad) { return lookupGrad(grad); })
      .Case(
          [&](DropoutOp d) { return given(d.getInputMutable()) == results[0]; })
      .Case([&](CheckFiniteAndUnscaleOp c) {
        for (auto [use, out] : llvm::zip(c.getGradsMutable(), results))
          if (given(use) != out)
            return false;
        return true;
      })
      .Case<SgdOp, AdamWOp>([&](Operation *update) -> std::optional<bool> {
        // Parameter, gradient, states and results: one shape.
        ArrayRef<int64_t> param = shapeOf(results[0]);
        for (Type t : llvm::concat<const Type>(operands, results))
          if (auto shaped = dyn_cast<RankedTensorType>(t);
              shaped && shaped.getRank() && shaped.getShape() != param)
            return false;
        return true;
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Whether `op` as written (its operands typed `written`), with operands
/// typed `operands` and results `results`, is still well-formed: what its
/// verifier checks of the types that a choice of distributions changes.
/// Ops whose operands and results share one type keep sharing it; a linalg
/// op's loops keep one extent each; the dist ops with a rule keep what
/// their verifiers check; any other op keeps each operand's local shape
/// (conservative: such an op then keeps the reshard after it).
static bool keepsWellFormed(Operation *op, TypeRange written,
                            TypeRange operands, TypeRange results) {
  if (op->hasTrait<OpTrait::SameOperandsAndResultType>()) {
    SmallVector<Type> all(operands);
    llvm::append_range(all, results);
    return llvm::all_equal(all);
  }
  if (std::optional<bool> known = distOpKeepsWellFormed(op, operands, results))
    return *known;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    SmallVector<int64_t> extents(linalgOp.getNumLoops(), ShapedType::kDynamic);
    SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
    for (OpOperand &use : op->getOpOperands()) {
      unsigned i = use.getOperandNumber();
      if (i >= maps.size() || !isa<ShapedType>(operands[i]))
        continue;
      // A dim indexed by an expression keeps its written extent.
      for (auto [dim, e] : llvm::enumerate(maps[i].getResults()))
        if (!isa<AffineDimExpr>(e) &&
            shapeOf(operands[i])[dim] != shapeOf(written[i])[dim])
          return false;
      if (!agreeOnLoops(maps[i], shapeOf(operands[i]), extents))
        return false;
    }
    return true;
  }
  for (auto [a, b] : llvm::zip(written, operands))
    if (isa<ShapedType>(a) && shapeOf(a) != shapeOf(b))
      return false;
  return true;
}

/// The cheapest choice of operand types among `options` (by index) under
/// which `rule` computes every decided result of `op` as declared, the op
/// stays well-formed and an init has its result's type, and its price (the
/// reshards before the op and its compute); none when no choice but the
/// first does.
std::optional<std::pair<SmallVector<unsigned>, double>>
Completion::cheapestOperands(Operation *op, DistributionRuleInterface rule,
                             const OperandPlan &plan,
                             const OperandOptions &options) {
  ArrayRef<Type> results = plan.results;
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
  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  SmallVector<Type> operands(options.types.size());
  while (next()) {
    double seconds = 0;
    bool priced = true;
    for (unsigned i = 0, e = operands.size(); i < e; ++i) {
      operands[i] = options.types[i][pick[i]];
      if (operands[i] != plan.baseTypes[i]) {
        std::optional<double> s =
            reshardSeconds(cast<RankedTensorType>(plan.baseTypes[i]),
                           cast<RankedTensorType>(operands[i]));
        priced = priced && s;
        seconds += s.value_or(0.0);
      }
    }
    ignored.clear();
    FailureOr<SmallVector<rules::Dist>> now =
        infer(rule, operands, results, os);
    bool accepted = priced && succeeded(now);
    for (auto [i, result] : llvm::enumerate(op->getResults()))
      if (accepted && isTensor(result) && !isUndecided(result))
        accepted = holdsAsDecided(op, result, (*now)[i],
                                  cast<RankedTensorType>(results[i]).getRank());
    if (accepted && dps)
      for (OpOperand &init : dps.getDpsInitsMutable())
        if (Value result = dps.getTiedOpResult(&init);
            result && !isUndecided(result))
          accepted =
              accepted && operands[init.getOperandNumber()] == typeOf(result);
    accepted =
        accepted && keepsWellFormed(op, plan.baseTypes, operands, results);
    if (accepted)
      seconds += model.computeTime(op, operands, results).value_or(0.0);
    if (accepted && (!bestSeconds || seconds < *bestSeconds)) {
      bestSeconds = seconds;
      best = pick;
    }
  }
  if (!bestSeconds)
    return std::nullopt;
  return std::pair(std::move(best), *bestSeconds);
}

LogicalResult Completion::buildOperandReshards(Operation *op, OperandPlan &plan,
                                               ArrayRef<Type> chosen,
                                               ArrayRef<Value> conflicts,
                                               double seconds, double asIs) {
  OpBuilder b(op);
  // The repairs that stay, then the reshards that replace the others.
  for (OpOperand &use : op->getOpOperands()) {
    unsigned i = use.getOperandNumber();
    if (!plan.repairs(i) || chosen[i] != plan.repaired[i])
      continue;
    FailureOr<Value> r = reshard(b, op->getLoc(), plan.bases[i], chosen[i]);
    if (failed(r))
      return failure();
    use.set(*r);
  }
  for (OpOperand &use : op->getOpOperands()) {
    unsigned i = use.getOperandNumber();
    Type t = chosen[i];
    if (t == plan.repaired[i] || t == plan.baseTypes[i])
      continue;
    FailureOr<Value> r = reshard(b, op->getLoc(), plan.bases[i], t);
    if (failed(r))
      return failure();
    use.set(*r);
    // Only the replicated encoding written out: nothing to remark on.
    TensorDistAttr from = getTensorDist(plan.baseTypes[i]),
                   to = getTensorDist(t);
    if (isReplicated(from) && isReplicated(to))
      continue;
    Remark remark = remarkAt(op, "completion: reshard of operand #")
                    << i << " from " << describe(from) << " to " << describe(to)
                    << " before '" << op->getName()
                    << "', which then computes ";
    llvm::interleaveComma(conflicts, remark, [&](Value c) {
      remark << "result #" << cast<OpResult>(c).getResultNumber() << " as "
             << describe(distOf(c)) << " (" << provenance(c) << ")";
    });
    remark << llvm::formatv(": {0:f3} us by the cost model, against {1:f3} us "
                            "with a reshard of the result after it",
                            seconds * 1e6, asIs * 1e6)
                  .str();
  }
  return success();
}

std::optional<SmallVector<Type>>
Completion::chooseOperandTypes(Operation *op, DistributionRuleInterface rule,
                               ArrayRef<rules::Dist> inferred,
                               const OperandPlan &plan, std::string &pricedNot,
                               SmallVectorImpl<Value> &conflicts,
                               double &seconds, double &asIs) {
  ArrayRef<Type> results = plan.results;
  SmallVector<TensorDistAttr> declared(op->getNumResults());
  SmallVector<double> after;
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    auto type = dyn_cast<RankedTensorType>(results[i]);
    if (!type || isUndecided(result) ||
        holdsAsDecided(op, result, inferred[i], type.getRank()))
      continue;
    std::optional<double> s =
        reshardSeconds(withDist(type, inferred[i].toAttr()), type);
    if (!s) {
      conflicts.clear();
      return std::nullopt;
    }
    after.push_back(*s);
    declared[i] = distOf(result);
    conflicts.push_back(result);
  }
  if (conflicts.empty())
    return std::nullopt;
  // The op's compute, then each reshard after it (summed in this order).
  double afterSeconds =
      model.computeTime(op, plan.repaired, results).value_or(0.0);
  for (double s : after)
    afterSeconds += s;
  std::string ignored;
  llvm::raw_string_ostream os(ignored);
  FailureOr<MeshAttr> mesh = rules::commonMesh(plan.repaired, results, os);
  if (failed(mesh) || !*mesh)
    return std::nullopt;
  OperandOptions options = operandOptions(op, *mesh, plan, conflicts, declared);
  // The search is over few operands; an op with many options keeps the
  // reshard after it.
  uint64_t combinations = 1;
  for (const auto &o : options.types)
    combinations *= o.size();
  if (combinations > 256)
    return std::nullopt;
  std::optional<std::pair<SmallVector<unsigned>, double>> best =
      cheapestOperands(op, rule, plan, options);

  // What the repairs chose (the options as they are) is priced as it is.
  asIs = afterSeconds;
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
    if (plan.repairs(i))
      asIs += reshardSeconds(cast<RankedTensorType>(plan.baseTypes[i]),
                             cast<RankedTensorType>(plan.repaired[i]))
                  .value_or(0.0);
  if (best && best->second >= asIs)
    pricedNot = llvm::formatv(" ({0:f3} us by the cost model, against {1:f3} "
                              "us with reshards of operands before it)",
                              asIs * 1e6, best->second * 1e6)
                    .str();
  if (!best || best->second >= asIs)
    return std::nullopt;
  seconds = best->second;
  SmallVector<Type> chosen;
  for (auto [i, pick] : llvm::enumerate(best->first))
    chosen.push_back(options.types[i][pick]);
  return chosen;
}
