//===- VerifyDistributions.cpp - check every op against its rule ----------===//
//
// Implements --dist-verify-distributions. The dist ops check their own rules
// in their verifiers; upstream ops cannot, so this pass walks everything:
// ops with a rule (an external model), ops that have none but touch
// encoded tensors, casts that would redistribute for free, gradients left
// partial, and collectives that only some processes would reach.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/DistRules.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTVERIFYDISTRIBUTIONS
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

static bool isEncoded(Type type) {
  return static_cast<bool>(getTensorDist(type));
}

/// Ops that carry encoded tensors without computing anything from them:
/// values passed along unchanged (their verifiers match the types) or made
/// from nothing.
static bool movesOrMakes(Operation *op) {
  Dialect *dialect = op->getDialect();
  return isa_and_nonnull<func::FuncDialect, scf::SCFDialect,
                         cf::ControlFlowDialect>(dialect) ||
         isa<arith::ConstantOp, tensor::EmptyOp, tensor::SplatOp>(op);
}

static LogicalResult checkOp(Operation *op) {
  // The dist ops checked themselves when they were verified.
  if (isa_and_nonnull<DistDialect>(op->getDialect()))
    return success();
  if (failed(rules::requireRegisteredRule(op)))
    return failure();
  if (isa<DistributionRuleInterface>(op))
    return rules::verifyDistributionRule(op);
  if (auto cast = dyn_cast<tensor::CastOp>(op)) {
    TensorDistAttr from = getTensorDist(cast.getSource().getType());
    TensorDistAttr to = getTensorDist(cast.getType());
    if (from && to && from != to)
      return op->emitOpError("changes the distribution from ")
             << from << " to " << to
             << " without communication; cast to an unannotated tensor "
                "only to leave the distributed program";
    return success();
  }
  if (movesOrMakes(op))
    return success();
  if (llvm::any_of(op->getOperandTypes(), isEncoded) ||
      llvm::any_of(op->getResultTypes(), isEncoded))
    return op->emitOpError("has no distribution rule, so it cannot take or "
                           "make distributed tensors (#dist.tensor)");
  return success();
}

/// Whether `value` is computed from dist.process_coord, looking through
/// block arguments to the ops that own them (a loop's induction variable
/// depends on its bounds).
static bool dependsOnCoordinate(Value value) {
  SmallVector<Value> worklist{value};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def) {
      auto arg = cast<BlockArgument>(v);
      def = arg.getOwner()->getParentOp();
      if (!def || isa<FunctionOpInterface>(def))
        continue;
    }
    if (!seen.insert(def).second)
      continue;
    if (isa<ProcessCoordOp>(def))
      return true;
    llvm::append_range(worklist, def->getOperands());
  }
  return false;
}

/// The control-flow op above `op`, within its function, whose condition or
/// bounds depend on the process coordinate, if any.
static Operation *divergentParent(Operation *op) {
  for (Operation *parent = op->getParentOp();
       parent && !isa<FunctionOpInterface>(parent);
       parent = parent->getParentOp()) {
    SmallVector<Value> controls;
    if (auto ifOp = dyn_cast<scf::IfOp>(parent))
      controls.push_back(ifOp.getCondition());
    else if (auto forOp = dyn_cast<scf::ForOp>(parent))
      controls.append(
          {forOp.getLowerBound(), forOp.getUpperBound(), forOp.getStep()});
    else if (auto whileOp = dyn_cast<scf::WhileOp>(parent))
      controls.push_back(whileOp.getConditionOp().getCondition());
    if (llvm::any_of(controls, dependsOnCoordinate))
      return parent;
  }
  return nullptr;
}

/// Gradients must be complete and distributed as their parameters.
static LogicalResult checkGradients(func::FuncOp func) {
  if (func.isExternal())
    return success();
  auto ret = dyn_cast<func::ReturnOp>(func.getBody().back().getTerminator());
  if (!ret)
    return success();
  // Parameters by name, found once: a step may have thousands.
  llvm::DenseMap<Attribute, unsigned> params;
  for (unsigned a = 0, n = func.getNumArguments(); a < n; ++a)
    if (Attribute name = func.getArgAttr(a, DistDialect::kParamAttrName))
      params.try_emplace(name, a);
  LogicalResult result = success();
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto name =
        func.getResultAttrOfType<StringAttr>(i, DistDialect::kGradAttrName);
    if (!name)
      continue;
    Value grad = ret.getOperand(i);
    TensorDistAttr dist = getTensorDist(grad.getType());
    if (dist) {
      SmallVector<int64_t> pending;
      std::optional<ReductionKind> kind;
      for (auto [axis, k] : dist.getPartials())
        if (dist.getMesh().getAxisSize(axis) > 1) {
          pending.push_back(axis);
          kind = k;
        }
      if (!pending.empty()) {
        InFlightDiagnostic diag = ret.emitError("gradient sync incomplete: ")
                                  << "the gradient of \"" << name.getValue()
                                  << "\" (result #" << i
                                  << ") is partial over ";
        llvm::interleave(
            pending, diag,
            [&](int64_t a) { diag << rules::axisName(dist.getMesh(), a); },
            ", ");
        diag << ": insert dist.allreduce ... axes = [";
        llvm::interleaveComma(pending, diag);
        diag << "] reduce = " << stringifyReductionKind(*kind);
        result = failure();
        continue;
      }
    }
    auto it = params.find(name);
    if (it == params.end())
      continue;
    unsigned a = it->second;
    TensorDistAttr param = getTensorDist(func.getArgument(a).getType());
    auto dims = [](TensorDistAttr d, size_t rank) {
      return d ? SmallVector<int64_t>(d.getDimsMapping())
               : SmallVector<int64_t>(rank, -1);
    };
    auto gradType = dyn_cast<RankedTensorType>(grad.getType());
    if (!gradType)
      continue;
    if (dims(dist, gradType.getRank()) != dims(param, gradType.getRank())) {
      InFlightDiagnostic diag = ret.emitError("the gradient of \"")
                                << name.getValue() << "\" (result #" << i
                                << ") is distributed as ";
      if (dist)
        diag << dist;
      else
        diag << "replicated";
      diag << " but its parameter (argument #" << a << ") as ";
      if (param)
        diag << param;
      else
        diag << "replicated";
      result = failure();
    }
  }
  return result;
}

namespace {
struct DistVerifyDistributionsPass
    : public dist::impl::DistVerifyDistributionsBase<
          DistVerifyDistributionsPass> {
  void runOnOperation() override {
    bool hadError = false;
    getOperation().walk([&](Operation *op) {
      if (failed(checkOp(op)))
        hadError = true;
      if (isa<CollectiveOpInterface>(op))
        if (Operation *parent = divergentParent(op)) {
          InFlightDiagnostic diag =
              op->emitOpError("is issued only by the processes that take "
                              "this '")
              << parent->getName()
              << "', whose control depends on dist.process_coord: the "
                 "processes of a group would issue different collectives "
                 "and deadlock";
          diag.attachNote(parent->getLoc())
              << "the '" << parent->getName() << "' is here";
          hadError = true;
        }
      if (auto func = dyn_cast<func::FuncOp>(op))
        if (failed(checkGradients(func)))
          hadError = true;
    });
    if (hadError)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
