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
#include <set>

#include <deque>

namespace mlir {
namespace dist {
namespace completion {

inline bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

/// Unencoded or the replicated encoding written out.
inline bool isReplicated(TensorDistAttr dist) {
  return !dist || dist.isReplicated();
}

/// "replicated" or the encoding, as remarks name a distribution.
std::string describe(TensorDistAttr dist);

/// Where a value's distribution (`dist`) came from, for the remark at a
/// conflict: "'dist.matmul' at loc(...) computes [-1, 0]".
std::string describeOrigin(Value v, Operation *origin, TensorDistAttr dist);

/// What a dist.constraint pinned, for the same remarks.
std::string describePin(Location loc, TensorDistAttr dist);

/// `type` with encoding `dist`, unencoded when `dist` is replicated (the
/// local shape, which the ops were verified with, stays).
RankedTensorType withDist(Type type, TensorDistAttr dist);

/// The local type of the global tensor that `type` holds a part of,
/// distributed as `dist`, or nothing when a split dim does not divide.
/// Replicated is unencoded unless `explicitReplicated`.
std::optional<RankedTensorType> retyped(RankedTensorType type,
                                        TensorDistAttr dist,
                                        bool explicitReplicated = false);

/// What a synchronous collective `op` in a function being completed makes
/// of its operand, typed `in`, when its result is typed `out`: the written
/// local shapes say where a split lands. None when that cannot be told (the
/// verifier says why once the marker is gone).
std::optional<TensorDistAttr>
collectiveResultDist(Operation *op, RankedTensorType in, RankedTensorType out);

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

/// A remark completion makes at an op. Like an InFlightDiagnostic it is
/// reported when it goes out of scope unless abandoned, but into a queue:
/// the remarks are emitted once the decisions are written, so that the op
/// each one shows is the op completion makes.
class Remark {
public:
  Remark() = default;
  Remark(SmallVectorImpl<std::pair<Operation *, Diagnostic>> *queue,
         Operation *op, const Twine &message)
      : queue(queue), op(op) {
    diag.emplace(op->getLoc(), DiagnosticSeverity::Remark);
    *diag << message;
  }
  Remark(Remark &&other)
      : queue(other.queue), op(other.op), diag(std::move(other.diag)) {
    other.diag.reset();
  }
  Remark &operator=(Remark &&other) {
    report();
    queue = other.queue;
    op = other.op;
    diag = std::move(other.diag);
    other.diag.reset();
    return *this;
  }
  ~Remark() { report(); }

  template <typename Arg> Remark &operator<<(Arg &&arg) & {
    if (diag)
      *diag << std::forward<Arg>(arg);
    return *this;
  }
  template <typename Arg> Remark &&operator<<(Arg &&arg) && {
    return std::move(*this << std::forward<Arg>(arg));
  }

  void report() {
    if (diag)
      queue->emplace_back(op, std::move(*diag));
    diag.reset();
  }
  void abandon() { diag.reset(); }

private:
  SmallVectorImpl<std::pair<Operation *, Diagnostic>> *queue = nullptr;
  Operation *op = nullptr;
  std::optional<Diagnostic> diag;
};

/// One run of completion over the functions it is given: the worklist, the
/// decisions it has made, where each came from, and the reshards it placed.
///
/// Completion decides first and writes once. A decision is an entry of the
/// decision map (`decisions`: value to type); everything completion reads
/// of a value's distribution reads the map (typeOf, distOf), rules are
/// asked for the types it holds, and the IR keeps its written types until
/// writeDecisions, the one place that changes a type. What it builds is
/// only what stays: a `dist.reshard` is created once its place and type
/// are decided, never on trial.
class Completion {
public:
  Completion(bool replicateUnknownOps, bool remarks, const CostModel &model)
      : replicateUnknownOps(replicateUnknownOps), remarks(remarks),
        model(model) {}

  LogicalResult run(ArrayRef<FunctionOpInterface> functions);

  unsigned numCompleted = 0, numReshards = 0;

private:
  //===--------------------------------------------------------------------===//
  // The decision map
  //===--------------------------------------------------------------------===//

  /// The type completion gives `v`: its decision, else its written type.
  Type typeOf(Value v) const {
    auto it = decisions.find(v);
    return it == decisions.end() ? v.getType() : it->second;
  }
  TensorDistAttr distOf(Value v) const { return getTensorDist(typeOf(v)); }
  SmallVector<Type> typesOf(ValueRange values) const {
    if (decisions.empty())
      return SmallVector<Type>(values.getTypes());
    return llvm::map_to_vector(values, [&](Value v) { return typeOf(v); });
  }
  /// What `rule` computes when `op`'s operands have the types `operands`
  /// and its results the types completion gives them.
  FailureOr<SmallVector<rules::Dist>> infer(DistributionRuleInterface rule,
                                            TypeRange operands,
                                            raw_ostream &whyNot) const {
    return rule.inferResultDistributions(operands, typesOf(rule->getResults()),
                                         whyNot);
  }
  /// The same with the results' types given (`OperandPlan::results`).
  static FailureOr<SmallVector<rules::Dist>>
  infer(DistributionRuleInterface rule, TypeRange operands, TypeRange results,
        raw_ostream &whyNot) {
    return rule.inferResultDistributions(operands, results, whyNot);
  }
  /// The one mesh of `op`'s encoded tensors as decided, or null (none, or
  /// several).
  MeshAttr meshOf(Operation *op) const;
  /// Records that `v` has the type `type`.
  void setDecision(Value v, Type type) { decisions[v] = type; }
  /// Writes every decision into the IR and reports the remarks waiting for
  /// it: at the end of a run, or before an error ends it.
  void writeDecisions();
  /// An error at `op` (or `loc`) that ends the run: the decisions so far
  /// are written first, so that it shows what completion decided.
  InFlightDiagnostic errorAt(Operation *op, const Twine &message) {
    writeDecisions();
    return op->emitOpError(message);
  }
  InFlightDiagnostic errorAt(Location loc, const Twine &message) {
    writeDecisions();
    return mlir::emitError(loc, message);
  }

  bool isUndecided(Value v) const { return undecided.contains(v); }
  /// Whether `result` of `op`, as decided now, holds what its rule
  /// computes. Paddle's data-parallel form of a lookup gradient
  /// (`rules::holdsResult`) is accepted where the input declares it, never
  /// chosen: completion reads a program as the serial one, whose gradient
  /// sums every id.
  bool holdsAsDecided(Operation *op, Value result, const rules::Dist &computed,
                      size_t rank) const {
    if (completed.contains(result) || pins.count(result))
      return rules::holds(distOf(result), computed, rank);
    return rules::holdsResult(op, distOf(result), computed, rank);
  }
  bool isKnown(Value v) const { return !isTensor(v) || !isUndecided(v); }

  //===--------------------------------------------------------------------===//
  // The worklist (Worklist.cpp)
  //===--------------------------------------------------------------------===//

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
    return describeOrigin(v, origins.lookup(v), distOf(v));
  }
  LogicalResult consumeConstraint(ConstraintOp constraint, bool marked);
  LogicalResult visit(Operation *op);
  LogicalResult visitCast(tensor::CastOp cast);
  LogicalResult visitReshard(ReshardOp reshardOp);
  void collectEdges(Operation *op, SmallVectorImpl<Edge> &edges);
  LogicalResult visitEdge(const Edge &edge);
  LogicalResult visitCallResults(CallOpInterface call);
  LogicalResult visitOpWithoutRule(Operation *op);
  /// Completes a partial sum with several uses where it is made.
  LogicalResult completeFanOut(Operation *op, OpResult result);

  //===--------------------------------------------------------------------===//
  // Ops with a rule and their repairs (Repairs.cpp)
  //===--------------------------------------------------------------------===//

  /// What visitRuleOp decides for an op's operands before it builds
  /// anything: the operands as they are (`bases`, of the types completion
  /// gives them), the types the repairs give them (the base's type where
  /// none does), and each repair's remark, reported once the repair is
  /// built. A repair hoisted up the chain of a partial value is built
  /// where it goes at once: no choice of operands takes it back.
  struct OperandPlan {
    SmallVector<Value> bases;
    SmallVector<Type> baseTypes;
    /// The results' types, as completion gives them while the op is
    /// visited.
    SmallVector<Type, 2> results;
    SmallVector<Type> repaired;
    /// Operand number and remark, of the repairs planned.
    SmallVector<std::pair<unsigned, Remark>, 0> remarks;
    SmallVector<bool> hoisted;
    bool repairs(unsigned i) const { return repaired[i] != baseTypes[i]; }
  };
  LogicalResult visitRuleOp(Operation *op, DistributionRuleInterface rule);
  LogicalResult planPartialRepairs(
      Operation *op, DistributionRuleInterface rule, OperandPlan &plan,
      FailureOr<SmallVector<rules::Dist>> &inferred, std::string &why);
  LogicalResult planInitRepairs(linalg::LinalgOp op,
                                DistributionRuleInterface rule,
                                OperandPlan &plan,
                                FailureOr<SmallVector<rules::Dist>> &inferred);
  /// Completes the partial value `use` takes where it is cheapest on its
  /// way; the op that completion then follows, or null when it stays at
  /// `use`.
  FailureOr<Operation *> hoistCompletion(OpOperand &use);
  LogicalResult decideResults(Operation *op, ArrayRef<rules::Dist> inferred,
                              StringRef pricedNot);
  LogicalResult reshardInits(Operation *op);

  //===--------------------------------------------------------------------===//
  // Reshards at conflicts and their prices (Pricing.cpp)
  //===--------------------------------------------------------------------===//

  /// The operands' candidate types for reshardOperandsInstead.
  struct OperandOptions {
    /// The types each operand may take: as the repairs leave it first, then
    /// as it was.
    SmallVector<SmallVector<Type, 4>> types;
  };
  /// The types `op`'s operands take instead of those `plan` repairs them
  /// to: reshards before the op that compute its declared results, when
  /// cheaper than reshards after it; none when the plan stands. Sets
  /// `pricedNot` to why those lost, when they did.
  std::optional<SmallVector<Type>>
  chooseOperandTypes(Operation *op, DistributionRuleInterface rule,
                     ArrayRef<rules::Dist> inferred, const OperandPlan &plan,
                     std::string &pricedNot, SmallVectorImpl<Value> &conflicts,
                     double &seconds, double &asIs);
  OperandOptions operandOptions(Operation *op, MeshAttr mesh,
                                const OperandPlan &plan,
                                ArrayRef<Value> conflicts,
                                ArrayRef<TensorDistAttr> declared);
  std::optional<std::pair<SmallVector<unsigned>, double>>
  cheapestOperands(Operation *op, DistributionRuleInterface rule,
                   const OperandPlan &plan, const OperandOptions &options);
  /// Builds the reshards that give `op`'s operands the types `chosen`: the
  /// repairs `plan` kept, then the reshards that replace the others.
  LogicalResult buildOperandReshards(Operation *op, OperandPlan &plan,
                                     ArrayRef<Type> chosen,
                                     ArrayRef<Value> conflicts, double seconds,
                                     double asIs);
  std::optional<double> reshardSeconds(RankedTensorType from,
                                       RankedTensorType to) const;
  /// Fails, with an error at `loc`, when `from` and `to` (local types) hold
  /// different global tensors, which no redistribution reconciles.
  LogicalResult checkReshardable(Location loc, Type from, Type to);
  FailureOr<Value> reshard(OpBuilder &b, Location loc, Value v, Type to);
  FailureOr<Value> reshardUses(OpResult result, Type declared);

  //===--------------------------------------------------------------------===//
  // Guessing (Guessing.cpp)
  //===--------------------------------------------------------------------===//

  bool guess();
  bool guessOperands(Operation *op);
  bool guessFromEdgesOrReplicated(Operation *op, ArrayRef<OpOperand *> open);
  SmallVector<SmallVector<TensorDistAttr>> guessCandidates(Operation *op,
                                                           MeshAttr mesh);
  bool tryCandidate(Operation *op, DistributionRuleInterface rule,
                    ArrayRef<OpOperand *> open, ArrayRef<TensorDistAttr> c,
                    SmallVectorImpl<Type> &operands,
                    SmallVectorImpl<Type> &chosen);

  LogicalResult decideAll();

  /// The functions being completed.
  ArrayRef<FunctionOpInterface> functions;
  SymbolTableCollection symbols;
  bool replicateUnknownOps;
  /// Whether each reshard placed gets a remark that says why.
  bool remarks;
  /// A remark at `op` when remarks are on, else one that reports nothing.
  Remark remarkAt(Operation *op, const Twine &message) {
    if (!remarks)
      return Remark();
    return Remark(&pendingRemarks, op, message);
  }
  /// The remarks made and not yet emitted (writeDecisions emits them).
  SmallVector<std::pair<Operation *, Diagnostic>> pendingRemarks;
  /// Prices the places a partial sum can be completed at, and reshards
  /// before an op against after it.
  const CostModel &model;
  /// The decision map: the type completion gives each value it decided, or
  /// decided otherwise than written.
  llvm::DenseMap<Value, Type> decisions;
  /// Unencoded tensors whose distribution is not decided yet.
  llvm::DenseSet<Value> undecided;
  /// The op whose rule decided a value, for remarks.
  llvm::DenseMap<Value, Operation *> origins;
  /// The values a dist.constraint pinned (where it was): written
  /// encodings, for remarks.
  llvm::DenseMap<Value, Location> pins;
  /// The values completion decided (not written or pinned).
  llvm::DenseSet<Value> completed;
  /// The ops of the completed functions in program order: where guessing
  /// looks, so that it is deterministic.
  SmallVector<Operation *> order;
  /// The positions in `order` of the ops that may still have an undecided
  /// operand (an op leaves when guessing finds it has none: values are
  /// only ever decided), and where the ops whose results and region
  /// arguments are all decided end. Guessing looks at these alone: scanning
  /// every op for every guess was quadratic in the function's size (a
  /// 96-layer GPT model guesses in every layer).
  std::set<size_t> mayGuess;
  bool mayGuessBuilt = false;
  size_t replicateStart = 0;
  /// The call sites of each function, whose results follow its returns.
  llvm::DenseMap<Operation *, SmallVector<CallOpInterface>> callers;
  std::deque<Operation *> worklist;
  llvm::DenseSet<Operation *> queued;
};

} // namespace completion
} // namespace dist
} // namespace mlir

#endif // DIST_LIB_DIALECT_DIST_TRANSFORMS_COMPLETION_COMPLETION_H
