//===- Guessing.cpp - guessing what nothing decides -----------------------===//

#include "Completion.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::completion;

/// The distributions of a linalg op's undecided operands from its loops:
/// each loop takes the mesh axis a known operand's dim over it is split on
/// (`operandTypes`: the types completion gives them).
static SmallVector<TensorDistAttr>
linalgCandidate(linalg::LinalgOp op, MeshAttr mesh, ArrayRef<Type> operandTypes,
                const llvm::DenseSet<Value> &undecided) {
  SmallVector<int64_t> loopAxis(op.getNumLoops(), -1);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto loopOf = [](AffineExpr e) -> std::optional<unsigned> {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      return d.getPosition();
    return std::nullopt;
  };
  for (OpOperand &use : op->getOpOperands()) {
    TensorDistAttr d = getTensorDist(operandTypes[use.getOperandNumber()]);
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

/// The candidates guessing tries for `op`'s undecided operands, in order:
/// from the loops (linalg), then the split of each known operand and result
/// of the same rank, then their split and partial axes (an init that holds
/// a partial result, a fill of the sum's zero), then replicated. One
/// distribution per operand (null: replicated, or not undecided).
SmallVector<SmallVector<TensorDistAttr>>
Completion::guessCandidates(Operation *op, MeshAttr mesh) {
  SmallVector<SmallVector<TensorDistAttr>> candidates;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    candidates.push_back(
        linalgCandidate(linalgOp, mesh, typesOf(op->getOperands()), undecided));
  SmallVector<Value> known;
  for (Value v : op->getOperands())
    if (!isUndecided(v) && distOf(v))
      known.push_back(v);
  for (Value v : op->getResults())
    if (isTensor(v) && !isUndecided(v) && distOf(v))
      known.push_back(v);
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
                        cast<RankedTensorType>(typeOf(k)).getRank()
                ? like
                : nullptr);
      candidates.push_back(std::move(c));
    }
  candidates.push_back(SmallVector<TensorDistAttr>(op->getNumOperands()));
  return candidates;
}

/// Asks the rule of `op` what it computes when its operands have the types
/// `operands` but for the `open` ones, which take the distributions of
/// candidate `c`; returns whether it accepts them (the results it computes
/// hold the known results) and sets `chosen` to the open operands' types
/// (an undecided init of a destination-style op takes its result's
/// distribution, partial included, if the rule agrees). An undecided value
/// that the op takes twice has one type: the last of its uses says it.
bool Completion::tryCandidate(Operation *op, DistributionRuleInterface rule,
                              ArrayRef<OpOperand *> open,
                              ArrayRef<TensorDistAttr> c,
                              SmallVectorImpl<Type> &operands,
                              SmallVectorImpl<Type> &chosen) {
  llvm::SmallDenseMap<Value, Type> trial;
  auto give = [&](Value v, Type t) {
    trial[v] = t;
    for (OpOperand &use : op->getOpOperands())
      if (use.get() == v)
        operands[use.getOperandNumber()] = t;
  };
  for (OpOperand *use : open) {
    auto type = cast<RankedTensorType>(operands[use->getOperandNumber()]);
    TensorDistAttr d = c[use->getOperandNumber()];
    give(use->get(),
         withTensorDist(type, d && !d.isReplicated() ? d : nullptr));
  }
  std::string ignored;
  llvm::raw_string_ostream os(ignored);
  FailureOr<SmallVector<rules::Dist>> inferred = infer(rule, operands, os);
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op);
      dps && succeeded(inferred)) {
    bool retyped = false;
    for (OpOperand *use : open) {
      if (!dps.isDpsInit(use))
        continue;
      Value result = dps.getTiedOpResult(use);
      TensorDistAttr d =
          (*inferred)[cast<OpResult>(result).getResultNumber()].toAttr();
      auto type = cast<RankedTensorType>(trial[use->get()]);
      if (d && !d.isReplicated() && d != getTensorDist(type)) {
        give(use->get(), withTensorDist(type, d));
        retyped = true;
      }
    }
    if (retyped) {
      ignored.clear();
      inferred = infer(rule, operands, os);
    }
  }
  bool accepted = succeeded(inferred);
  for (auto [i, result] : llvm::enumerate(op->getResults()))
    if (accepted && isTensor(result) && !isUndecided(result))
      accepted =
          holdsAsDecided(op, result, (*inferred)[i],
                         cast<RankedTensorType>(typeOf(result)).getRank());
  chosen.clear();
  for (OpOperand *use : open)
    chosen.push_back(trial[use->get()]);
  return accepted;
}

/// Decides what `op`'s undecided operands can be told from: an edge into a
/// known value, or (an op with a rule whose known tensors are all
/// replicated and unencoded) replicated. False when neither tells.
bool Completion::guessFromEdgesOrReplicated(Operation *op,
                                            ArrayRef<OpOperand *> open) {
  // Edges: an undecided value passed to a known one takes its type.
  SmallVector<Edge> edges;
  collectEdges(op, edges);
  for (const Edge &edge : edges)
    if (isUndecided(edge.use->get()) && !isUndecided(edge.sink)) {
      decide(edge.use->get(), typeOf(edge.sink), nullptr);
      return true;
    }
  // Every tensor the op knows is replicated, left unencoded: what it leaves
  // open is replicated too, decided now, in program order, so that a later
  // op cannot pull it elsewhere (a replicated gradient made partial for one
  // use, and then completed for every other).
  auto knownTensor = [&](Value v) { return isTensor(v) && !isUndecided(v); };
  auto encoded = [&](Value v) { return static_cast<bool>(distOf(v)); };
  if (isa<DistributionRuleInterface>(op) && !meshOf(op) &&
      llvm::none_of(op->getOperands(), encoded) &&
      llvm::none_of(op->getResults(), encoded) &&
      (llvm::any_of(op->getOperands(), knownTensor) ||
       llvm::any_of(op->getResults(), knownTensor))) {
    for (OpOperand *use : open)
      if (isUndecided(use->get()))
        decide(use->get(), typeOf(use->get()), nullptr);
    return true;
  }
  return false;
}

bool Completion::guessOperands(Operation *op) {
  SmallVector<OpOperand *> open;
  for (OpOperand &use : op->getOpOperands())
    if (isUndecided(use.get()))
      open.push_back(&use);
  if (open.empty())
    return false;
  if (guessFromEdgesOrReplicated(op, open))
    return true;
  auto rule = dyn_cast<DistributionRuleInterface>(op);
  MeshAttr mesh = meshOf(op);
  if (!rule || !mesh)
    return false;
  SmallVector<SmallVector<TensorDistAttr>> candidates =
      guessCandidates(op, mesh);

  // First as the operands are, then with their partial sums completed, as
  // the forward step will (a quotient by a row sum of split columns).
  SmallVector<Type> asTheyAre = typesOf(op->getOperands());
  SmallVector<Type> completedPartials(asTheyAre);
  bool anyPartial = false;
  for (OpOperand &use : op->getOpOperands())
    if (TensorDistAttr d = distOf(use.get());
        d && d.isPartial() && !isUndecided(use.get())) {
      TensorDistAttr complete = d.dropPartial(d.getPartialAxes());
      completedPartials[use.getOperandNumber()] = withTensorDist(
          cast<RankedTensorType>(asTheyAre[use.getOperandNumber()]),
          complete.isReplicated() ? nullptr : complete);
      anyPartial = true;
    }
  for (bool completed : {false, true}) {
    if (completed && !anyPartial)
      continue;
    bool last = completed || !anyPartial;
    for (ArrayRef<TensorDistAttr> c : candidates) {
      SmallVector<Type> operands(completed ? completedPartials : asTheyAre);
      SmallVector<Type> chosen;
      bool accepted = tryCandidate(op, rule, open, c, operands, chosen);
      if (!accepted && (!last || c.data() != candidates.back().data()))
        continue;
      for (auto [use, type] : llvm::zip(open, chosen))
        if (isUndecided(use->get()))
          decide(use->get(), type, nullptr);
      return true;
    }
  }
  return false;
}

bool Completion::guess() {
  auto undecided = [&](Value v) { return isUndecided(v); };
  if (!mayGuessBuilt) {
    for (size_t i = 0; i < order.size(); ++i)
      mayGuess.insert(mayGuess.end(), i);
    mayGuessBuilt = true;
  }
  for (auto it = mayGuess.begin(); it != mayGuess.end();) {
    Operation *op = order[*it];
    if (llvm::none_of(op->getOperands(), undecided)) {
      it = mayGuess.erase(it);
      continue;
    }
    if (guessOperands(op))
      return true;
    ++it;
  }
  // Nothing decides what is left: it is replicated, in program order.
  auto made = [&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (llvm::any_of(block.getArguments(), undecided))
          return true;
    return llvm::any_of(op->getResults(), undecided);
  };
  while (replicateStart < order.size() && !made(order[replicateStart]))
    ++replicateStart;
  for (Operation *op : ArrayRef(order).drop_front(replicateStart)) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (isUndecided(arg)) {
            decide(arg, typeOf(arg), nullptr);
            return true;
          }
    for (Value r : op->getResults())
      if (isUndecided(r)) {
        decide(r, typeOf(r), nullptr);
        return true;
      }
  }
  return false;
}
