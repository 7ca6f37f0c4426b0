//===- VerifyDistributions.cpp - check every op against its rule ----------===//
//
// Implements --dist-verify-distributions. The dist ops check their own rules
// in their verifiers; upstream ops cannot, so this pass walks everything:
// ops with a rule (an external model), ops that have none but touch encoded
// tensors, gradients left partial, and, with the varying analysis (values
// that differ between processes, dist/Analysis/Varying.h), values declared
// replicated that differ, distributions laundered through casts, and
// collectives (or calls of functions that issue them) that only some
// processes of their group would reach.
//
//===----------------------------------------------------------------------===//

#include "dist/Analysis/ControlFlowEdges.h"
#include "dist/Analysis/PipelineCheck.h"
#include "dist/Analysis/Varying.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/Transforms/Packing.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
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
/// from nothing. The varying check still sees what they carry.
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
  // The local shape, the same on every process (shards are equal).
  if (isa<tensor::DimOp, tensor::RankOp>(op))
    return success();
  if (llvm::any_of(op->getOperandTypes(), isEncoded) ||
      llvm::any_of(op->getResultTypes(), isEncoded))
    return op->emitOpError("has no distribution rule, so it cannot take or "
                           "make distributed tensors (#dist.tensor)");
  return success();
}

//===----------------------------------------------------------------------===//
// Values that differ between processes
//===----------------------------------------------------------------------===//

/// Where a variation comes from, for a note.
static void noteSource(InFlightDiagnostic &diag, MeshAxis axis,
                       Operation *source) {
  if (!source)
    return;
  std::string name = rules::axisName(axis.mesh, axis.axis);
  if (isa<ProcessCoordOp>(source))
    diag.attachNote(source->getLoc()) << "it differs along mesh " << name
                                      << " from this process's coordinate here";
  else if (isa<FunctionOpInterface>(source))
    diag.attachNote(source->getLoc()) << "it differs along mesh " << name
                                      << " from an argument of this function";
  else
    diag.attachNote(source->getLoc())
        << "it differs along mesh " << name << " from a value made here";
}

/// The axes of `type`'s mesh that its encoding lets a value differ along:
/// those it splits a dim over or is partial over.
static SmallVector<int64_t> declaredAxes(Type type) {
  SmallVector<int64_t> axes;
  // Held by name: entries() refers into it.
  Variation declared = Variation::declared(type, nullptr);
  for (auto [axis, source] : declared.entries())
    axes.push_back(axis.axis);
  return axes;
}

/// A value whose encoding says it is the same on every process of an axis
/// (replicated or complete over it) must not be computed from one that
/// differs along it: a splat of a coordinate, a cast of a shard.
static LogicalResult checkDeclared(Value value, Operation *at,
                                   const VaryingAnalysis &varying) {
  TensorDistAttr dist = getTensorDist(value.getType());
  if (!dist)
    return success();
  std::optional<std::pair<MeshAxis, Operation *>> outside =
      varying.flowOf(value).outside(dist.getMesh(),
                                    declaredAxes(value.getType()));
  if (!outside)
    return success();
  auto [axis, source] = *outside;
  std::string what =
      isa<OpResult>(value)
          ? "result #" + std::to_string(cast<OpResult>(value).getResultNumber())
          : "block argument #" +
                std::to_string(cast<BlockArgument>(value).getArgNumber());
  InFlightDiagnostic diag = at->emitOpError()
                            << what << " differs between processes along mesh "
                            << rules::axisName(axis.mesh, axis.axis)
                            << " but is declared " << dist
                            << ", the same on every process along it";
  noteSource(diag, axis, source);
  return failure();
}

/// A rule takes an unannotated operand as replicated: one that differs
/// between processes is a distributed value without its encoding.
static LogicalResult checkPlainOperands(Operation *op,
                                        const VaryingAnalysis &varying) {
  if ((llvm::none_of(op->getOperandTypes(), isEncoded) &&
       llvm::none_of(op->getResultTypes(), isEncoded)))
    return success();
  // Fails with `what(axis)` when `v` differs between processes.
  auto uniform = [&](Value v,
                     function_ref<void(InFlightDiagnostic &, MeshAxis)> what) {
    const Variation &var = varying.of(v);
    if (var.empty())
      return success();
    auto [axis, source] = var.entries().front();
    InFlightDiagnostic diag = op->emitOpError();
    what(diag, axis);
    noteSource(diag, axis, source);
    return failure();
  };
  for (OpOperand &operand : op->getOpOperands()) {
    Value v = operand.get();
    if (!isa<RankedTensorType>(v.getType()) || isEncoded(v.getType()))
      continue;
    if (failed(uniform(v, [&](InFlightDiagnostic &diag, MeshAxis axis) {
          diag << "operand #" << operand.getOperandNumber()
               << " has no distribution encoding, so its rule takes it as "
                  "replicated, but it differs between processes along mesh "
               << rules::axisName(axis.mesh, axis.axis)
               << ": declare its distribution (tensor.cast to a "
                  "#dist.tensor type)";
        })))
      return failure();
  }
  // An upstream op's rule takes its scalar operands (a select's condition,
  // a fill's value) as the same on every process; dist ops say what theirs
  // mean (a dropout's seed may differ by shard).
  if (!isa_and_nonnull<DistDialect>(op->getDialect()))
    for (OpOperand &operand : op->getOpOperands()) {
      if (isa<ShapedType>(operand.get().getType()))
        continue;
      if (failed(uniform(operand.get(), [&](InFlightDiagnostic &diag,
                                            MeshAxis axis) {
            diag << "operand #" << operand.getOperandNumber()
                 << " is a scalar that differs between processes along mesh "
                 << rules::axisName(axis.mesh, axis.axis)
                 << ", which its rule takes as the same on every process: "
                    "make it a tensor with its distribution";
          })))
        return failure();
    }
  // A rule sees the op's operands only: what its regions read from above
  // (a linalg body's captured scalar) must be the same on every process.
  if (op->getNumRegions() == 0)
    return success();
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  for (Value v : captured)
    if (failed(uniform(v, [&](InFlightDiagnostic &diag, MeshAxis axis) {
          diag << "reads a value from outside its regions that differs "
                  "between processes along mesh "
               << rules::axisName(axis.mesh, axis.axis)
               << ", which its rule does not see: pass it as an operand "
                  "with its distribution";
        })))
      return failure();
  return success();
}

/// An encoding cast away may come back only as itself: casting it to
/// another would redistribute without communication.
static LogicalResult checkCastBack(tensor::CastOp cast,
                                   const VaryingAnalysis &varying) {
  TensorDistAttr to = getTensorDist(cast.getType());
  if (!to || isEncoded(cast.getSource().getType()))
    return success();
  for (auto [from, where] : varying.castAwayOf(cast.getSource())) {
    // Replicated stays replicated whatever reshapes ran in between (the
    // ranks may differ: a [bs, h] product viewed as [b, s, h]).
    if (from == to || (from.isReplicated() && to.isReplicated() &&
                       from.getMesh() == to.getMesh()))
      continue;
    InFlightDiagnostic diag =
        cast.emitOpError("gives the encoding ")
        << to << " to a value whose distribution " << from
        << " was cast away: that changes the distribution without "
           "communication (cast back to the same encoding, or redistribute "
           "with a collective)";
    diag.attachNote(where->getLoc()) << "the encoding was cast away here";
    return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives that only some processes reach
//===----------------------------------------------------------------------===//

namespace {
/// Collectives a function issues, directly or through its callees: per
/// group (mesh and axes), the first op in the function that issues one.
struct Issued {
  MeshAttr mesh;
  SmallVector<int64_t> axes;
  Operation *witness;
};

/// Why an op may run on only some processes of a group.
struct Divergence {
  Operation *control;
  std::optional<std::pair<MeshAxis, Operation *>> axis; // none: unknown op
};

class DivergenceChecker {
public:
  explicit DivergenceChecker(const VaryingAnalysis &varying)
      : varying(varying) {}

  /// Notes `op` if it is a collective (a dist op: `isDist`) or a call.
  void collect(Operation *op, bool isDist) {
    if (isDist) {
      auto c = dyn_cast<CollectiveOpInterface>(op);
      // c_identity moves nothing in the forward direction.
      if (!c || isa<CIdentityOp>(op))
        return;
      Operation *f = op->getParentOfType<FunctionOpInterface>();
      collectives.emplace_back(c, f);
      if (f)
        addIssued(f, c.getMesh(), c.getAxes(), op);
    } else if (auto call = dyn_cast<CallOpInterface>(op)) {
      if (Operation *f = op->getParentOfType<FunctionOpInterface>())
        calls.emplace_back(f, call);
    }
  }

  /// Checks every collective and every call of a function that issues one
  /// (after collect has seen every op).
  LogicalResult check() {
    propagateIssued();
    LogicalResult result = success();
    for (auto [collective, f] : collectives)
      if (std::optional<Divergence> d =
              find(collective, collective.getMesh(), collective.getAxes())) {
        report(collective, *d, {});
        result = failure();
      }
    for (auto [f, call] : calls) {
      Operation *callee = getCalleeWithBody(call, symbols);
      auto it = issued.find(callee);
      if (it == issued.end())
        continue;
      for (const Issued &entry : it->second)
        if (std::optional<Divergence> d = find(call, entry.mesh, entry.axes)) {
          report(call, *d, entry);
          result = failure();
          break;
        }
    }
    return result;
  }

private:
  bool addIssued(Operation *f, MeshAttr mesh, ArrayRef<int64_t> axes,
                 Operation *witness) {
    auto &list = issued[f];
    for (const Issued &e : list)
      if (e.mesh == mesh && ArrayRef<int64_t>(e.axes) == axes)
        return false;
    list.push_back({mesh, SmallVector<int64_t>(axes), witness});
    return true;
  }

  /// The collectives of every function through its calls, to a fixpoint
  /// (recursion included).
  void propagateIssued() {
    for (bool changed = true; changed;) {
      changed = false;
      for (auto [f, call] : calls) {
        Operation *callee = getCalleeWithBody(call, symbols);
        auto it = issued.find(callee);
        if (it == issued.end())
          continue;
        SmallVector<Issued> entries(it->second);
        for (const Issued &e : entries)
          changed |= addIssued(f, e.mesh, e.axes, call);
      }
    }
  }

  /// The innermost control above `op`, within its function, that may let
  /// only some processes of a group over `axes` of `mesh` reach it.
  std::optional<Divergence> find(Operation *op, MeshAttr mesh,
                                 ArrayRef<int64_t> axes) {
    for (Operation *at = op; at && !isa<FunctionOpInterface>(at);
         at = at->getParentOp()) {
      Block *block = at->getBlock();
      if (!block)
        break;
      Region *region = block->getParent();
      if (!region->hasOneBlock())
        if (std::optional<Divergence> d = branchesAbove(block, mesh, axes))
          return d;
      Operation *parent = region->getParentOp();
      if (!parent || isa<FunctionOpInterface>(parent))
        break;
      if (isa<RegionBranchOpInterface>(parent)) {
        if (auto axis = varying.controlOf(parent).divides(mesh, axes))
          return Divergence{parent, axis};
        continue;
      }
      // An op dist knows nothing of may run its regions on some processes,
      // several times, or on other threads.
      return Divergence{parent, std::nullopt};
    }
    return std::nullopt;
  }

  /// A branch in `block`'s region whose flag differs between processes of
  /// the group and decides whether `block` runs (control dependence: the
  /// block post-dominates a successor of the branch but not the branch).
  std::optional<Divergence> branchesAbove(Block *block, MeshAttr mesh,
                                          ArrayRef<int64_t> axes) {
    for (Operation *term : controlDependence.getControllingBranches(block))
      if (auto axis = varying.controlOf(term).divides(mesh, axes))
        return Divergence{term, axis};
    return std::nullopt;
  }

  void report(Operation *op, const Divergence &d,
              std::optional<Issued> through) {
    InFlightDiagnostic diag = op->emitOpError();
    StringRef control = d.control->getName().getStringRef();
    if (through) {
      diag << "calls a function that issues collectives over mesh axes [";
      llvm::interleaveComma(through->axes, diag);
      diag << "], ";
    }
    if (!d.axis) {
      diag << (through ? "" : "is issued ") << "inside '" << control
           << "', which dist cannot tell runs once on every process: the "
              "processes of a group might issue different collectives and "
              "deadlock";
      diag.attachNote(d.control->getLoc()) << "the '" << control << "' is here";
    } else {
      auto [axis, source] = *d.axis;
      diag << (through ? "under a condition" : "is issued under a condition")
           << " that differs along mesh "
           << rules::axisName(axis.mesh, axis.axis)
           << " between the processes of its group: those that do not take "
              "this '"
           << control << "' would not "
           << (through ? "make the call" : "issue it")
           << ", and the group would deadlock";
      diag.attachNote(d.control->getLoc()) << "the '" << control << "' is here";
      noteSource(diag, axis, source);
    }
    if (through) {
      // The call chain down to the collective.
      Operation *witness = through->witness;
      for (int depth = 0; witness && depth < 16; ++depth) {
        auto f = witness->getParentOfType<FunctionOpInterface>();
        if (auto call = dyn_cast<CallOpInterface>(witness)) {
          diag.attachNote(witness->getLoc())
              << "@" << (f ? f.getName() : "") << " calls a function here";
          Operation *callee = getCalleeWithBody(call, symbols);
          witness = nullptr;
          auto it = issued.find(callee);
          if (it != issued.end())
            for (const Issued &e : it->second)
              if (e.mesh == through->mesh && e.axes == through->axes)
                witness = e.witness;
          continue;
        }
        diag.attachNote(witness->getLoc())
            << "@" << (f ? f.getName() : "") << " issues '"
            << witness->getName() << "' here";
        break;
      }
    }
  }

  const VaryingAnalysis &varying;
  SmallVector<std::pair<CollectiveOpInterface, Operation *>> collectives;
  SmallVector<std::pair<Operation *, CallOpInterface>> calls;
  SymbolTableCollection symbols;
  DenseMap<Operation *, SmallVector<Issued>> issued;
  ControlDependence controlDependence;
};
} // namespace

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

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
    // ZeRO stage 2 returns each process's shard of the packed gradient.
    if (isPackedShardOf(gradType,
                        cast<RankedTensorType>(func.getArgument(a).getType())))
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

//===----------------------------------------------------------------------===//
// The check and the pass
//===----------------------------------------------------------------------===//

LogicalResult mlir::dist::verifyDistributions(ModuleOp module) {
  // A marked function's ops are not checked until completion has decided
  // what it leaves out: checking it now would pass what nothing checked.
  if (failed(rules::requireCompleted(module)))
    return failure();
  bool hadError = false;
  // An op already reported is not reported again for what flows through it.
  llvm::SmallPtrSet<Operation *, 8> reported;
  module.walk([&](Operation *op) {
    if (failed(checkOp(op))) {
      hadError = true;
      reported.insert(op);
    }
    if (auto func = dyn_cast<func::FuncOp>(op))
      if (failed(checkGradients(func)))
        hadError = true;
  });
  VaryingAnalysis varying(module);
  DivergenceChecker divergence(varying);
  Dialect *distDialect = module.getContext()->getLoadedDialect<DistDialect>();
  module.walk([&](Operation *op) {
    if (!reported.empty() && reported.contains(op))
      return;
    bool isDist = op->getDialect() == distDialect;
    divergence.collect(op, isDist);
    bool hasRule = isa<DistributionRuleInterface>(op);
    if (hasRule && failed(checkPlainOperands(op, varying)))
      hadError = true;
    if (isDist)
      return;
    if (auto cast = dyn_cast<tensor::CastOp>(op))
      if (failed(checkCastBack(cast, varying)))
        hadError = true;
    // What only moves or makes values is where a differing value could
    // pass for a replicated one.
    if (!hasRule)
      for (Value r : op->getResults())
        if (failed(checkDeclared(r, op, varying)))
          hadError = true;
    for (Region &region : op->getRegions())
      for (Block &block : region) {
        if (block.isEntryBlock() && isa<FunctionOpInterface>(op))
          continue;
        for (BlockArgument arg : block.getArguments())
          if (failed(checkDeclared(arg, op, varying)))
            hadError = true;
      }
  });
  if (failed(divergence.check()))
    hadError = true;
  if (failed(verifyPipelineTransfers(module)))
    hadError = true;
  return failure(hadError);
}

namespace {
struct DistVerifyDistributionsPass
    : public dist::impl::DistVerifyDistributionsBase<
          DistVerifyDistributionsPass> {
  void runOnOperation() override {
    if (failed(verifyDistributions(getOperation())))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
