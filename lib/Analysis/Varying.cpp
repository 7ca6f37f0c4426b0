//===- Varying.cpp - values that differ between processes -----------------===//

#include "dist/Analysis/Varying.h"
#include "dist/Analysis/ControlFlowEdges.h"
#include "dist/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::dist;

//===----------------------------------------------------------------------===//
// Variation
//===----------------------------------------------------------------------===//

bool Variation::add(MeshAxis axis, Operation *source) {
  for (auto &[a, s] : axes)
    if (a == axis)
      return false;
  axes.emplace_back(axis, source);
  return true;
}

bool Variation::join(const Variation &other) {
  bool changed = false;
  for (auto [axis, source] : other.axes)
    changed |= add(axis, source);
  return changed;
}

void Variation::drop(MeshAttr mesh, ArrayRef<int64_t> along) {
  llvm::erase_if(axes, [&](const auto &entry) {
    return entry.first.mesh == mesh &&
           llvm::is_contained(along, entry.first.axis);
  });
}

std::optional<std::pair<MeshAxis, Operation *>>
Variation::divides(MeshAttr mesh, ArrayRef<int64_t> along) const {
  for (auto entry : axes)
    if (entry.first.mesh != mesh || llvm::is_contained(along, entry.first.axis))
      return entry;
  return std::nullopt;
}

std::optional<std::pair<MeshAxis, Operation *>>
Variation::outside(MeshAttr mesh, ArrayRef<int64_t> allowed) const {
  for (auto entry : axes)
    if (entry.first.mesh != mesh ||
        !llvm::is_contained(allowed, entry.first.axis))
      return entry;
  return std::nullopt;
}

Variation Variation::declared(Type type, Operation *source) {
  Variation v;
  TensorDistAttr dist = getTensorDist(type);
  if (!dist)
    return v;
  MeshAttr mesh = dist.getMesh();
  for (int64_t axis : dist.getDimsMapping())
    if (axis >= 0 && mesh.getAxisSize(axis) > 1)
      v.add({mesh, axis}, source);
  for (auto [axis, kind] : dist.getPartials())
    if (mesh.getAxisSize(axis) > 1)
      v.add({mesh, axis}, source);
  return v;
}

//===----------------------------------------------------------------------===//
// The solver
//===----------------------------------------------------------------------===//

namespace mlir::dist {
/// Visits every op of the root in order (regions between an op's entry and
/// its exit), joining variations into values, until nothing that a later
/// op feeds back (block arguments, region results, function arguments and
/// results) changes. The lattice only grows and is finite (the mesh axes
/// of the module), so the loop ends; straight-line code takes one visit.
struct VaryingSolver {
  VaryingSolver(VaryingAnalysis &out, MLIRContext *ctx)
      : out(out), distDialect(ctx->getLoadedDialect<DistDialect>()) {}

  using CastAways = SmallVector<std::pair<TensorDistAttr, Operation *>, 1>;

  VaryingAnalysis &out;
  Dialect *distDialect;
  SymbolTableCollection symbols;
  /// Per function: what its callers pass (plain arguments) and what it
  /// returns.
  DenseMap<Operation *, SmallVector<Variation>> argsFromCalls, returned;
  DenseMap<Operation *, SmallVector<CastAways>> argCastAways, returnedCastAways;
  bool changed = false;

  Variation of(Value v) const { return out.of(v); }

  static bool joinCastAways(CastAways &into, const CastAways &from) {
    bool added = false;
    for (auto entry : from)
      if (!llvm::is_contained(into, entry)) {
        into.push_back(entry);
        added = true;
      }
    return added;
  }

  const CastAways &castAwayOf(Value v) {
    static const CastAways none;
    if (out.castAway.empty())
      return none;
    auto it = out.castAway.find(v);
    return it == out.castAway.end() ? none : it->second;
  }

  /// What `value` is computed from: `flow`, and the encodings `cast` away.
  /// An encoded value varies as it declares (its flow is kept where it is
  /// checked); `feedsBack` says that a later visit must see a change.
  void setValue(Value value, const Variation &flow, const CastAways &cast,
                bool feedsBack) {
    if (getTensorDist(value.getType())) {
      // Nothing reads a flow but the check, after the fixpoint: every
      // round joins it again, and the last one is complete.
      if (!flow.empty() && VaryingAnalysis::flowIsTracked(value))
        out.flows[value].join(flow);
      return;
    }
    bool added = false;
    if (!flow.empty())
      added |= out.plain[value].join(flow);
    if (!cast.empty()) {
      // `cast` may be another value's entry: inserting could move it.
      CastAways from(cast);
      added |= joinCastAways(out.castAway[value], from);
    }
    // Blocks are visited in their order, which need not be dominance
    // order: in a region of several blocks, a later block may define what
    // an earlier one uses, so any change there asks for another visit.
    if (added && (feedsBack || !value.getParentRegion()->hasOneBlock()))
      changed = true;
  }

  void flowInto(Value to, Value from, const Variation &control,
                bool feedsBack) {
    Variation v = of(from);
    v.join(control);
    setValue(to, v, castAwayOf(from), feedsBack);
  }

  void setControl(Operation *op, const Variation &control) {
    if (!control.empty())
      out.controls[op].join(control);
  }

  void run(Operation *root) {
    // The functions outside any function; those inside one are visited
    // with it.
    SmallVector<FunctionOpInterface> functions;
    root->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto f = dyn_cast<FunctionOpInterface>(op)) {
        functions.push_back(f);
        return WalkResult::skip();
      }
      return WalkResult::advance();
    });
    // A bound far above any real program (each round adds an axis
    // somewhere), so that a bug cannot loop for ever.
    for (int round = 0; round < 1000; ++round) {
      changed = false;
      for (FunctionOpInterface f : functions)
        visitFunction(f);
      if (!changed)
        break;
    }
  }

  void visitFunction(FunctionOpInterface f) {
    if (f.isExternal())
      return;
    Block &entry = f.getFunctionBody().front();
    // Only unannotated arguments take what the callers pass.
    auto fromCalls = argsFromCalls.find(f);
    if (fromCalls != argsFromCalls.end()) {
      const SmallVector<CastAways> &casts = argCastAways[f];
      for (BlockArgument arg : entry.getArguments()) {
        unsigned i = arg.getArgNumber();
        if (i < fromCalls->second.size())
          setValue(arg, fromCalls->second[i],
                   i < casts.size() ? casts[i] : CastAways(),
                   /*feedsBack=*/false);
      }
    }
    visitRegion(f.getFunctionBody());
  }

  void visitRegion(Region &region) {
    for (Block &block : region)
      for (Operation &op : block)
        visitOp(&op);
  }

  void visitOp(Operation *op) {
    // Most ops of a program: a dist op making encoded values (collectives
    // included), which vary as declared whatever they take.
    if (op->getDialect() == distDialect && op->getNumResults() &&
        llvm::all_of(op->getResultTypes(),
                     [](Type t) { return getTensorDist(t); }))
      return;
    if (auto f = dyn_cast<FunctionOpInterface>(op)) {
      visitFunction(f); // Nested in a function.
      return;
    }
    if (visitDistOp(op))
      return;
    // Local shapes are equal on every process.
    if (isa<tensor::DimOp, tensor::RankOp, memref::DimOp, memref::RankOp>(op)) {
      for (Value r : op->getResults())
        setValue(r, {}, {}, false);
      return;
    }
    if (auto cast = dyn_cast<tensor::CastOp>(op)) {
      CastAways c = castAwayOf(cast.getSource());
      TensorDistAttr from = getTensorDist(cast.getSource().getType());
      if (from && !getTensorDist(cast.getType()))
        joinCastAways(c, {{from, op}});
      setValue(cast.getResult(), of(cast.getSource()), c, false);
      return;
    }
    if (auto call = dyn_cast<CallOpInterface>(op)) {
      visitCall(call);
      return;
    }
    if (auto branch = dyn_cast<RegionBranchOpInterface>(op)) {
      visitRegionBranch(branch);
      return;
    }
    if (op->getNumRegions()) {
      visitUnknownRegionOp(op);
      return;
    }
    if (auto branch = dyn_cast<BranchOpInterface>(op)) {
      visitBranch(branch);
      return;
    }
    visitPlainOp(op);
  }

  /// The dist ops whose results vary otherwise than as declared: a
  /// process's coordinate, a collective's group agreeing, a reshard, a
  /// wait. False for any other op.
  bool visitDistOp(Operation *op) {
    if (auto coord = dyn_cast<ProcessCoordOp>(op)) {
      Variation v;
      MeshAttr mesh = coord.getMesh();
      int64_t axis = coord.getAxis();
      if (axis < mesh.getRank() && mesh.getAxisSize(axis) > 1)
        v.add({mesh, axis}, op);
      setValue(coord.getResult(), v, {}, false);
      return true;
    }
    if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
      Variation v = of(collective.getInput());
      // The group agrees after an allreduce or a broadcast.
      if (!isa<CIdentityOp>(op))
        v.drop(collective.getMesh(), collective.getAxes());
      setValue(collective.getResult(), v, castAwayOf(collective.getInput()),
               false);
      return true;
    }
    // The logical lookup reads the whole table: the processes that split
    // its rows agree on the rows looked up (--dist-parallel-embedding adds
    // the allreduce that makes them).
    if (auto lookup = dyn_cast<EmbeddingOp>(op)) {
      Variation v = of(lookup.getIds());
      Variation table = of(lookup.getWeight());
      if (TensorDistAttr t = getTensorDist(lookup.getWeight().getType()))
        if (int64_t rows = t.getMeshAxis(0); rows >= 0)
          table.drop(t.getMesh(), rows);
      v.join(table);
      setValue(lookup.getResult(), v, castAwayOf(lookup.getIds()), false);
      return true;
    }
    // A reshard to an unencoded tensor makes it replicated on its mesh:
    // the same on every process of it.
    if (auto reshard = dyn_cast<ReshardOp>(op)) {
      Variation v = of(reshard.getInput());
      if (TensorDistAttr from = getTensorDist(reshard.getInput().getType()))
        v.drop(from.getMesh(), llvm::to_vector(llvm::seq<int64_t>(
                                   0, from.getMesh().getRank())));
      setValue(reshard.getResult(), v, {}, false);
      return true;
    }
    if (auto wait = dyn_cast<WaitOp>(op)) {
      setValue(wait.getResult(), of(wait.getFuture()),
               castAwayOf(wait.getFuture()), false);
      return true;
    }
    return false;
  }

  /// An op without regions that dist knows nothing of: its results come
  /// from all it takes; a return passes what it returns to the callers.
  void visitPlainOp(Operation *op) {
    bool returns = op->hasTrait<OpTrait::ReturnLike>();
    // Encoded results that a rule computes vary as declared: nothing to
    // join (the common case, so it costs no lookup).
    if (!returns && llvm::none_of(op->getResults(), [](Value r) {
          return !getTensorDist(r.getType()) ||
                 VaryingAnalysis::flowIsTracked(r);
        }))
      return;
    Variation v;
    CastAways c;
    for (Value operand : op->getOperands()) {
      v.join(of(operand));
      joinCastAways(c, castAwayOf(operand));
    }
    for (Value r : op->getResults())
      setValue(r, v, c, false);
    // What a function returns, for its callers.
    if (returns && !llvm::all_of(op->getOperandTypes(),
                                 [](Type t) { return getTensorDist(t); }))
      if (auto f = dyn_cast<FunctionOpInterface>(op->getParentOp())) {
        auto &results = returned[f];
        auto &casts = returnedCastAways[f];
        results.resize(std::max<size_t>(results.size(), op->getNumOperands()));
        casts.resize(results.size());
        for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
          if (getTensorDist(operand.getType()))
            continue; // The call's result varies as declared.
          changed |= results[i].join(of(operand));
          changed |= joinCastAways(casts[i], castAwayOf(operand));
        }
      }
  }

  void visitCall(CallOpInterface call) {
    FunctionOpInterface f = getCalleeWithBody(call, symbols);
    if (!f) {
      // Unknown: its results come from everything it takes.
      Variation v;
      CastAways c;
      for (Value operand : call.getArgOperands()) {
        v.join(of(operand));
        joinCastAways(c, castAwayOf(operand));
      }
      for (Value r : call->getResults())
        setValue(r, v, c, false);
      return;
    }
    // An encoded argument varies as declared in the callee too: only the
    // unannotated ones carry what the callers pass.
    ValueRange operands = call.getArgOperands();
    if (!llvm::all_of(operands.getTypes(),
                      [](Type t) { return getTensorDist(t); })) {
      auto &args = argsFromCalls[f];
      auto &casts = argCastAways[f];
      args.resize(std::max<size_t>(args.size(), operands.size()));
      casts.resize(args.size());
      for (auto [i, operand] : llvm::enumerate(operands)) {
        if (getTensorDist(operand.getType()))
          continue;
        changed |= args[i].join(of(operand));
        changed |= joinCastAways(casts[i], castAwayOf(operand));
      }
    }
    auto results = returned.find(f);
    if (results == returned.end())
      return; // Nothing unannotated returned (yet).
    auto &resultCasts = returnedCastAways[f];
    for (auto [i, r] : llvm::enumerate(call->getResults()))
      setValue(r, i < results->second.size() ? results->second[i] : Variation(),
               i < resultCasts.size() ? resultCasts[i] : CastAways(), false);
  }

  /// The operands of `op` not among `forwarded` (operand numbers).
  static Variation controlOperands(Operation *op,
                                   const llvm::SmallBitVector &forwarded,
                                   const VaryingSolver &self) {
    Variation v;
    for (OpOperand &operand : op->getOpOperands())
      if (!forwarded.test(operand.getOperandNumber()))
        v.join(self.of(operand.get()));
    return v;
  }

  static void markForwarded(llvm::SmallBitVector &bits, OperandRange range) {
    if (range.empty())
      return;
    unsigned begin = range.getBeginOperandIndex();
    for (unsigned i = 0; i < range.size(); ++i)
      bits.set(begin + i);
  }

  void visitRegionBranch(RegionBranchOpInterface op) {
    // Entry: operands forwarded into regions (or straight to the results);
    // the rest decide what runs (a condition, bounds).
    SmallVector<RegionSuccessor> successors;
    op.getSuccessorRegions(RegionBranchPoint::parent(), successors);
    llvm::SmallBitVector forwarded(op->getNumOperands());
    for (RegionSuccessor &s : successors)
      markForwarded(forwarded, op.getEntrySuccessorOperands(s));
    Variation control = controlOperands(op, forwarded, *this);
    // Terminators that decide to run a region again (scf.condition).
    SmallVector<Operation *> terminators;
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (auto t = dyn_cast<RegionBranchTerminatorOpInterface>(
                block.getTerminator()))
          terminators.push_back(t);
    auto flowEntry = [&](const Variation &ctl) {
      for (RegionSuccessor &s : successors) {
        OperandRange operands = op.getEntrySuccessorOperands(s);
        ValueRange inputs = s.getSuccessorInputs();
        for (auto [to, from] : llvm::zip(inputs, operands))
          flowInto(to, from, ctl, /*feedsBack=*/true);
        // What is not forwarded (an induction variable) follows the
        // control.
        if (Region *region = s.getSuccessor())
          if (!region->empty())
            for (BlockArgument arg : region->front().getArguments())
              if (!llvm::is_contained(inputs, arg))
                setValue(arg, ctl, {}, /*feedsBack=*/true);
      }
    };
    Variation full = control;
    // A terminator's control (computed in the last visit) decides too.
    if (auto it = out.controls.find(op); it != out.controls.end())
      full.join(it->second);
    flowEntry(full);
    for (Region &region : op->getRegions())
      visitRegion(region);
    for (Operation *t : terminators) {
      auto term = cast<RegionBranchTerminatorOpInterface>(t);
      SmallVector<RegionSuccessor> next;
      op.getSuccessorRegions(RegionBranchPoint(term), next);
      llvm::SmallBitVector fwd(t->getNumOperands());
      for (RegionSuccessor &s : next)
        markForwarded(fwd, term.getSuccessorOperands(s));
      Variation termControl = controlOperands(t, fwd, *this);
      if (!termControl.empty() && out.controls[op].join(termControl))
        changed = true;
      full.join(termControl);
      for (RegionSuccessor &s : next) {
        OperandRange operands = term.getSuccessorOperands(s);
        for (auto [to, from] : llvm::zip(s.getSuccessorInputs(), operands))
          flowInto(to, from, full, /*feedsBack=*/true);
      }
    }
    // Results not reached by a forwarded value still follow the control.
    for (Value r : op->getResults())
      setValue(r, full, {}, /*feedsBack=*/true);
    setControl(op, full);
  }

  /// An op with regions dist knows nothing of: everything it takes may
  /// reach every value of its regions and every result, and decide whether
  /// its regions run.
  void visitUnknownRegionOp(Operation *op) {
    Variation v;
    CastAways c;
    for (Value operand : op->getOperands()) {
      v.join(of(operand));
      joinCastAways(c, castAwayOf(operand));
    }
    setControl(op, v);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          setValue(arg, v, c, /*feedsBack=*/true);
    for (Region &region : op->getRegions())
      visitRegion(region);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (!block.empty() && block.back().hasTrait<OpTrait::IsTerminator>())
          for (Value operand : block.back().getOperands()) {
            v.join(of(operand));
            joinCastAways(c, castAwayOf(operand));
          }
    for (Value r : op->getResults())
      setValue(r, v, c, /*feedsBack=*/true);
  }

  /// A branch forwards operands to its successors' arguments; the others
  /// (a cond_br's flag) decide where control goes, so the successors'
  /// arguments follow them too.
  void visitBranch(BranchOpInterface branch) {
    Operation *op = branch;
    llvm::SmallBitVector forwarded(op->getNumOperands());
    for (unsigned i = 0; i < op->getNumSuccessors(); ++i)
      markForwarded(forwarded,
                    branch.getSuccessorOperands(i).getForwardedOperands());
    Variation control = controlOperands(op, forwarded, *this);
    setControl(op, control);
    if (!control.empty() && op->getNumSuccessors() > 1)
      joinControlIntoMerges(op, control);
    for (unsigned i = 0; i < op->getNumSuccessors(); ++i) {
      SuccessorOperands operands = branch.getSuccessorOperands(i);
      Block *dest = op->getSuccessor(i);
      for (auto [j, arg] : llvm::enumerate(dest->getArguments())) {
        Variation v = control;
        CastAways c;
        if (std::optional<Value> from = operands[j]) {
          v.join(of(*from));
          c = castAwayOf(*from);
        }
        setValue(arg, v, c, /*feedsBack=*/true);
      }
    }
  }

  /// A branch whose flag differs between processes sends them along
  /// different paths; where the paths meet, a block argument may take a
  /// different edge's value on each process, whatever forwards it (plain
  /// `cf.br`s of constants included). So the arguments of every block
  /// reached from `op` up to and including its immediate post-dominator
  /// (where every path has met again) follow `control`, except one that
  /// every edge into its block gives the same value. A path that leaves the
  /// function without meeting the others has no post-dominator: then every
  /// block reached follows.
  void joinControlIntoMerges(Operation *op, const Variation &control) {
    Block *meet = controlDependence.getMeetingPoint(op->getBlock());
    SmallVector<Block *> worklist(op->getSuccessors());
    llvm::SmallPtrSet<Block *, 8> seen(worklist.begin(), worklist.end());
    while (!worklist.empty()) {
      Block *block = worklist.pop_back_val();
      for (BlockArgument arg : block->getArguments())
        if (!sameOnEveryEdge(arg))
          setValue(arg, control, {}, /*feedsBack=*/true);
      if (block == meet)
        continue;
      for (Block *succ : block->getSuccessors())
        if (seen.insert(succ).second)
          worklist.push_back(succ);
    }
  }

  /// Whether every edge into `arg`'s block forwards one and the same value
  /// to it.
  static bool sameOnEveryEdge(BlockArgument arg) {
    Value common;
    for (auto it = arg.getOwner()->pred_begin(), e = arg.getOwner()->pred_end();
         it != e; ++it) {
      auto branch = dyn_cast<BranchOpInterface>((*it)->getTerminator());
      if (!branch)
        return false;
      std::optional<Value> value = branch.getSuccessorOperands(
          it.getSuccessorIndex())[arg.getArgNumber()];
      if (!value || (common && *value != common))
        return false;
      common = *value;
    }
    return static_cast<bool>(common);
  }

  ControlDependence controlDependence;
};
} // namespace mlir::dist

VaryingAnalysis::VaryingAnalysis(Operation *root) {
  VaryingSolver solver(*this, root->getContext());
  solver.run(root);
}

Variation VaryingAnalysis::of(Value value) const {
  if (getTensorDist(value.getType())) {
    Operation *source = value.getDefiningOp();
    if (!source)
      source = value.getParentRegion()->getParentOp();
    return Variation::declared(value.getType(), source);
  }
  auto it = plain.find(value);
  return it == plain.end() ? Variation() : it->second;
}

bool VaryingAnalysis::flowIsTracked(Value value) {
  if (!getTensorDist(value.getType()))
    return false;
  if (auto arg = dyn_cast<BlockArgument>(value))
    return !(arg.getOwner()->isEntryBlock() &&
             isa<FunctionOpInterface>(arg.getOwner()->getParentOp()));
  Operation *def = value.getDefiningOp();
  return !isa<DistributionRuleInterface>(def) &&
         !isa_and_nonnull<DistDialect>(def->getDialect());
}

const Variation &VaryingAnalysis::flowOf(Value value) const {
  static const Variation none;
  auto it = flows.find(value);
  return it == flows.end() ? none : it->second;
}

const Variation &VaryingAnalysis::controlOf(Operation *op) const {
  static const Variation none;
  auto it = controls.find(op);
  return it == controls.end() ? none : it->second;
}

ArrayRef<std::pair<TensorDistAttr, Operation *>>
VaryingAnalysis::castAwayOf(Value value) const {
  auto it = castAway.find(value);
  if (it == castAway.end())
    return {};
  return it->second;
}
