//===- DistRules.h - distribution rules of ops ------------------*- C++ -*-===//
//
// What an op computes on each process, in terms of distributions: the rule
// engines the dist ops' DistributionRuleInterface implementations and the
// external models of upstream ops share, and the check that compares an
// op's declared result encodings with its rule. docs/design.md has the
// table of rules.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_RULES_DISTRULES_H
#define DIST_DIALECT_DIST_RULES_DISTRULES_H

#include "dist/Dialect/Dist/IR/DistAttrs.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Operation.h"

namespace mlir {
namespace dist {
namespace rules {

/// A distribution as rules compute it: per dim the mesh axis or -1, and the
/// partial axes with their kinds; no mesh means "no encoding" (nothing
/// distributed). Rules work on this rather than on TensorDistAttr so that
/// checking an op (which the verifier does after every pass) never uniques
/// an attribute; `toAttr` makes one when a pass or a diagnostic needs it.
struct Dist {
  MeshAttr mesh;
  SmallVector<int64_t> dims;
  SmallVector<std::pair<int64_t, ReductionKind>> partial;

  /// The encoding of `type`; replicated on `mesh` when it has none.
  static Dist of(Type type, MeshAttr mesh);
  std::optional<ReductionKind> partialKind(int64_t axis) const;
  /// Failure (and why) when a mesh axis splits two dims or both splits a
  /// dim and is partial.
  LogicalResult verify(raw_ostream &whyNot) const;
  /// The attribute (partial axes sorted), null without a mesh. The
  /// distribution must verify.
  TensorDistAttr toAttr() const;
};

/// The one mesh of the encoded types in `types`; null when none is encoded;
/// failure (and why) when two meshes differ.
FailureOr<MeshAttr> commonMesh(TypeRange types, raw_ostream &whyNot);
/// The same over `op`'s operand and result types.
FailureOr<MeshAttr> commonMesh(Operation *op, raw_ostream &whyNot);
/// The same over the types a rule is given.
FailureOr<MeshAttr> commonMesh(TypeRange operandTypes, TypeRange resultTypes,
                               raw_ostream &whyNot);

/// The type a rule is given for `use`, an operand of the op it answers for
/// (DistributionRuleInterface::inferResultDistributions).
inline Type given(TypeRange operandTypes, OpOperand &use) {
  return operandTypes[use.getOperandNumber()];
}

/// Whether a partial value of this kind may pass through a linear map
/// (x -> sum_i a_i x_i): sums and averages may; max, min and products not.
bool isLinearKind(ReductionKind kind);

/// "axis 1 (mp)": a mesh axis as a diagnostic names it.
std::string axisName(MeshAttr mesh, int64_t axis);

/// An operand of a contraction: its type and, per dim, the loop it indexes.
struct ContractionOperand {
  Type type;
  SmallVector<unsigned> loops;
};

/// The result of a contraction (a matmul or one of its gradients) over
/// `numLoops` loops: each loop takes the mesh axis its operand dims are
/// split over (they must agree), the result's dims are `resultLoops`, and a
/// split loop that is summed over makes the result partial (sum) on its
/// axis. A partial operand passes its partial sums/averages through (the
/// contraction is linear in each operand); two operands partial on one axis
/// would be a product of sums.
FailureOr<Dist> inferContraction(MeshAttr mesh,
                                 ArrayRef<ContractionOperand> operands,
                                 ArrayRef<unsigned> resultLoops,
                                 raw_ostream &whyNot);

/// The factor form of a rule (Shardy's factors; the einsum notation of
/// Paddle's SPMD rules): the op's loops, and per operand and result dim the
/// loop it runs over. An operand of the factor form.
struct FactorOperand {
  Type type;
  /// Per dim, the loop it runs over, or -1 for a dim indexed otherwise (a
  /// constant or a sum of loops), which must not be split.
  SmallVector<int64_t> loops;
};

/// A result of the factor form.
struct FactorResult {
  /// Per dim, the loop it runs over; every loop a result dim does not run
  /// over is a reduction for that result.
  SmallVector<int64_t> loops;
  /// How the result combines over its reduction loops: a split reduction
  /// loop leaves it partial with this kind. None when it cannot be told
  /// (then no reduction loop may be split).
  std::optional<ReductionKind> combiner;
  /// The operand that is the result's initial value, when the combination
  /// reads it: unless it is the combiner's identity (`initIsIdentity`),
  /// partial like the result, or the combiner is idempotent (max, min), a
  /// split reduction loop would count it once per process.
  std::optional<unsigned> init;
  bool initIsIdentity = false;
};

/// How the operands partial over mesh axis `axis` pass to the results:
/// `partialOperands` are their positions, `fromLoops` per result the kind
/// a split reduction loop already makes it partial with on that axis; the
/// callback sets, per result, the kind it is partial with (or none: the
/// result does not depend on them), or fails and says why.
using PartialOperandRule = function_ref<LogicalResult(
    int64_t axis, ArrayRef<unsigned> partialOperands, ReductionKind kind,
    ArrayRef<std::optional<ReductionKind>> fromLoops,
    MutableArrayRef<std::optional<ReductionKind>> resultKinds,
    raw_ostream &whyNot)>;

/// The results of an op in the factor form: each loop takes the mesh axis
/// its operand dims are split over (all of them alike), each result dim
/// its loop's axis, a split reduction loop makes a result partial with its
/// combiner, and partial operands pass as `partials` says.
FailureOr<SmallVector<Dist>> inferFactors(MeshAttr mesh, unsigned numLoops,
                                          ArrayRef<FactorOperand> operands,
                                          ArrayRef<FactorResult> results,
                                          PartialOperandRule partials,
                                          raw_ostream &whyNot);

/// inferFactors for one result.
FailureOr<Dist> inferFactor(MeshAttr mesh, unsigned numLoops,
                            ArrayRef<FactorOperand> operands,
                            const FactorResult &result,
                            PartialOperandRule partials, raw_ostream &whyNot);

/// How an elementwise op treats partial operands.
enum class Linearity {
  /// x + y, x - y: every operand must be partial alike (a sum of partial
  /// sums); a replicated addend would be counted once per process.
  Additive,
  /// x * y: linear in each operand, so one operand may be partial (a sum)
  /// per axis; and a product of partial products, every operand partial
  /// alike.
  Multiplicative,
  /// x / y (floating point): linear in the first operand only; a quotient
  /// of partial products, every operand partial alike.
  Dividend,
  /// max(x, y): a partial maximum passes, on any operands (max is
  /// idempotent: a replicated operand may be taken once per process).
  Maximum,
  /// min(x, y): the same for a partial minimum.
  Minimum,
  /// -x, dropout(x), x * c: linear in its one operand.
  Linear,
  /// Widening casts (extf, extsi, extui): exact, any reduction commutes.
  ExactCast,
  /// Rounding casts: only max and min commute with them.
  MonotoneCast,
  /// Anything else (integer division, exp, comparisons, select): no
  /// partial operand.
  Nonlinear,
};

/// The result of an elementwise op: operands distributed alike (an
/// unannotated operand is replicated), partial axes as `linearity` allows.
/// The factor form with one parallel loop per dim.
FailureOr<Dist> inferElementwise(MeshAttr mesh, TypeRange operands,
                                 Linearity linearity, raw_ostream &whyNot);

/// The default key of DistributionRuleInterface::appendRuleAttributes:
/// every inherent attribute of `op`. A model whose rule reads more (a
/// region, an operand's constant) appends that after it, or a check that
/// succeeded for one op is taken for another that differs only there.
void appendInherentAttributes(Operation *op,
                              SmallVectorImpl<const void *> &key);

/// Whether a value declared `declared` (null: replicated) holds what a rule
/// computes as `computed`, for a tensor of rank `rank`: the same split per
/// dim and partial axes, except that a declared max/min partial axis the
/// rule does not require is accepted (reducing equal values with max or min
/// changes nothing).
bool holds(TensorDistAttr declared, const Dist &computed, size_t rank);
/// `holds` for a result of `op`, which also accepts the one declared form
/// a rule does not compute: Paddle's data-parallel lookup gradient, whose
/// reduction --dist-parallel-embedding makes (see the rule of
/// `dist.embedding_grad`).
bool holdsResult(Operation *op, TensorDistAttr declared, const Dist &computed,
                 size_t rank);

/// Whether `op` is in a function marked `dist.complete`
/// (DistDialect::kCompleteAttrName) and takes or makes
/// an unencoded ranked tensor, so that its rule can only be checked once
/// completion has decided it.
bool isAwaitingCompletion(Operation *op);

/// Fails, with an error at the first function in `root` (itself included)
/// still marked `dist.complete` (its undecided tensors were never checked,
/// so nothing may check or lower it as if it were complete) or the first
/// dist.constraint left (completion's input, which nothing lowers).
LogicalResult requireCompleted(Operation *root);

/// Checks the declared result encodings of `op`, which implements
/// DistributionRuleInterface, against its rule, with a located diagnostic
/// that names both and the collective that would fix a missing reduction.
/// Ops with no encoded operand or result are not checked (unannotated
/// code). A declared max/min partial axis the rule does not require is
/// accepted where the value is not split: reducing equal values with max or
/// min changes nothing.
LogicalResult verifyDistributionRule(Operation *op);

/// The result distributions of `op`'s rule as attributes (null where a
/// result has none), or failure and why.
FailureOr<SmallVector<TensorDistAttr>> inferResultAttrs(Operation *op,
                                                        raw_ostream &whyNot);

/// Fails, with a diagnostic that names the registration call to make, when
/// `op` is an upstream op whose rule dist promises but the tool did not
/// register (it inserted DistDialect without registerAllDistDialects).
/// Call it before asking `op` for DistributionRuleInterface.
LogicalResult requireRegisteredRule(Operation *op);
/// Whether requireRegisteredRule fails for `op`, without a diagnostic.
bool lacksRegisteredRule(Operation *op);

} // namespace rules

/// Attaches the distribution rules of the upstream ops dist programs use on
/// encoded tensors (arith and math elementwise ops and casts, linalg
/// structured ops, tensor.collapse_shape/expand_shape) as external models.
void registerDistributionRuleModels(DialectRegistry &registry);

/// The linalg structured ops' part of registerDistributionRuleModels and
/// promiseDistributionRules (LinalgRuleModel.cpp).
void registerLinalgRuleModels(DialectRegistry &registry);
void promiseLinalgRules(MLIRContext *ctx);
/// The same for tensor.extract_slice, insert_slice, concat and pad
/// (TensorRuleModels.cpp).
void registerTensorRuleModels(DialectRegistry &registry);
void promiseTensorRules(MLIRContext *ctx);

/// Declares, on the dialects of the upstream ops that have a rule, that dist
/// implements DistributionRuleInterface for them (upstream's promised
/// interfaces), so that a tool that forgot registerDistributionRuleModels
/// fails with requireRegisteredRule's message. The dist dialect calls it
/// when it is loaded.
void promiseDistributionRules(MLIRContext *ctx);

/// The dist dialect and its external models. Prefer
/// registerAllDistDialects (dist/InitAllDist.h).
void registerDistDialect(DialectRegistry &registry);

} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_RULES_DISTRULES_H
