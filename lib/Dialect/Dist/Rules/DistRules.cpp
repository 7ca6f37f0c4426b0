//===- DistRules.cpp - distribution rules of ops --------------------------===//

#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/MatmulGeometry.h"
#include "dist/Dialect/Dist/IR/SignatureCache.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::rules;

//===----------------------------------------------------------------------===//
// Dist
//===----------------------------------------------------------------------===//

Dist Dist::of(Type type, MeshAttr mesh) {
  Dist d;
  d.mesh = mesh;
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (TensorDistAttr attr = getTensorDist(type)) {
    d.dims.assign(attr.getDimsMapping().begin(), attr.getDimsMapping().end());
    d.partial = attr.getPartials();
  } else if (tensor) {
    d.dims.assign(tensor.getRank(), -1);
  }
  return d;
}

std::optional<ReductionKind> Dist::partialKind(int64_t axis) const {
  for (auto [a, kind] : partial)
    if (a == axis)
      return kind;
  return std::nullopt;
}

std::string rules::axisName(MeshAttr mesh, int64_t axis) {
  std::string s = "axis " + std::to_string(axis);
  if (mesh && axis >= 0 && axis < static_cast<int64_t>(mesh.getNames().size()))
    s += " (" + mesh.getNames()[axis].getValue().str() + ")";
  return s;
}

LogicalResult Dist::verify(raw_ostream &whyNot) const {
  for (auto [i, a] : llvm::enumerate(dims)) {
    if (a < 0)
      continue;
    for (size_t j = i + 1; j < dims.size(); ++j)
      if (dims[j] == a) {
        whyNot << "mesh " << axisName(mesh, a) << " would split both dim " << i
               << " and dim " << j << " of the result";
        return failure();
      }
    if (partialKind(a)) {
      whyNot << "mesh " << axisName(mesh, a) << " would both split dim " << i
             << " of the result and leave it partial";
      return failure();
    }
  }
  return success();
}

TensorDistAttr Dist::toAttr() const {
  // Nothing is distributed: no encoding.
  if (!mesh)
    return TensorDistAttr();
  SmallVector<std::pair<int64_t, ReductionKind>> sorted(partial);
  llvm::sort(sorted, llvm::less_first());
  return TensorDistAttr::get(mesh, dims, sorted);
}

/// `d` if it verifies, else failure (and why).
static FailureOr<Dist> verified(Dist d, raw_ostream &whyNot) {
  if (failed(d.verify(whyNot)))
    return failure();
  return d;
}

FailureOr<MeshAttr> rules::commonMesh(TypeRange types, raw_ostream &whyNot) {
  return commonMesh(types, TypeRange(), whyNot);
}

bool rules::isLinearKind(ReductionKind kind) {
  return kind == ReductionKind::Sum || kind == ReductionKind::Avg;
}

//===----------------------------------------------------------------------===//
// Engines
//===----------------------------------------------------------------------===//

FailureOr<Dist> rules::inferContraction(MeshAttr mesh,
                                        ArrayRef<ContractionOperand> operands,
                                        ArrayRef<unsigned> resultLoops,
                                        raw_ostream &whyNot) {
  unsigned numLoops = 0;
  SmallVector<FactorOperand> factors;
  for (const ContractionOperand &o : operands) {
    FactorOperand f{o.type, {}};
    for (unsigned l : o.loops) {
      f.loops.push_back(l);
      numLoops = std::max(numLoops, l + 1);
    }
    factors.push_back(std::move(f));
  }
  FactorResult result;
  for (unsigned l : resultLoops) {
    result.loops.push_back(l);
    numLoops = std::max(numLoops, l + 1);
  }
  // A product is summed over its contracted loops, from nothing: no
  // accumulator.
  result.combiner = ReductionKind::Sum;
  // Linear in each operand: one partial sum or average passes.
  auto partials = [&](int64_t axis, ArrayRef<unsigned> holders,
                      ReductionKind kind,
                      ArrayRef<std::optional<ReductionKind>>,
                      MutableArrayRef<std::optional<ReductionKind>> kinds,
                      raw_ostream &why) -> LogicalResult {
    if (!isLinearKind(kind)) {
      why << "operand #" << holders.front() << " is partial ("
          << stringifyReductionKind(kind) << ") over mesh "
          << axisName(mesh, axis)
          << ", which does not pass through a contraction";
      return failure();
    }
    if (holders.size() > 1) {
      why << "two operands are partial over mesh " << axisName(mesh, axis)
          << ": the product of two sums is not the sum of the local products";
      return failure();
    }
    kinds[0] = kind;
    return success();
  };
  return inferFactor(mesh, numLoops, factors, result, partials, whyNot);
}

/// The factor form's first step: each loop's mesh axis, from the operand
/// dims that run over it (all alike), and each operand's distribution.
static LogicalResult assignLoopAxes(MeshAttr mesh, unsigned numLoops,
                                    ArrayRef<rules::FactorOperand> operands,
                                    SmallVectorImpl<int64_t> &loopAxis,
                                    SmallVectorImpl<Dist> &ds,
                                    raw_ostream &whyNot) {
  auto describe = [&](int64_t axis) {
    if (axis < 0)
      whyNot << "replicated";
    else
      whyNot << "split over mesh " << axisName(mesh, axis);
  };
  SmallVector<int> loopOwner(numLoops, -1);
  for (auto [i, o] : llvm::enumerate(operands)) {
    Dist d = Dist::of(o.type, mesh);
    if (o.loops.size() != d.dims.size()) {
      whyNot << "operand #" << i << " has " << d.dims.size()
             << " dims but the rule maps " << o.loops.size();
      return failure();
    }
    for (auto [dim, loop] : llvm::enumerate(o.loops)) {
      int64_t axis = d.dims[dim];
      if (loop >= static_cast<int64_t>(numLoops)) {
        whyNot << "dim " << dim << " of operand #" << i << " runs over loop "
               << loop << " of " << numLoops;
        return failure();
      }
      if (loop < 0) {
        if (axis >= 0) {
          whyNot << "dim " << dim << " of operand #" << i
                 << " is not indexed by one loop, so it cannot be split (it "
                    "is split over mesh "
                 << axisName(mesh, axis) << ")";
          return failure();
        }
        continue;
      }
      int &owner = loopOwner[loop];
      if (owner < 0) {
        owner = i;
        loopAxis[loop] = axis;
      } else if (loopAxis[loop] != axis) {
        whyNot << "the dim that operands #" << owner << " and #" << i
               << " share is ";
        describe(loopAxis[loop]);
        whyNot << " in operand #" << owner << " but ";
        describe(axis);
        whyNot << " in operand #" << i;
        return failure();
      }
    }
    ds.push_back(std::move(d));
  }

  return success();
}

/// The factor form's second step: each result dim takes its loop's axis,
/// and a split loop a result reduces over makes it partial with its
/// combiner.
static LogicalResult splitResults(MeshAttr mesh, unsigned numLoops,
                                  ArrayRef<rules::FactorResult> results,
                                  ArrayRef<int64_t> loopAxis, ArrayRef<Dist> ds,
                                  MutableArrayRef<Dist> out,
                                  raw_ostream &whyNot) {
  for (auto [r, result] : llvm::enumerate(results)) {
    out[r].mesh = mesh;
    for (int64_t loop : result.loops) {
      if (loop < 0 || loop >= static_cast<int64_t>(numLoops)) {
        whyNot << "result #" << r << " has a dim on loop " << loop << " of "
               << numLoops;
        return failure();
      }
      out[r].dims.push_back(loopAxis[loop]);
    }
    for (unsigned loop = 0; loop < numLoops; ++loop) {
      int64_t axis = loopAxis[loop];
      if (axis < 0 || llvm::is_contained(result.loops, loop))
        continue;
      if (!result.combiner) {
        whyNot << "result #" << r << " reduces over loop " << loop
               << ", which is split over mesh " << axisName(mesh, axis)
               << ", with a combination the rule cannot tell";
        return failure();
      }
      bool idempotent = *result.combiner == ReductionKind::Max ||
                        *result.combiner == ReductionKind::Min;
      if (result.init && *result.init < ds.size() && !result.initIsIdentity &&
          !idempotent &&
          ds[*result.init].partialKind(axis) != result.combiner) {
        whyNot << "result #" << r << " reduces over loop " << loop
               << ", which is split over mesh " << axisName(mesh, axis)
               << ", into an initial value that is neither partial nor the "
                  "identity of its "
               << stringifyReductionKind(*result.combiner)
               << ": every process would count it once";
        return failure();
      }
      if (!out[r].partialKind(axis))
        out[r].partial.emplace_back(axis, *result.combiner);
    }
  }

  return success();
}

/// The factor form's last step: the operands partial over each mesh axis
/// pass to the results as `partials` says.
static LogicalResult passPartialOperands(MeshAttr mesh, ArrayRef<Dist> ds,
                                         rules::PartialOperandRule partials,
                                         MutableArrayRef<Dist> out,
                                         raw_ostream &whyNot) {
  // Partial operands, axis by axis.
  SmallVector<int64_t> axes;
  for (const Dist &d : ds)
    for (auto [axis, kind] : d.partial)
      if (!llvm::is_contained(axes, axis))
        axes.push_back(axis);
  llvm::sort(axes);
  for (int64_t axis : axes) {
    SmallVector<unsigned> holders;
    std::optional<ReductionKind> kind;
    for (auto [i, d] : llvm::enumerate(ds))
      if (std::optional<ReductionKind> k = d.partialKind(axis)) {
        if (kind && *kind != *k) {
          whyNot << "operands are partial over mesh " << axisName(mesh, axis)
                 << " with different reductions ("
                 << stringifyReductionKind(*kind) << " and "
                 << stringifyReductionKind(*k) << ")";
          return failure();
        }
        kind = k;
        holders.push_back(i);
      }
    SmallVector<std::optional<ReductionKind>> kinds(out.size()), fromLoops;
    for (const Dist &d : out)
      fromLoops.push_back(d.partialKind(axis));
    if (failed(partials(axis, holders, *kind, fromLoops, kinds, whyNot)))
      return failure();
    for (auto [r, k] : llvm::enumerate(kinds)) {
      if (!k)
        continue;
      if (std::optional<ReductionKind> split = out[r].partialKind(axis)) {
        // A split reduction loop into a partial accumulator: one pending
        // reduction, if it is the same.
        if (*split == *k)
          continue;
        whyNot << "result #" << r << " would be partial over mesh "
               << axisName(mesh, axis) << " with both "
               << stringifyReductionKind(*split) << " and "
               << stringifyReductionKind(*k);
        return failure();
      }
      out[r].partial.emplace_back(axis, *k);
    }
  }
  return success();
}

FailureOr<SmallVector<Dist>>
rules::inferFactors(MeshAttr mesh, unsigned numLoops,
                    ArrayRef<FactorOperand> operands,
                    ArrayRef<FactorResult> results, PartialOperandRule partials,
                    raw_ostream &whyNot) {
  SmallVector<int64_t> loopAxis(numLoops, -1);
  SmallVector<Dist> ds;
  SmallVector<Dist> out(results.size());
  if (failed(assignLoopAxes(mesh, numLoops, operands, loopAxis, ds, whyNot)) ||
      failed(
          splitResults(mesh, numLoops, results, loopAxis, ds, out, whyNot)) ||
      failed(passPartialOperands(mesh, ds, partials, out, whyNot)))
    return failure();
  for (Dist &d : out)
    if (failed(d.verify(whyNot)))
      return failure();
  return out;
}

FailureOr<Dist> rules::inferFactor(MeshAttr mesh, unsigned numLoops,
                                   ArrayRef<FactorOperand> operands,
                                   const FactorResult &result,
                                   PartialOperandRule partials,
                                   raw_ostream &whyNot) {
  FailureOr<SmallVector<Dist>> r =
      inferFactors(mesh, numLoops, operands, {result}, partials, whyNot);
  if (failed(r))
    return failure();
  return std::move(r->front());
}

/// How the operands of an elementwise op of `linearity` that are partial
/// (with `kind`) over mesh axis `axis` pass to its result; `numTensors` is
/// its number of tensor operands, `holders` those partial.
static LogicalResult passElementwisePartials(
    Linearity linearity, size_t numTensors, MeshAttr mesh, int64_t axis,
    ArrayRef<unsigned> holders, ReductionKind kind,
    MutableArrayRef<std::optional<ReductionKind>> kinds, raw_ostream &whyNot) {
  std::string name = axisName(mesh, axis);
  // `operand` is partial with `kind`, which cannot pass: `why`.
  auto refuse = [&](StringRef operand, StringRef why) {
    whyNot << operand << " is partial (" << stringifyReductionKind(kind)
           << ") over mesh " << name << why;
    return failure();
  };
  switch (linearity) {
  case Linearity::Additive:
    if (holders.size() != numTensors || !isLinearKind(kind)) {
      whyNot << "only some operands are partial over mesh " << name
             << " (or not as a sum): the others would be added once per "
                "process";
      return failure();
    }
    break;
  case Linearity::Multiplicative:
  case Linearity::Dividend:
    if (kind == ReductionKind::Prod) {
      if (holders.size() != numTensors) {
        whyNot << "only some operands are partial (prod) over mesh " << name
               << ": the others would be multiplied in once per process";
        return failure();
      }
      break;
    }
    if (holders.size() > 1) {
      whyNot << "two operands are partial over mesh " << name
             << ": the product of two sums is not the sum of the local "
                "products";
      return failure();
    }
    if (!isLinearKind(kind))
      return refuse("an operand", ", which does not pass through a product");
    if (linearity == Linearity::Dividend && holders.front() != 0) {
      whyNot << "the divisor is partial over mesh " << name
             << ": a quotient is not linear in its divisor";
      return failure();
    }
    break;
  case Linearity::Maximum:
  case Linearity::Minimum: {
    ReductionKind same = linearity == Linearity::Maximum ? ReductionKind::Max
                                                         : ReductionKind::Min;
    if (kind != same)
      return refuse("an operand", (", which does not pass through a " +
                                   stringifyReductionKind(same) +
                                   ": reduce it first (dist.allreduce)")
                                      .str());
    break;
  }
  case Linearity::Linear:
    if (!isLinearKind(kind))
      return refuse("the operand", ", which does not pass through this op");
    break;
  case Linearity::ExactCast:
    break;
  case Linearity::MonotoneCast:
    if (kind != ReductionKind::Max && kind != ReductionKind::Min)
      return refuse("the operand",
                    ": rounding does not commute with the pending reduction");
    break;
  case Linearity::Nonlinear:
    whyNot << "an operand is partial over mesh " << name
           << " and the op is not linear: reduce it first (dist.allreduce)";
    return failure();
  }
  kinds.front() = kind;
  return success();
}

FailureOr<Dist> rules::inferElementwise(MeshAttr mesh, TypeRange operands,
                                        Linearity linearity,
                                        raw_ostream &whyNot) {
  // The factor form: one parallel loop per dim, every tensor operand and
  // the result over all of them; what is left is how partial operands pass.
  SmallVector<FactorOperand> factors;
  int64_t rank = -1;
  for (Type t : operands) {
    auto type = dyn_cast<RankedTensorType>(t);
    if (!type)
      continue;
    if (rank < 0)
      rank = type.getRank();
    if (type.getRank() != rank) {
      whyNot << "its tensor operands have ranks " << rank << " and "
             << type.getRank();
      return failure();
    }
    factors.push_back({t, llvm::to_vector(llvm::seq<int64_t>(0, rank))});
  }
  if (rank < 0) {
    Dist scalar;
    scalar.mesh = mesh;
    return scalar;
  }
  size_t numTensors = factors.size();
  FactorResult result{llvm::to_vector(llvm::seq<int64_t>(0, rank)),
                      std::nullopt, std::nullopt};
  auto partials = [&](int64_t axis, ArrayRef<unsigned> holders,
                      ReductionKind kind,
                      ArrayRef<std::optional<ReductionKind>>,
                      MutableArrayRef<std::optional<ReductionKind>> kinds,
                      raw_ostream &whyNot) {
    return passElementwisePartials(linearity, numTensors, mesh, axis, holders,
                                   kind, kinds, whyNot);
  };
  return inferFactor(mesh, rank, factors, result, partials, whyNot);
}

//===----------------------------------------------------------------------===//
// The check
//===----------------------------------------------------------------------===//

void rules::appendInherentAttributes(Operation *op,
                                     SmallVectorImpl<const void *> &key) {
  for (StringAttr name : op->getName().getAttributeNames()) {
    std::optional<Attribute> value = op->getInherentAttr(name.getValue());
    key.push_back(value ? value->getAsOpaquePointer() : nullptr);
  }
}

/// Whether `axis` of `mesh` has more than one process: a partial value over
/// an axis of size 1 is already complete.
static bool isLive(MeshAttr mesh, int64_t axis) {
  return mesh && mesh.getAxisSize(axis) > 1;
}

static std::optional<ReductionKind>
kindIn(ArrayRef<std::pair<int64_t, ReductionKind>> partials, int64_t axis) {
  for (auto [a, k] : partials)
    if (a == axis)
      return k;
  return std::nullopt;
}

/// Whether `declared` (maybe no encoding) holds what `inferred` says: equal
/// distributions, or extra max/min partial axes on which the value is not
/// split (reducing equal values with max or min is the identity). Partial
/// axes of size 1 do not count. No attribute is made: this runs for every
/// dist op each time the IR is verified.
bool rules::holds(TensorDistAttr declared, const Dist &inferred, size_t rank) {
  ArrayRef<int64_t> declaredDims =
      declared ? declared.getDimsMapping() : ArrayRef<int64_t>();
  ArrayRef<int64_t> inferredDims =
      inferred.mesh ? ArrayRef<int64_t>(inferred.dims) : ArrayRef<int64_t>();
  for (size_t d = 0; d < rank; ++d) {
    int64_t a = d < declaredDims.size() ? declaredDims[d] : -1;
    int64_t b = d < inferredDims.size() ? inferredDims[d] : -1;
    if (a != b)
      return false;
  }
  if (declared && inferred.mesh && declared.getMesh() != inferred.mesh &&
      (declared.isPartial() ||
       llvm::any_of(declaredDims, [](int64_t a) { return a >= 0; })))
    return false;
  // Owned: getPartials() builds the list.
  SmallVector<std::pair<int64_t, ReductionKind>> declaredPartials;
  if (declared)
    declaredPartials = declared.getPartials();
  MeshAttr declaredMesh = declared ? declared.getMesh() : MeshAttr();
  if (inferred.mesh)
    for (auto [axis, kind] : inferred.partial)
      if (isLive(inferred.mesh, axis) && kindIn(declaredPartials, axis) != kind)
        return false;
  for (auto [axis, kind] : declaredPartials) {
    if (!isLive(declaredMesh, axis))
      continue;
    bool inInferred = inferred.mesh && isLive(inferred.mesh, axis) &&
                      kindIn(inferred.partial, axis);
    if (!inInferred && kind != ReductionKind::Max && kind != ReductionKind::Min)
      return false;
  }
  return true;
}

/// What would make `declared` hold `inferred`, if it is a reduction.
static void suggestFix(InFlightDiagnostic &diag, TensorDistAttr declared,
                       const Dist &inferred) {
  if (!inferred.mesh)
    return;
  SmallVector<int64_t> axes;
  std::optional<ReductionKind> kind;
  SmallVector<std::pair<int64_t, ReductionKind>> sorted(inferred.partial);
  llvm::sort(sorted, llvm::less_first());
  for (auto [axis, k] : sorted) {
    if (!isLive(inferred.mesh, axis) ||
        (declared && declared.getPartialKind(axis)))
      continue;
    if (kind && *kind != k)
      return;
    kind = k;
    axes.push_back(axis);
  }
  if (axes.empty()) {
    bool sameDims =
        declared && declared.getDimsMapping().size() == inferred.dims.size();
    for (auto [a, b] :
         llvm::zip(declared ? declared.getDimsMapping() : ArrayRef<int64_t>(),
                   inferred.dims))
      sameDims &= a == b;
    diag << (sameDims ? ": the partial axes differ"
                      : ": the dims mapping differs")
         << " (declare it as computed, or redistribute)";
    return;
  }
  diag << ": partial over ";
  llvm::interleave(
      axes, diag, [&](int64_t a) { diag << axisName(inferred.mesh, a); }, ", ");
  diag << ": insert dist.allreduce ... axes = [";
  llvm::interleaveComma(axes, diag);
  diag << "] reduce = " << stringifyReductionKind(*kind);
}

static LogicalResult checkRule(Operation *op, DistributionRuleInterface rule);

bool rules::isAwaitingCompletion(Operation *op) {
  auto unencoded = [](Type t) {
    return isa<RankedTensorType>(t) && !getTensorDist(t);
  };
  if (llvm::none_of(op->getOperandTypes(), unencoded) &&
      llvm::none_of(op->getResultTypes(), unencoded))
    return false;
  auto f = op->getParentOfType<FunctionOpInterface>();
  return f && f->hasAttr(DistDialect::kCompleteAttrName);
}

LogicalResult rules::requireCompleted(Operation *root) {
  WalkResult marked = root->walk([](Operation *op) {
    if (isa<ConstraintOp>(op)) {
      op->emitOpError("is for completion, which consumes it: run "
                      "--dist-complete first");
      return WalkResult::interrupt();
    }
    auto f = dyn_cast<FunctionOpInterface>(op);
    if (!f || !f->hasAttr(DistDialect::kCompleteAttrName))
      return WalkResult::advance();
    f->emitOpError("is marked '")
        << DistDialect::kCompleteAttrName
        << "': its distributions are not complete (run --dist-complete)";
    return WalkResult::interrupt();
  });
  return failure(marked.wasInterrupted());
}

LogicalResult rules::verifyDistributionRule(Operation *op) {
  auto rule = dyn_cast<DistributionRuleInterface>(op);
  if (!rule)
    return success();
  auto encoded = [](Type t) { return static_cast<bool>(getTensorDist(t)); };
  if (llvm::none_of(op->getOperandTypes(), encoded) &&
      llvm::none_of(op->getResultTypes(), encoded))
    return success();
  if (isAwaitingCompletion(op))
    return success();
  // The rule reads the types and the attributes the op names.
  auto *dialect = op->getContext()->getLoadedDialect<DistDialect>();
  if (!dialect)
    return checkRule(op, rule);
  SmallVector<const void *, 16> key = opSignature(
      op, SignatureKind::DistributionRule, /*withProperties=*/false);
  rule.appendRuleAttributes(key);
  SignatureCache &cache = dialect->getSignatureCache();
  if (cache.contains(key))
    return success();
  if (failed(checkRule(op, rule)))
    return failure();
  cache.insert(key);
  return success();
}

/// Paddle's form of a logical lookup gradient over split ids: declared
/// without partial sums the rule leaves (each data-parallel replica's
/// out_grad being the gradient of its own mean loss).
/// --dist-parallel-embedding makes that reduction when it lowers a
/// row-split table (a sum, and over the batch axis a 1/size scale), so the
/// form holds only for such a table; elsewhere nothing would reduce it.
static bool isDataParallelAverage(Operation *op, TensorDistAttr declared,
                                  const Dist &computed, size_t rank) {
  auto grad = dyn_cast<EmbeddingGradOp>(op);
  if (!grad || !declared || computed.partial.empty())
    return false;
  TensorDistAttr table = getTensorDist(grad.getWeight().getType());
  if (!table || table.getDimsMapping()[0] < 0)
    return false;
  Dist reduced = computed;
  llvm::erase_if(reduced.partial, [&](const auto &axisAndKind) {
    return axisAndKind.second == ReductionKind::Sum &&
           !declared.getPartialKind(axisAndKind.first);
  });
  return holds(declared, reduced, rank);
}

bool rules::holdsResult(Operation *op, TensorDistAttr declared,
                        const Dist &computed, size_t rank) {
  return holds(declared, computed, rank) ||
         isDataParallelAverage(op, declared, computed, rank);
}

/// verifyDistributionRule without the cache.
static LogicalResult checkRule(Operation *op, DistributionRuleInterface rule) {
  std::string why;
  llvm::raw_string_ostream os(why);
  FailureOr<SmallVector<Dist>> inferred = rule.inferResultDistributions(os);
  if (failed(inferred))
    return op->emitOpError("has no correct distribution: ") << why;
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    TensorDistAttr declared = getTensorDist(result.getType());
    const Dist &computed = (*inferred)[i];
    if (!type || (!declared && !computed.mesh))
      continue;
    if (holdsResult(op, declared, computed, type.getRank()))
      continue;
    InFlightDiagnostic diag = op->emitOpError("result #")
                              << i << " is declared ";
    if (declared)
      diag << declared;
    else
      diag << "without a distribution (replicated)";
    diag << " but computes ";
    if (computed.mesh)
      diag << computed.toAttr();
    else
      diag << "a replicated value";
    suggestFix(diag, declared, computed);
    return failure();
  }
  return success();
}

FailureOr<SmallVector<TensorDistAttr>>
rules::inferResultAttrs(Operation *op, raw_ostream &whyNot) {
  auto rule = dyn_cast<DistributionRuleInterface>(op);
  if (!rule) {
    whyNot << "'" << op->getName() << "' has no distribution rule";
    return failure();
  }
  FailureOr<SmallVector<Dist>> inferred = rule.inferResultDistributions(whyNot);
  if (failed(inferred))
    return failure();
  SmallVector<TensorDistAttr> attrs;
  for (const Dist &d : *inferred)
    attrs.push_back(d.toAttr());
  return attrs;
}

//===----------------------------------------------------------------------===//
// The dist ops' rules
//===----------------------------------------------------------------------===//

/// The mesh of `op`'s encoded operands and results.
FailureOr<MeshAttr> rules::commonMesh(Operation *op, raw_ostream &whyNot) {
  return commonMesh(op->getOperandTypes(), op->getResultTypes(), whyNot);
}

FailureOr<MeshAttr> rules::commonMesh(TypeRange operandTypes,
                                      TypeRange resultTypes,
                                      raw_ostream &whyNot) {
  MeshAttr mesh;
  for (TypeRange types : {operandTypes, resultTypes})
    for (Type t : types)
      if (TensorDistAttr d = getTensorDist(t)) {
        if (mesh && mesh != d.getMesh()) {
          whyNot << "its tensors are distributed on different meshes, " << mesh
                 << " and " << d.getMesh();
          return failure();
        }
        mesh = d.getMesh();
      }
  return mesh;
}

namespace {
/// The loops of `op(x) * op(y)`: batch loops (the result's), m, n, k.
struct MatmulLoops {
  SmallVector<unsigned> x, y, out;
};
} // namespace

static MatmulLoops matmulLoops(unsigned xRank, unsigned yRank, unsigned outRank,
                               bool tx, bool ty) {
  unsigned batch = matmul::batchRank(outRank);
  unsigned m = batch, n = batch + 1, k = batch + 2;
  MatmulLoops loops;
  loops.x = matmul::operandLoops(xRank, tx, batch, m, k);
  loops.y = matmul::operandLoops(yRank, ty, batch, k, n);
  for (unsigned l = 0; l < batch + 2; ++l)
    loops.out.push_back(l);
  return loops;
}

// The rules of the dist ops read their types only, but for a matmul's
// transposes.
void MatmulOp::appendRuleAttributes(SmallVectorImpl<const void *> &key) {
  key.push_back(reinterpret_cast<const void *>(
      uintptr_t(getTransposeX()) | uintptr_t(getTransposeY()) << 1));
}
void MatmulGradOp::appendRuleAttributes(SmallVectorImpl<const void *> &key) {
  key.push_back(reinterpret_cast<const void *>(
      uintptr_t(getTransposeX()) | uintptr_t(getTransposeY()) << 1));
}
void EmbeddingOp::appendRuleAttributes(SmallVectorImpl<const void *> &) {}
void EmbeddingGradOp::appendRuleAttributes(SmallVectorImpl<const void *> &) {}
void CEmbeddingOp::appendRuleAttributes(SmallVectorImpl<const void *> &) {}
void CEmbeddingGradOp::appendRuleAttributes(SmallVectorImpl<const void *> &) {}
void DropoutOp::appendRuleAttributes(SmallVectorImpl<const void *> &) {}
void ScaleOp::appendRuleAttributes(SmallVectorImpl<const void *> &) {}
void SgdOp::appendRuleAttributes(SmallVectorImpl<const void *> &) {}
void AdamWOp::appendRuleAttributes(SmallVectorImpl<const void *> &) {}
void CheckFiniteAndUnscaleOp::appendRuleAttributes(
    SmallVectorImpl<const void *> &) {}

/// The one result `infer(mesh)` gives on the common mesh of the types a
/// rule is given, checked: the shape of the matmul's and every lookup's
/// rule.
template <typename Infer>
static FailureOr<SmallVector<Dist>>
oneResult(TypeRange operandTypes, TypeRange resultTypes, raw_ostream &whyNot,
          Infer infer) {
  FailureOr<MeshAttr> mesh = commonMesh(operandTypes, resultTypes, whyNot);
  if (failed(mesh))
    return failure();
  FailureOr<Dist> inferred = infer(*mesh);
  if (failed(inferred))
    return failure();
  FailureOr<Dist> r = verified(std::move(*inferred), whyNot);
  if (failed(r))
    return failure();
  return SmallVector<Dist>{std::move(*r)};
}

/// The loops of a matmul or matmul_grad `op` whose product is `out` (the
/// ranks are the op's, whatever types the rule is given).
template <typename OpTy>
static MatmulLoops loopsOf(OpTy op, RankedTensorType out) {
  return matmulLoops(op.getX().getType().getRank(),
                     op.getY().getType().getRank(), out.getRank(),
                     op.getTransposeX(), op.getTransposeY());
}

FailureOr<SmallVector<Dist>>
MatmulOp::inferResultDistributions(TypeRange operandTypes,
                                   TypeRange resultTypes, raw_ostream &whyNot) {
  return oneResult(operandTypes, resultTypes, whyNot, [&](MeshAttr mesh) {
    MatmulLoops loops = loopsOf(*this, getResult().getType());
    return inferContraction(mesh,
                            {{given(operandTypes, getXMutable()), loops.x},
                             {given(operandTypes, getYMutable()), loops.y}},
                            loops.out, whyNot);
  });
}

FailureOr<SmallVector<Dist>> MatmulGradOp::inferResultDistributions(
    TypeRange operandTypes, TypeRange resultTypes, raw_ostream &whyNot) {
  FailureOr<MeshAttr> mesh = commonMesh(operandTypes, resultTypes, whyNot);
  if (failed(mesh))
    return failure();
  MatmulLoops loops = loopsOf(*this, getOutGrad().getType());
  Type x = given(operandTypes, getXMutable()),
       y = given(operandTypes, getYMutable()),
       outGrad = given(operandTypes, getOutGradMutable());
  // dX contracts out_grad with y over what x lacks; dY contracts x with
  // out_grad over what y lacks (k, and batch dims a 2-D y broadcast over).
  std::string dxWhy, dyWhy;
  llvm::raw_string_ostream dxOs(dxWhy), dyOs(dyWhy);
  FailureOr<Dist> dx = inferContraction(
      *mesh, {{outGrad, loops.out}, {y, loops.y}}, loops.x, dxOs);
  if (failed(dx)) {
    whyNot << "x_grad: " << dxWhy;
    return failure();
  }
  FailureOr<Dist> dy = inferContraction(
      *mesh, {{x, loops.x}, {outGrad, loops.out}}, loops.y, dyOs);
  if (failed(dy)) {
    whyNot << "y_grad: " << dyWhy;
    return failure();
  }
  return SmallVector<Dist>{std::move(*dx), std::move(*dy)};
}

/// A lookup's partial operands (the table, out_grad) pass to its one
/// result as sums do: a lookup and its gradient are linear in them.
static LogicalResult
passPartial(int64_t, ArrayRef<unsigned>, ReductionKind kind,
            ArrayRef<std::optional<ReductionKind>>,
            MutableArrayRef<std::optional<ReductionKind>> kinds,
            raw_ostream &) {
  kinds.front() = kind;
  return success();
}

/// The factor form of a lookup, as a contraction with the ids' one-hot
/// rows: loops over the ids' dims, the table's rows (v) and columns (h);
/// out[ids..., h] = sum over v of onehot(ids)[ids..., v] * table[v, h]. A
/// row-split table leaves the rows of other shards zero: a partial sum over
/// the axis that splits them (c_embedding's). The ids are integers: a
/// partial id means nothing; a partial table passes as a sum does.
static FailureOr<Dist> lookupRows(MeshAttr mesh, Type ids, Type weight,
                                  raw_ostream &whyNot) {
  Dist i = Dist::of(ids, mesh), w = Dist::of(weight, mesh);
  if (!isa<RankedTensorType>(ids) || !isa<RankedTensorType>(weight) ||
      w.dims.size() != 2) {
    whyNot << "the table must be a 2-D tensor";
    return failure();
  }
  if (!i.partial.empty()) {
    whyNot << "the ids are partial; an id must be a whole value";
    return failure();
  }
  for (auto [axis, kind] : w.partial)
    if (!isLinearKind(kind)) {
      whyNot << "the table is partial (" << stringifyReductionKind(kind)
             << ") over mesh " << axisName(mesh, axis)
             << ", which does not pass through a lookup";
      return failure();
    }
  if (w.dims[0] >= 0 && llvm::is_contained(i.dims, w.dims[0])) {
    whyNot << "mesh " << axisName(mesh, w.dims[0])
           << " splits both the table's rows and the ids";
    return failure();
  }
  int64_t rank = i.dims.size(), v = rank, h = rank + 1;
  FactorOperand idsOp{ids, llvm::to_vector(llvm::seq<int64_t>(0, rank))};
  FactorOperand table{weight, {v, h}};
  FactorResult out{llvm::to_vector(llvm::seq<int64_t>(0, rank)),
                   ReductionKind::Sum, std::nullopt};
  out.loops.push_back(h);
  // Only the table can be partial here (lookupRows refused the rest).
  return inferFactor(mesh, rank + 2, {idsOp, table}, out, passPartial, whyNot);
}

/// The lookup of the whole table (the logical ops): the factor form without
/// the row axis's pending sum, which --dist-parallel-embedding adds.
static FailureOr<Dist> wholeLookup(MeshAttr mesh, Type ids, Type weight,
                                   raw_ostream &whyNot) {
  // How the rows are split does not matter to the whole lookup: it is
  // computed on a table whose rows are not.
  auto table = dyn_cast<RankedTensorType>(weight);
  if (TensorDistAttr d = table ? getTensorDist(table) : nullptr;
      d && d.getDimsMapping().size() == 2 && d.getMeshAxis(0) >= 0) {
    SmallVector<int64_t> dims(d.getDimsMapping());
    dims[0] = -1;
    weight = withTensorDist(
        table, TensorDistAttr::get(d.getMesh(), dims, d.getPartials()));
  }
  return lookupRows(mesh, ids, weight, whyNot);
}

/// Checks that out_grad is distributed as the rows it is the gradient of.
static LogicalResult checkOutGrad(MeshAttr mesh, const Dist &rows, Type outGrad,
                                  raw_ostream &whyNot) {
  Dist g = Dist::of(outGrad, mesh);
  if (g.dims != rows.dims) {
    whyNot << "out_grad's dims mapping [";
    llvm::interleaveComma(g.dims, whyNot);
    whyNot << "] differs from the looked-up rows' [";
    llvm::interleaveComma(rows.dims, whyNot);
    whyNot << "]";
    return failure();
  }
  return success();
}

/// The factor form of a lookup's gradient: dtable[v, h] = sum over the ids'
/// dims of onehot(ids)[ids..., v] * out_grad[ids..., h]. A split ids dim
/// leaves each process the rows of its own ids: a partial sum over its
/// axis; out_grad's partial sums pass. The logical gradient and its shard's
/// are alike here: a row-split table only changes which rows a process
/// holds, never whose contributions they are.
static FailureOr<Dist> lookupGrad(MeshAttr mesh, Type ids, Type weight,
                                  Type outGrad, raw_ostream &whyNot) {
  FailureOr<Dist> rows = wholeLookup(mesh, ids, weight, whyNot);
  if (failed(rows) || failed(checkOutGrad(mesh, *rows, outGrad, whyNot)))
    return failure();
  Dist i = Dist::of(ids, mesh);
  // A process's rows would need the other processes' ids.
  if (Dist w = Dist::of(weight, mesh);
      w.dims[0] >= 0 && llvm::is_contained(i.dims, w.dims[0])) {
    whyNot << "mesh " << axisName(mesh, w.dims[0])
           << " splits both the table's rows and the ids";
    return failure();
  }
  int64_t rank = i.dims.size(), v = rank, h = rank + 1;
  auto loops = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  SmallVector<int64_t> gradLoops(loops);
  gradLoops.push_back(h);
  // The table says how its rows and columns are split.
  FactorOperand idsOp{ids, loops}, table{weight, {v, h}},
      grad{outGrad, gradLoops};
  FactorResult out{{v, h}, ReductionKind::Sum, std::nullopt};
  // The table is read for its distribution only: its partial sums (which
  // the lookup passes) are not the gradient's.
  Dist w = Dist::of(weight, mesh);
  RankedTensorType tableType = cast<RankedTensorType>(weight);
  table.type = withTensorDist(
      tableType, w.partial.empty() ? getTensorDist(tableType)
                                   : TensorDistAttr::get(mesh, w.dims));
  return inferFactor(mesh, rank + 2, {idsOp, table, grad}, out, passPartial,
                     whyNot);
}

FailureOr<SmallVector<Dist>> EmbeddingOp::inferResultDistributions(
    TypeRange operandTypes, TypeRange resultTypes, raw_ostream &whyNot) {
  // The logical lookup of the whole table: a row-split table adds no
  // partial axis (--dist-parallel-embedding inserts that communication).
  return oneResult(operandTypes, resultTypes, whyNot, [&](MeshAttr mesh) {
    return wholeLookup(mesh, given(operandTypes, getIdsMutable()),
                       given(operandTypes, getWeightMutable()), whyNot);
  });
}

FailureOr<SmallVector<Dist>> CEmbeddingOp::inferResultDistributions(
    TypeRange operandTypes, TypeRange resultTypes, raw_ostream &whyNot) {
  // One row shard: ids of other shards give zero rows, so the result is a
  // partial sum over the axis that splits the rows.
  return oneResult(operandTypes, resultTypes, whyNot, [&](MeshAttr mesh) {
    return lookupRows(mesh, given(operandTypes, getIdsMutable()),
                      given(operandTypes, getWeightMutable()), whyNot);
  });
}

/// The rule of a lookup's gradient `op` over the types it is given.
template <typename LookupGradOp>
static FailureOr<SmallVector<Dist>>
lookupGradRule(LookupGradOp op, TypeRange operandTypes, TypeRange resultTypes,
               raw_ostream &whyNot) {
  return oneResult(operandTypes, resultTypes, whyNot, [&](MeshAttr mesh) {
    return lookupGrad(mesh, given(operandTypes, op.getIdsMutable()),
                      given(operandTypes, op.getWeightMutable()),
                      given(operandTypes, op.getOutGradMutable()), whyNot);
  });
}

FailureOr<SmallVector<Dist>> EmbeddingGradOp::inferResultDistributions(
    TypeRange operandTypes, TypeRange resultTypes, raw_ostream &whyNot) {
  // The gradient of the whole table: each process adds the rows of its own
  // ids, a partial sum over every axis that splits an ids dim, as the
  // serial program's sum over every id requires. (Paddle's data-parallel
  // form, declared whole, is accepted by isDataParallelAverage.)
  return lookupGradRule(*this, operandTypes, resultTypes, whyNot);
}

FailureOr<SmallVector<Dist>> CEmbeddingGradOp::inferResultDistributions(
    TypeRange operandTypes, TypeRange resultTypes, raw_ostream &whyNot) {
  // Each process accumulates the rows of its own ids: the shard's gradient
  // is a partial sum over every axis that splits an ids dim.
  return lookupGradRule(*this, operandTypes, resultTypes, whyNot);
}

/// A one-result elementwise rule over `operands`, among the types the rule
/// is given.
static FailureOr<SmallVector<Dist>>
elementwise(TypeRange operandTypes, TypeRange resultTypes, TypeRange operands,
            Linearity linearity, raw_ostream &whyNot) {
  FailureOr<MeshAttr> mesh = commonMesh(operandTypes, resultTypes, whyNot);
  if (failed(mesh))
    return failure();
  FailureOr<Dist> r = inferElementwise(*mesh, operands, linearity, whyNot);
  if (failed(r))
    return failure();
  return SmallVector<Dist>{std::move(*r)};
}

FailureOr<SmallVector<Dist>> DropoutOp::inferResultDistributions(
    TypeRange operandTypes, TypeRange resultTypes, raw_ostream &whyNot) {
  // The mask depends on the global index only, so every process that holds
  // a part of an element scales it alike: linear.
  return elementwise(operandTypes, resultTypes,
                     given(operandTypes, getInputMutable()), Linearity::Linear,
                     whyNot);
}

FailureOr<SmallVector<Dist>>
ScaleOp::inferResultDistributions(TypeRange operandTypes, TypeRange resultTypes,
                                  raw_ostream &whyNot) {
  return elementwise(operandTypes, resultTypes,
                     given(operandTypes, getInputMutable()), Linearity::Linear,
                     whyNot);
}

/// An optimizer update: elementwise and nonlinear over the parameter, the
/// gradient and the states (the momentum of a partial gradient would be a
/// sum of momenta); every result is distributed as they are. `step`, when
/// present, must be the same on every process.
static FailureOr<SmallVector<Dist>>
optimizerRule(TypeRange operandTypes, TypeRange resultTypes,
              TypeRange elementwiseOperands, Type step, raw_ostream &whyNot) {
  FailureOr<MeshAttr> mesh = commonMesh(operandTypes, resultTypes, whyNot);
  if (failed(mesh))
    return failure();
  if (step) {
    Dist d = Dist::of(step, *mesh);
    if (!d.partial.empty()) {
      whyNot << "the step is partial; it must be the same on every process";
      return failure();
    }
  }
  FailureOr<Dist> r = inferElementwise(*mesh, elementwiseOperands,
                                       Linearity::Nonlinear, whyNot);
  if (failed(r))
    return failure();
  return SmallVector<Dist>(resultTypes.size(), *r);
}

FailureOr<SmallVector<Dist>>
SgdOp::inferResultDistributions(TypeRange operandTypes, TypeRange resultTypes,
                                raw_ostream &whyNot) {
  return optimizerRule(operandTypes, resultTypes, operandTypes, Type(), whyNot);
}

FailureOr<SmallVector<Dist>>
AdamWOp::inferResultDistributions(TypeRange operandTypes, TypeRange resultTypes,
                                  raw_ostream &whyNot) {
  SmallVector<Type, 4> elementwise{given(operandTypes, getParamMutable()),
                                   given(operandTypes, getGradMutable()),
                                   given(operandTypes, getMoment1Mutable()),
                                   given(operandTypes, getMoment2Mutable())};
  return optimizerRule(operandTypes, resultTypes, elementwise,
                       given(operandTypes, getStepMutable()), whyNot);
}

FailureOr<SmallVector<Dist>> CheckFiniteAndUnscaleOp::inferResultDistributions(
    TypeRange operandTypes, TypeRange resultTypes, raw_ostream &whyNot) {
  // Unscaling is linear; found_inf is what this process saw, so it is a
  // partial max over every axis along which the gradients differ between
  // processes (split or partial).
  FailureOr<MeshAttr> mesh = commonMesh(operandTypes, resultTypes, whyNot);
  if (failed(mesh))
    return failure();
  SmallVector<Dist> results;
  Dist flag;
  flag.mesh = *mesh;
  flag.dims.push_back(-1);
  for (OpOperand &use : getGradsMutable()) {
    Type grad = given(operandTypes, use);
    FailureOr<Dist> r =
        inferElementwise(*mesh, TypeRange(grad), Linearity::Linear, whyNot);
    if (failed(r))
      return failure();
    results.push_back(std::move(*r));
    Dist d = Dist::of(grad, *mesh);
    SmallVector<int64_t> differing(d.dims);
    for (auto [axis, kind] : d.partial)
      differing.push_back(axis);
    for (int64_t axis : differing)
      if (axis >= 0 && !flag.partialKind(axis))
        flag.partial.emplace_back(axis, ReductionKind::Max);
  }
  if (!*mesh) {
    results.push_back(Dist());
    return results;
  }
  FailureOr<Dist> f = verified(std::move(flag), whyNot);
  if (failed(f))
    return failure();
  results.push_back(std::move(*f));
  return results;
}
