//===- AmpCheckFinite.cpp - AMP check-finite-and-unscale ------------------===//
//
// Implements --dist-amp-check-finite. Paddle appends check_finite_and_unscale
// over the gradients and, on several processes, an int32 MAX allreduce of
// found_inf. Here found_inf's type says what that allreduce does: a partial
// MAX over every mesh axis becomes a replicated flag.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/Transforms/CompletedPass.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTAMPCHECKFINITE
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

static constexpr llvm::StringLiteral kRewriteTag = "dist-amp-check-finite";

namespace {
/// An AMP step: its gradients (return operands marked dist.grad, without
/// repeats) and its loss scale.
struct AmpStep {
  llvm::SetVector<Value> grads;
  Value lossScale;
  /// The one mesh of the annotated gradients, or null.
  MeshAttr mesh;
};
} // namespace

/// Recognises an AMP step; nothing when `func` is not one, failure (with a
/// diagnostic) when it is a malformed one.
static FailureOr<std::optional<AmpStep>> analyzeStep(func::FuncOp func) {
  if (func.isExternal())
    return std::optional<AmpStep>();
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (func.getResultAttr(i, DistDialect::kFoundInfAttrName))
      return std::optional<AmpStep>(); // Already rewritten.

  AmpStep step;
  unsigned numScales = 0;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (func.getArgAttr(i, DistDialect::kLossScaleAttrName)) {
      step.lossScale = func.getArgument(i);
      ++numScales;
    }
  if (numScales > 1)
    return func.emitError("dist.loss_scale marks ")
           << numScales << " arguments; expected one";
  SmallVector<unsigned> gradResults;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (func.getResultAttr(i, DistDialect::kGradAttrName))
      gradResults.push_back(i);
  if (!step.lossScale || gradResults.empty())
    return std::optional<AmpStep>();

  auto scaleType = dyn_cast<RankedTensorType>(step.lossScale.getType());
  if (!scaleType || !scaleType.hasStaticShape() ||
      scaleType.getNumElements() != 1 ||
      !isa<FloatType>(scaleType.getElementType()))
    return func.emitError("loss scale must be a one-element float tensor, "
                          "got ")
           << step.lossScale.getType();
  if (!func.getBody().hasOneBlock())
    return func.emitError("an AMP step must have a single block, got ")
           << func.getBody().getBlocks().size();
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (unsigned i : gradResults) {
    Value grad = ret.getOperand(i);
    Type elementType = getElementTypeOrSelf(grad.getType());
    if (!isa<RankedTensorType>(grad.getType()) ||
        !(elementType.isF16() || elementType.isF32() || elementType.isF64()))
      return func.emitError("gradient \"")
             << func.getResultAttrOfType<StringAttr>(i,
                                                     DistDialect::kGradAttrName)
                    .getValue()
             << "\" (result #" << i << ") has element type " << elementType
             << "; expected f16, f32 or f64";
    if (TensorDistAttr dist = getTensorDist(grad.getType())) {
      if (step.mesh && step.mesh != dist.getMesh())
        return func.emitError("gradients are distributed on different "
                              "meshes; found_inf needs one world mesh");
      step.mesh = dist.getMesh();
    }
    step.grads.insert(grad);
  }
  return std::optional<AmpStep>(std::move(step));
}

/// The point right after the last gradient is computed.
static void setInsertionAfterGrads(OpBuilder &b, Block &body,
                                   ArrayRef<Value> grads) {
  Operation *last = nullptr;
  for (Value grad : grads)
    if (Operation *def = grad.getDefiningOp())
      if (!last || last->isBeforeInBlock(def))
        last = def;
  if (last)
    b.setInsertionPointAfter(last);
  else
    b.setInsertionPointToStart(&body);
}

static void rewriteStep(func::FuncOp func, AmpStep &step) {
  MLIRContext *ctx = func.getContext();
  Location loc = rewriteLoc(func.getLoc(), kRewriteTag);
  Block &body = func.getBody().front();
  OpBuilder b(ctx);
  setInsertionAfterGrads(b, body, step.grads.getArrayRef());

  // Each process checks only its own shards: until reduced, found_inf is a
  // partial MAX over every axis of the world mesh.
  SmallVector<int64_t> allAxes;
  auto flagType = RankedTensorType::get({1}, b.getI1Type());
  bool reduce = step.mesh && step.mesh.getNumProcesses() > 1;
  TensorDistAttr replicated;
  if (step.mesh) {
    allAxes = llvm::to_vector(llvm::seq<int64_t>(0, step.mesh.getRank()));
    replicated = TensorDistAttr::get(step.mesh, {-1});
  }
  TensorDistAttr localDist =
      reduce ? replicated.addPartial(allAxes, ReductionKind::Max) : replicated;

  SmallVector<Type> outTypes(
      llvm::map_range(step.grads, [](Value grad) { return grad.getType(); }));
  auto check = CheckFiniteAndUnscaleOp::create(
      b, loc, outTypes, withTensorDist(flagType, localDist),
      step.grads.getArrayRef(), step.lossScale);
  Value foundInf = check.getFoundInf();
  if (reduce) {
    // MAX over a bool is not an MPI reduction: reduce as i32, as Paddle does.
    auto i32Type = RankedTensorType::get({1}, b.getI32Type());
    Value wide = arith::ExtUIOp::create(
        b, loc, withTensorDist(i32Type, localDist), foundInf);
    Value any =
        AllReduceOp::create(b, loc, withTensorDist(i32Type, replicated), wide,
                            step.mesh, allAxes, ReductionKind::Max, nullptr);
    foundInf = arith::TruncIOp::create(
        b, loc, withTensorDist(flagType, replicated), any);
  }

  // Later uses read the unscaled gradients; uses before the check (a
  // gradient computed from another) keep the scaled ones.
  for (auto [grad, unscaled] :
       llvm::zip(step.grads.takeVector(), check.getOutputs()))
    grad.replaceUsesWithIf(unscaled, [&](OpOperand &use) {
      Operation *user = body.findAncestorOpInBlock(*use.getOwner());
      return user && check->isBeforeInBlock(user);
    });

  auto ret = cast<func::ReturnOp>(body.getTerminator());
  unsigned index = func.getNumResults();
  (void)func.insertResult(
      index, foundInf.getType(),
      DictionaryAttr::get(
          ctx,
          {NamedAttribute(StringAttr::get(ctx, DistDialect::kFoundInfAttrName),
                          UnitAttr::get(ctx))}));
  ret.getOperandsMutable().append(foundInf);
}

/// Appends the root names of the symbols `attr` refers to, looking inside
/// arrays and dictionaries as SymbolTable::getSymbolUses does.
static void collectSymbolRefs(Attribute attr,
                              SmallVectorImpl<StringAttr> &refs) {
  if (auto ref = dyn_cast<SymbolRefAttr>(attr))
    refs.push_back(ref.getRootReference());
  else if (auto array = dyn_cast<ArrayAttr>(attr))
    for (Attribute element : array)
      collectSymbolRefs(element, refs);
  else if (auto dict = dyn_cast<DictionaryAttr>(attr))
    for (NamedAttribute element : dict)
      collectSymbolRefs(element.getValue(), refs);
}

/// The symbols that `root` and the ops nested in it refer to. Reads inherent
/// attributes one by one: Operation::getAttrDictionary(), which
/// getSymbolUses walks, builds and uniques a new dictionary for every op
/// with properties, and at a million ops those never-freed dictionaries
/// were most of this pass's time and memory.
static void collectSymbolRefs(Operation *root,
                              SmallVectorImpl<StringAttr> &refs) {
  root->walk([&](Operation *op) {
    for (NamedAttribute attr : op->getDiscardableAttrs())
      collectSymbolRefs(attr.getValue(), refs);
    if (std::optional<RegisteredOperationName> info = op->getRegisteredInfo())
      for (StringAttr name : info->getAttributeNames())
        if (Attribute attr = op->getInherentAttr(name).value_or(Attribute()))
          collectSymbolRefs(attr, refs);
  });
}

namespace {
struct DistAmpCheckFinitePass
    : public CompletedPass<
          dist::impl::DistAmpCheckFiniteBase<DistAmpCheckFinitePass>> {
  using CompletedPass::CompletedPass;

  void runOnCompleted(ModuleOp module) override {
    MLIRContext *ctx = &getContext();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());

    // Functions are independent until the caller check, so recognising the
    // steps and collecting symbol references runs on every thread; the
    // parallel driver keeps diagnostics in function order. Every function is
    // analysed, so that each malformed step is reported.
    struct Analysis {
      std::optional<AmpStep> step;
      SmallVector<StringAttr> refs;
      bool failed = false;
    };
    std::vector<Analysis> analyses(funcs.size());
    parallelForEach(ctx, llvm::seq<size_t>(0, funcs.size()), [&](size_t i) {
      collectSymbolRefs(funcs[i], analyses[i].refs);
      FailureOr<std::optional<AmpStep>> step = analyzeStep(funcs[i]);
      if (failed(step))
        analyses[i].failed = true;
      else
        analyses[i].step = std::move(*step);
    });

    // Adding a result would break every caller, and any symbol use is one.
    llvm::DenseSet<StringAttr> referenced;
    for (Analysis &analysis : analyses)
      referenced.insert(analysis.refs.begin(), analysis.refs.end());
    SmallVector<StringAttr> otherRefs;
    for (Operation &op : module.getBody()->getOperations())
      if (!isa<func::FuncOp>(op))
        collectSymbolRefs(&op, otherRefs);
    referenced.insert(otherRefs.begin(), otherRefs.end());

    SmallVector<size_t> steps;
    bool hadError = false;
    for (auto [i, analysis] : llvm::enumerate(analyses)) {
      hadError |= analysis.failed;
      if (!analysis.step)
        continue;
      if (referenced.contains(funcs[i].getSymNameAttr())) {
        funcs[i].emitError("@")
            << funcs[i].getName()
            << " is called; the found_inf result cannot be added";
        hadError = true;
        continue;
      }
      steps.push_back(i);
    }
    if (hadError)
      return signalPassFailure();

    parallelForEach(ctx, steps, [&](size_t i) {
      rewriteStep(funcs[i], *analyses[i].step);
    });
    numSteps += steps.size();
  }
};
} // namespace
