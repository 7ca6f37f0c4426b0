//===- Completion.h - the completion wing's one private header --*- C++ -*-===//
//
// --dist-complete is one worklist over the rules of DistRules.h; this header
// is what its files share: the Completion class (the worklist and the
// decisions it has made) and the helpers more than one of them use. Each
// file of the wing holds one job: the pass (Complete.cpp), the worklist and
// its edges (Worklist.cpp), ops with a rule and the repairs of their
// partial operands (Repairs.cpp), reshards at conflicts and their prices
// (Pricing.cpp), what collectives and reshards make (Collectives.cpp),
// guessing (Guessing.cpp) and how remarks name things (Remarks.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_COMPLETION_COMPLETION_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_COMPLETION_COMPLETION_H

#include "dist/Analysis/ControlFlowEdges.h"
#include "dist/Analysis/ReshardPlan.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/Transforms/CostModelPass.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <deque>

namespace mlir {
namespace dist {
namespace completion {

inline bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

inline TensorDistAttr distOf(Value v) { return getTensorDist(v.getType()); }

/// Unencoded or the replicated encoding written out.
inline bool isReplicated(TensorDistAttr dist) {
  return !dist || dist.isReplicated();
}

/// "replicated" or the encoding, as remarks name a distribution.
std::string describe(TensorDistAttr dist);

/// Where a value's distribution came from, for the remark at a conflict:
/// "'dist.matmul' at loc(...) computes [-1, 0]".
std::string describeOrigin(Value v, Operation *origin);

/// What a dist.constraint pinned, for the same remarks.
std::string describePin(Location loc, TensorDistAttr dist);

/// The one mesh of `op`'s encoded tensors, or null (none, or several).
MeshAttr meshOf(Operation *op);

/// Gives `v` the type `type`; a constant's value carries its type.
void retype(Value v, Type type);

/// `type` with encoding `dist`, unencoded when `dist` is replicated (the
/// local shape, which the ops were verified with, stays).
RankedTensorType withDist(Type type, TensorDistAttr dist);

/// The local type of `v`'s global tensor distributed as `dist`, or nothing
/// when a split dim does not divide. Replicated is unencoded unless
/// `explicitReplicated`.
std::optional<RankedTensorType> retyped(Value v, TensorDistAttr dist,
                                        bool explicitReplicated = false);

/// What a synchronous collective in a function being completed makes of
/// its operand's distribution; its written local shapes say where a split
/// lands. None when that cannot be told (the verifier says why once the
/// marker is gone).
std::optional<TensorDistAttr> collectiveResultDist(Operation *op);

/// What a `dist.reshard` written between two undecided types in a function
/// being completed changes its operand's distribution `from` into: its
/// written local shapes say it. A dim that grows is gathered, pending
/// reductions are completed, and a dim that shrinks by k is split over a
/// mesh axis of size k that is then free (those the reshard freed first, in
/// order). None when no axis fits.
std::optional<TensorDistAttr> reshardResultDist(RankedTensorType in,
                                                RankedTensorType out,
                                                TensorDistAttr from);

/// Along a forwarding edge (ControlFlowEdges.h) two values must have one
/// type.
using Edge = ForwardingEdge;

/// One run of completion over the functions it is given: the worklist, what
/// is still undecided, where each decision came from, and the reshards it
/// placed.
class Completion {
public:
  Completion(bool replicateUnknownOps, bool remarks, const CostModel &model)
      : replicateUnknownOps(replicateUnknownOps), remarks(remarks),
        model(model) {}

  LogicalResult run(ArrayRef<FunctionOpInterface> functions);

  unsigned numCompleted = 0, numReshards = 0;

private:
  bool isUndecided(Value v) const { return undecided.contains(v); }
  bool isKnown(Value v) const { return !isTensor(v) || !isUndecided(v); }

  void enqueue(Operation *op) {
    if (queued.insert(op).second)
      worklist.push_back(op);
  }
  void enqueueUsers(Value v);
  void decide(Value v, Type type, Operation *origin);
  /// Where `v`'s distribution came from, for remarks.
  std::string provenance(Value v) const {
    if (auto it = pins.find(v); it != pins.end())
      return describePin(it->second, distOf(v));
    return describeOrigin(v, origins.lookup(v));
  }
  LogicalResult consumeConstraint(ConstraintOp constraint, bool marked);
  LogicalResult visit(Operation *op);
  void collectEdges(Operation *op, SmallVectorImpl<Edge> &edges);
  LogicalResult visitEdge(const Edge &edge);
  LogicalResult visitRuleOp(Operation *op, DistributionRuleInterface rule);
  LogicalResult
  repairPartialOperands(Operation *op, DistributionRuleInterface rule,
                        FailureOr<SmallVector<rules::Dist>> &inferred,
                        std::string &why);
  LogicalResult decideResults(Operation *op, ArrayRef<rules::Dist> inferred,
                              StringRef pricedNot);
  LogicalResult reshardInits(Operation *op);
  LogicalResult visitOpWithoutRule(Operation *op);
  Operation *hoistCompletion(OpOperand &use);
  /// Completes a partial sum with several uses where it is made.
  LogicalResult completeFanOut(Operation *op, OpResult result);
  /// Takes back reshards inserted on trial: each use gets its old value.
  void undoReshards(ArrayRef<std::pair<OpOperand *, Value>> undo) {
    for (auto [use, old] : undo) {
      Operation *r = use->get().getDefiningOp();
      use->set(old);
      placed.erase(r);
      r->erase();
      --numReshards;
    }
  }
  LogicalResult repairInits(linalg::LinalgOp op, DistributionRuleInterface rule,
                            FailureOr<SmallVector<rules::Dist>> &inferred);
  bool reshardOperandsInstead(Operation *op, DistributionRuleInterface rule,
                              ArrayRef<rules::Dist> inferred,
                              std::string &pricedNot);
  /// The operands' candidate types for reshardOperandsInstead.
  struct OperandOptions {
    /// Each operand as it was before this op's repairs.
    SmallVector<Value> bases;
    /// The types each operand may take: as it is first, then as it was.
    SmallVector<SmallVector<Type, 4>> types;
  };
  OperandOptions operandOptions(Operation *op, MeshAttr mesh,
                                ArrayRef<Value> conflicts,
                                ArrayRef<TensorDistAttr> declared);
  std::optional<std::pair<SmallVector<unsigned>, double>>
  cheapestOperands(Operation *op, DistributionRuleInterface rule,
                   const OperandOptions &options);
  void reshardOperands(Operation *op, const OperandOptions &options,
                       ArrayRef<unsigned> choice, ArrayRef<Value> conflicts,
                       double seconds, double asIs);
  std::optional<double> reshardSeconds(RankedTensorType from,
                                       RankedTensorType to) const;
  LogicalResult visitCallResults(CallOpInterface call);
  bool guess();
  bool guessOperands(Operation *op);
  bool guessFromEdgesOrReplicated(Operation *op, ArrayRef<OpOperand *> open);
  SmallVector<SmallVector<TensorDistAttr>> guessCandidates(Operation *op,
                                                           MeshAttr mesh);
  bool tryCandidate(Operation *op, DistributionRuleInterface rule,
                    ArrayRef<OpOperand *> open, ArrayRef<TensorDistAttr> c,
                    SmallVectorImpl<Type> &chosen);
  FailureOr<Value> reshard(OpBuilder &b, Location loc, Value v, Type to);
  FailureOr<Value> reshardUses(OpResult result, Type declared);
  void finish(ArrayRef<FunctionOpInterface> functions);

  SymbolTableCollection symbols;
  bool replicateUnknownOps;
  /// Whether each reshard placed gets a remark that says why.
  bool remarks;
  /// A remark at `op` when remarks are on, else a diagnostic that reports
  /// nothing.
  InFlightDiagnostic remarkAt(Operation *op, const Twine &message) {
    if (!remarks)
      return InFlightDiagnostic();
    return op->emitRemark(message);
  }
  /// Prices the places a partial sum can be completed at, and reshards
  /// before an op against after it.
  const CostModel &model;
  /// Unencoded tensors whose distribution is not decided yet.
  llvm::DenseSet<Value> undecided;
  /// The op whose rule decided a value, for remarks.
  llvm::DenseMap<Value, Operation *> origins;
  /// The values a dist.constraint pinned (where it was): written
  /// encodings, for remarks.
  llvm::DenseMap<Value, Location> pins;
  /// The reshards placed since the current op's visit began, the remarks
  /// of those that repaired its operands, and those taken back (erased:
  /// compared, never read).
  llvm::SmallPtrSet<Operation *, 4> placed;
  SmallVector<std::pair<Operation *, InFlightDiagnostic>> repairRemarks;
  llvm::SmallPtrSet<Operation *, 4> takenBack;
  /// The values completion decided (not written or pinned).
  llvm::DenseSet<Value> completed;
  /// The ops of the completed functions in program order: where guessing
  /// looks, so that it is deterministic.
  SmallVector<Operation *> order;
  /// The call sites of each function, whose results follow its returns.
  llvm::DenseMap<Operation *, SmallVector<CallOpInterface>> callers;
  std::deque<Operation *> worklist;
  llvm::DenseSet<Operation *> queued;
};

} // namespace completion
} // namespace dist
} // namespace mlir

#endif // DIST_LIB_DIALECT_DIST_TRANSFORMS_COMPLETION_COMPLETION_H
