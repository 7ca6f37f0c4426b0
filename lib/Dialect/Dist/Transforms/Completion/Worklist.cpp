//===- Worklist.cpp - the worklist, its edges and visits ------------------===//

#include "Completion.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::completion;

MeshAttr Completion::meshOf(Operation *op) const {
  std::string ignored;
  llvm::raw_string_ostream os(ignored);
  FailureOr<MeshAttr> mesh = rules::commonMesh(typesOf(op->getOperands()),
                                               typesOf(op->getResults()), os);
  return succeeded(mesh) ? *mesh : MeshAttr();
}

static bool inMarkedFunction(Operation *op) {
  auto f = op->getParentOfType<FunctionOpInterface>();
  return f && f->hasAttr(DistDialect::kCompleteAttrName);
}

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
  setDecision(v, type);
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

/// `type` with encoding `dist`, unencoded when `dist` is replicated (the
/// local shape, which the ops were verified with, stays).
RankedTensorType completion::withDist(Type type, TensorDistAttr dist) {
  return withTensorDist(cast<RankedTensorType>(type),
                        dist && !dist.isReplicated() ? dist : nullptr);
}

void Completion::collectEdges(Operation *op, SmallVectorImpl<Edge> &edges) {
  size_t begin = edges.size();
  getForwardingEdges(op, symbols, edges);
  edges.erase(std::remove_if(edges.begin() + begin, edges.end(),
                             [](const Edge &e) { return !isTensor(e.sink); }),
              edges.end());
}

LogicalResult Completion::visitEdge(const Edge &edge) {
  Value source = edge.use->get();
  if (isUndecided(source))
    return success(); // Guessing may take it from the sink.
  if (isUndecided(edge.sink)) {
    decide(edge.sink, typeOf(source), origins.lookup(source));
    return success();
  }
  if (typeOf(source) == typeOf(edge.sink))
    return success();
  Operation *user = edge.use->getOwner();
  OpBuilder b(user);
  FailureOr<Value> r = reshard(b, user->getLoc(), source, typeOf(edge.sink));
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
      decide(result, typeOf(returned), origins.lookup(returned));
      continue;
    }
    if (typeOf(result) == typeOf(returned))
      continue;
    // The call's result was declared otherwise: the call returns what the
    // callee does, and a reshard after it gives the declared distribution.
    Type declared = typeOf(result);
    setDecision(result, typeOf(returned));
    if (failed(reshardUses(cast<OpResult>(result), declared)))
      return failure();
    remarkAt(call, "completion: reshard of result #")
        << cast<OpResult>(result).getResultNumber() << " from "
        << describe(distOf(result)) << ", which the callee returns, to "
        << describe(getTensorDist(declared)) << ", as it is declared";
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
/// reduce-scatter or be hoisted (hoistCompletion). A partial maximum (a
/// softmax's row maxima over a split vocabulary) is completed once too:
/// each of its uses would otherwise allreduce it again.
LogicalResult Completion::completeFanOut(Operation *op, OpResult result) {
  TensorDistAttr d = distOf(result);
  if (!d || !d.isPartial() || result.hasOneUse() || result.use_empty() ||
      !inMarkedFunction(op))
    return success();
  bool linear = llvm::all_of(
      d.getPartials(), [](auto p) { return rules::isLinearKind(p.second); });
  size_t uses = llvm::range_size(result.getUses());
  // Views (expand_shape, collapse_shape) of a sum that only they read pass
  // it on: the sum is completed before them, right after the op that
  // computed it (a matmul_grad's input gradient viewed as [b, s, h], where
  // --dist-matmul-grad-overlap finds the allreduce), and the views take the
  // complete value.
  OpResult made = result;
  SmallVector<OpResult> views;
  while (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(made.getOwner())) {
    auto source = dyn_cast<OpResult>(made.getOwner()->getOperand(0));
    if (!source || !source.hasOneUse() ||
        origins.lookup(source) != source.getOwner() ||
        distOf(source).getPartials() != d.getPartials())
      break;
    views.push_back(made);
    made = source;
  }
  for (OpResult view : views)
    setDecision(view, withDist(typeOf(view),
                               distOf(view).dropPartial(d.getPartialAxes())));
  TensorDistAttr madeDist = distOf(made);
  if (failed(reshardUses(
          made, withDist(typeOf(made),
                         madeDist.dropPartial(madeDist.getPartialAxes())))))
    return failure();
  remarkAt(made.getOwner(), "completion: reshard of result #")
      << made.getResultNumber() << " from " << describe(madeDist) << " to "
      << describe(madeDist.dropPartial(madeDist.getPartialAxes()))
      << " where it is made"
      << (views.empty() ? "" : ", before the views that pass it on") << ": its "
      << uses << " uses take the complete " << (linear ? "sum" : "value");
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
  auto distributed = [&](Value v) {
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
          decide(r, typeOf(r), op);
    return success();
  }
  if (!replicateUnknownOps)
    return errorAt(
        op, "has no distribution rule, so completion cannot tell what it "
            "computes on distributed tensors (--dist-complete="
            "\"replicate-unknown-ops=true\" completes its partial operands)");
  // Its types are written for the local shapes it is given: a split
  // operand gathered would not fit them, a partial one completed does.
  for (Value v : op->getOperands())
    if (TensorDistAttr d = distOf(v);
        d && !d.dropPartial(d.getPartialAxes()).isReplicated())
      return errorAt(op, "has no distribution rule and takes a split "
                         "tensor (")
             << describe(d)
             << "): replicating it would change the local shape the op is "
                "written for";
  OpBuilder b(op);
  for (OpOperand &use : op->getOpOperands()) {
    if (!distributed(use.get()))
      continue;
    auto from = cast<RankedTensorType>(typeOf(use.get()));
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
      decide(r, typeOf(r), op);
  return success();
}

/// A cast keeps the distribution (the check refuses one that changes it).
LogicalResult Completion::visitCast(tensor::CastOp castOp) {
  auto type = dyn_cast<RankedTensorType>(typeOf(castOp.getResult()));
  Value source = castOp.getSource();
  TensorDistAttr d = distOf(source);
  if (!type || !isKnown(source))
    return success();
  if (isUndecided(castOp.getResult())) {
    decide(castOp.getResult(),
           withTensorDist(type, d && !d.isReplicated() ? d : nullptr), castOp);
    return success();
  }
  // A source completion decided otherwise than the cast's written result
  // is resharded to it (a written source that disagrees stays for the
  // check to report).
  TensorDistAttr to = getTensorDist(type);
  if (!d || !to || d == to || !completed.contains(source) ||
      !inMarkedFunction(castOp))
    return success();
  std::optional<RankedTensorType> target =
      retyped(cast<RankedTensorType>(typeOf(source)), to,
              /*explicitReplicated=*/true);
  if (!target)
    return errorAt(castOp, "completion: the operand, ")
           << describe(d) << ", does not divide as the result's " << to;
  OpBuilder b(castOp);
  FailureOr<Value> r = reshard(b, castOp.getLoc(), source, *target);
  if (failed(r))
    return failure();
  remarkAt(castOp, "completion: reshard of operand #0 from ")
      << describe(d) << " to " << describe(to) << ": " << provenance(source)
      << ", and the cast's result is declared " << describe(to);
  castOp.getSourceMutable().set(*r);
  return success();
}

/// A reshard between undecided types changes what its local shapes say
/// (outside a marked function, an unencoded result is replicated).
LogicalResult Completion::visitReshard(ReshardOp r) {
  if (!isUndecided(r.getResult()) || !isKnown(r.getInput()))
    return success();
  auto in = cast<RankedTensorType>(typeOf(r.getInput()));
  TensorDistAttr from = distOf(r.getInput());
  if (!from) {
    // An unencoded operand is replicated, on the one mesh the function's
    // signature names if it names one: a layout's meeting point after a
    // value no encoding reaches (a whole lookup, replicated).
    auto func = r->getParentOfType<FunctionOpInterface>();
    std::string ignored;
    llvm::raw_string_ostream os(ignored);
    FailureOr<MeshAttr> mesh =
        func ? rules::commonMesh(func.getArgumentTypes(), func.getResultTypes(),
                                 os)
             : FailureOr<MeshAttr>(failure());
    if (failed(mesh) || !*mesh)
      return success();
    from = TensorDistAttr::getReplicated(*mesh, in.getRank());
  }
  auto out = cast<RankedTensorType>(typeOf(r.getResult()));
  std::optional<TensorDistAttr> d = reshardResultDist(in, out, from);
  if (!d)
    return errorAt(r, "completion: no distribution of the operand's "
                      "global tensor, ")
           << describe(from) << ", has the local shape of the result " << out;
  decide(r.getResult(), withTensorDist(out, *d), r);
  return success();
}

LogicalResult Completion::visit(Operation *op) {
  SmallVector<Edge> edges;
  collectEdges(op, edges);
  for (const Edge &edge : edges)
    if (failed(visitEdge(edge)))
      return failure();
  if (auto call = dyn_cast<CallOpInterface>(op))
    return visitCallResults(call);
  if (auto rule = dyn_cast<DistributionRuleInterface>(op))
    return visitRuleOp(op, rule);
  if (auto cast = dyn_cast<tensor::CastOp>(op))
    return visitCast(cast);
  if (auto r = dyn_cast<ReshardOp>(op); r && inMarkedFunction(op))
    return visitReshard(r);
  // A collective makes of its operand's distribution what it does.
  if (op->getNumResults() == 1 && isUndecided(op->getResult(0)) &&
      op->getNumOperands() && isKnown(op->getOperand(0)))
    if (std::optional<TensorDistAttr> d = collectiveResultDist(
            op, dyn_cast<RankedTensorType>(typeOf(op->getOperand(0))),
            dyn_cast<RankedTensorType>(typeOf(op->getResult(0))))) {
      // Collectives keep their operand's encodedness (replicated written
      // out when the operand has an encoding).
      auto type = cast<RankedTensorType>(typeOf(op->getResult(0)));
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
        decide(r, typeOf(r), op);
    return success();
  }
  if (movesOrMakes(op) || op->getNumRegions())
    return success();
  return visitOpWithoutRule(op);
}
