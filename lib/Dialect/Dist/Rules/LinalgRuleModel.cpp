//===- LinalgRuleModel.cpp - distribution rules of linalg structured ops --===//
//
// Every linalg structured op gets its rule from what it is: its indexing
// maps and iterator types give the factor form (inferFactors), the region
// gives each reduction's combiner (the op that yields the accumulator) and
// how the results depend on partial operands. A partial sum passes only
// through a body that is linear in the partial operands (products with
// other values, sums of partial values, copies); anything else (exp, a
// quotient by a partial value, a max of sums) rejects it.
//
//===----------------------------------------------------------------------===//

#include "RuleModelUtils.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::rules;

/// How a value of a body depends on a set of its block arguments.
enum class Dependence { None, Linear, Other };

namespace {
/// The dependence of each value of a body on the block arguments `vars`,
/// in one pass over the block (SSA order).
class BodyDependence {
public:
  BodyDependence(Block &body, const llvm::SmallBitVector &vars)
      : body(body), vars(vars) {
    for (Operation &op : body.without_terminator()) {
      auto operand = [&](unsigned i) { return of(op.getOperand(i)); };
      Dependence d;
      auto none = Dependence::None, other = Dependence::Other;
      if (op.getNumRegions() > 0) {
        // What a nested region reads is not among the op's operands: any
        // dependence at all is taken as a nonlinear one.
        d = vars.none() ? none : other;
      } else if (isa<arith::AddFOp, arith::SubFOp, arith::AddIOp,
                     arith::SubIOp>(op)) {
        // A sum of linear terms is linear; a linear term plus a value that
        // does not depend on them is affine, not linear.
        Dependence a = operand(0), b = operand(1);
        d = a == b ? a : other;
      } else if (isa<arith::MulFOp, arith::MulIOp>(op)) {
        Dependence a = operand(0), b = operand(1);
        d = a == none ? b : b == none ? a : other;
      } else if (isa<arith::DivFOp>(op)) {
        // Linear in the dividend only.
        d = operand(1) == none ? operand(0) : other;
      } else if (isa<arith::NegFOp, arith::ExtFOp>(op)) {
        d = operand(0);
      } else {
        d = none;
        for (Value v : op.getOperands())
          if (of(v) != none)
            d = other;
      }
      for (Value r : op.getResults())
        deps[r] = d;
    }
  }

  Dependence of(Value v) const {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == &body && vars.test(arg.getArgNumber())
                 ? Dependence::Linear
                 : Dependence::None;
    auto it = deps.find(v);
    return it == deps.end() ? Dependence::None : it->second;
  }

private:
  Block &body;
  const llvm::SmallBitVector &vars;
  llvm::DenseMap<Value, Dependence> deps;
};
} // namespace

/// The combiner of a reduction output whose yielded value is `yielded`
/// and accumulator `acc`, and the combined value, if `yielded` is
/// `combiner(acc, e)` or `combiner(e, acc)`.
static std::optional<std::pair<ReductionKind, Value>>
matchCombiner(Value yielded, BlockArgument acc) {
  Operation *op = yielded.getDefiningOp();
  if (!op || op->getNumOperands() != 2 || op->getBlock() != acc.getOwner())
    return std::nullopt;
  std::optional<ReductionKind> kind =
      llvm::TypeSwitch<Operation *, std::optional<ReductionKind>>(op)
          .Case<arith::AddFOp, arith::AddIOp>(
              [](auto) { return ReductionKind::Sum; })
          .Case<arith::MulFOp, arith::MulIOp>(
              [](auto) { return ReductionKind::Prod; })
          .Case<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp,
                arith::MaxUIOp>([](auto) { return ReductionKind::Max; })
          .Case<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp,
                arith::MinUIOp>([](auto) { return ReductionKind::Min; })
          .Default([](Operation *) { return std::nullopt; });
  if (!kind)
    return std::nullopt;
  Value a = op->getOperand(0), b = op->getOperand(1);
  if (a == acc && b != acc)
    return std::pair{*kind, b};
  if (b == acc && a != acc)
    return std::pair{*kind, a};
  return std::nullopt;
}

/// Whether `init` is the identity of `kind` everywhere: a linalg.fill or a
/// splat constant of 0 (sum), 1 (prod).
static bool isIdentityInit(Value init, ReductionKind kind) {
  Attribute value;
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    if (!matchPattern(fill.getInputs()[0], m_Constant(&value)))
      return false;
  } else if (!matchPattern(init, m_Constant(&value))) {
    return false;
  }
  if (auto dense = dyn_cast<SplatElementsAttr>(value))
    value = dense.getSplatValue<Attribute>();
  double identity = kind == ReductionKind::Prod ? 1.0 : 0.0;
  if (auto f = dyn_cast<FloatAttr>(value))
    return f.getValueAsDouble() == identity;
  if (auto i = dyn_cast<IntegerAttr>(value))
    return i.getValue() == static_cast<int64_t>(identity);
  return false;
}

static bool isIdempotent(ReductionKind kind) {
  return kind == ReductionKind::Max || kind == ReductionKind::Min;
}

/// A linalg op's result: the value whose dependence on partial operands
/// decides how the result is partial (the combined value of a reduction),
/// the combiner and the init.
struct Output {
  Value expr;
  std::optional<ReductionKind> combiner;
  Value init;
  bool readsInit;
};

/// The partial-operand rule of a linalg op whose `body` computes `outputs`
/// (its factor results `results`) from `numInputs` inputs and the inits, with
/// reduction loops or not: operands `holders`, partial with `kind` over mesh
/// axis `axis`, pass to each result as its computation allows.
static LogicalResult passPartials(
    Block &body, unsigned numInputs, bool hasReduction,
    ArrayRef<Output> outputs, ArrayRef<FactorResult> results, MeshAttr mesh,
    int64_t axis, ArrayRef<unsigned> holders, ReductionKind kind,
    ArrayRef<std::optional<ReductionKind>> fromLoops,
    MutableArrayRef<std::optional<ReductionKind>> kinds, raw_ostream &whyNot) {
  auto why = [&]() -> raw_ostream & {
    return whyNot << "operand #" << holders.front() << " is partial ("
                  << stringifyReductionKind(kind) << ") over mesh "
                  << axisName(mesh, axis) << ": ";
  };
  llvm::SmallBitVector vars(body.getNumArguments());
  for (unsigned i : holders)
    vars.set(i);
  BodyDependence deps(body, vars);
  for (auto [k, out] : llvm::enumerate(outputs)) {
    unsigned initOperand = numInputs + k;
    bool initPartial = out.combiner && vars.test(initOperand);
    Dependence d = deps.of(out.expr);
    if (d == Dependence::None && !initPartial)
      continue;
    if (d == Dependence::Other) {
      why() << "result #" << k << " is not linear in it";
      return failure();
    }
    bool linearKind = isLinearKind(kind);
    if (!linearKind) {
      // A max, min or product passes only as itself: copied, or
      // combined by its own kind.
      bool copied = isa<BlockArgument>(out.expr) || d == Dependence::None;
      if (!copied || (out.combiner && *out.combiner != kind) ||
          (hasReduction && !out.combiner)) {
        why() << "only sums and averages pass through the computation of "
                 "result #"
              << k;
        return failure();
      }
    } else if (out.combiner && *out.combiner != ReductionKind::Sum) {
      why() << "result #" << k << " combines with "
            << stringifyReductionKind(*out.combiner)
            << ", which does not commute with a pending sum";
      return failure();
    }
    // The accumulator is added once per process unless it is partial
    // too (or the identity, or the combination is idempotent).
    if (out.combiner && !initPartial && !isIdempotent(*out.combiner) &&
        !results[k].initIsIdentity) {
      why() << "result #" << k
            << " accumulates into an initial value that is neither partial "
               "nor the identity of its "
            << stringifyReductionKind(*out.combiner)
            << ": every process would count it once";
      return failure();
    }
    if (initPartial && d == Dependence::None && !fromLoops[k] &&
        !isIdempotent(*out.combiner)) {
      why() << "result #" << k
            << " adds values that are not partial to a partial initial "
               "value: every process would count them once";
      return failure();
    }
    kinds[k] = kind;
  }
  return success();
}

/// Refuses a body that reads the index of a loop `operands` split:
/// linalg.index reads a loop's position, which a process sees from the start
/// of its own block (on a split loop, a local index).
static LogicalResult rejectSplitIndex(linalg::LinalgOp linalgOp,
                                      ArrayRef<FactorOperand> operands,
                                      MeshAttr mesh, raw_ostream &whyNot) {
  unsigned numLoops = linalgOp.getNumLoops();
  SmallVector<int64_t> loopAxis(numLoops, -1);
  for (const FactorOperand &operand : operands) {
    Dist d = Dist::of(operand.type, mesh);
    for (auto [dim, loop] : llvm::enumerate(operand.loops))
      if (loop >= 0 && loop < static_cast<int64_t>(numLoops) &&
          dim < d.dims.size() && d.dims[dim] >= 0)
        loopAxis[loop] = d.dims[dim];
  }
  std::optional<std::pair<int64_t, int64_t>> splitIndex;
  linalgOp->walk([&](linalg::IndexOp index) {
    if (index->getParentOfType<linalg::LinalgOp>() != linalgOp ||
        index.getDim() >= numLoops || loopAxis[index.getDim()] < 0)
      return WalkResult::advance();
    splitIndex = {index.getDim(), loopAxis[index.getDim()]};
    return WalkResult::interrupt();
  });
  if (splitIndex) {
    whyNot << "the body reads the index of loop " << splitIndex->first
           << ", which is split over mesh "
           << axisName(mesh, splitIndex->second)
           << ": each process would see the index within its block, not "
              "the global one";
    return failure();
  }
  return success();
}

/// Appends to `key` what the rule reads of `op`'s region: every op in it
/// (nested ones too, for linalg.index) with its attributes and how each of
/// its operands is defined (an argument of a block in the region, a result
/// of an op in it, or a value from outside, which the rule takes as
/// independent of the operands). Two bodies with equal keys compute the
/// same function of the block arguments, so their rules agree.
static void appendBodyKey(Operation *op, SmallVectorImpl<const void *> &key) {
  using rules::detail::keyWord;
  llvm::DenseMap<Operation *, uintptr_t> index;
  llvm::DenseMap<Block *, uintptr_t> blocks;
  for (Region &region : op->getRegions())
    region.walk<WalkOrder::PreOrder>(
        [&](Block *block) { blocks.try_emplace(block, blocks.size()); });
  key.push_back(keyWord(blocks.size()));
  for (Region &region : op->getRegions())
    region.walk<WalkOrder::PreOrder>([&](Operation *inner) {
      index.try_emplace(inner, index.size());
      key.append({inner->getName().getAsOpaquePointer(),
                  inner->getAttrDictionary().getAsOpaquePointer(),
                  keyWord(inner->getNumOperands()),
                  keyWord(inner->getNumResults()),
                  keyWord(inner->getNumRegions())});
      for (Value operand : inner->getOperands()) {
        if (auto arg = dyn_cast<BlockArgument>(operand)) {
          auto it = blocks.find(arg.getOwner());
          if (it != blocks.end()) {
            key.append(
                {keyWord(1), keyWord(it->second), keyWord(arg.getArgNumber())});
            continue;
          }
        } else if (auto it = index.find(operand.getDefiningOp());
                   it != index.end()) {
          key.append({keyWord(2), keyWord(it->second),
                      keyWord(cast<OpResult>(operand).getResultNumber())});
          continue;
        }
        key.append({keyWord(3), keyWord(0), keyWord(0)});
      }
    });
}

namespace {
template <typename OpTy>
struct LinalgRuleModel
    : public DistributionRuleInterface::ExternalModel<LinalgRuleModel<OpTy>,
                                                      OpTy> {
  /// The rule reads more than the op's types and attributes: its body
  /// (the combiners, what is linear in a partial operand) and whether each
  /// init is a constant identity (isIdentityInit). A check remembered for
  /// a sum must not answer for a max of the same types.
  void appendRuleAttributes(Operation *op,
                            SmallVectorImpl<const void *> &key) const {
    rules::appendInherentAttributes(op, key);
    appendBodyKey(op, key);
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      key.push_back(rules::detail::constantKeyWord(fill.getInputs()[0]));
      return;
    }
    for (Value init : cast<linalg::LinalgOp>(op).getDpsInits()) {
      auto fill = init.getDefiningOp<linalg::FillOp>();
      key.push_back(rules::detail::keyWord(fill ? 2 : 3));
      key.push_back(
          rules::detail::constantKeyWord(fill ? fill.getInputs()[0] : init));
    }
  }

  FailureOr<SmallVector<Dist>>
  inferResultDistributions(Operation *op, TypeRange operandTypes,
                           TypeRange resultTypes, raw_ostream &whyNot) const {
    if (auto fill = dyn_cast<linalg::FillOp>(op))
      return inferFill(fill, operandTypes, resultTypes, whyNot);
    auto linalgOp = cast<linalg::LinalgOp>(op);
    FailureOr<MeshAttr> mesh = commonMesh(operandTypes, resultTypes, whyNot);
    if (failed(mesh))
      return failure();
    if (!linalgOp.hasPureTensorSemantics()) {
      whyNot << "a linalg op on memrefs has no distribution rule";
      return failure();
    }
    SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
    unsigned numLoops = linalgOp.getNumLoops();
    auto loopsOf = [](AffineMap map) {
      SmallVector<int64_t> loops;
      for (AffineExpr e : map.getResults())
        loops.push_back(
            isa<AffineDimExpr>(e)
                ? static_cast<int64_t>(cast<AffineDimExpr>(e).getPosition())
                : int64_t(-1));
      return loops;
    };
    SmallVector<FactorOperand> operands;
    for (OpOperand &operand : op->getOpOperands()) {
      FactorOperand f{given(operandTypes, operand), {}};
      if (isa<RankedTensorType>(f.type))
        f.loops = loopsOf(maps[operand.getOperandNumber()]);
      operands.push_back(std::move(f));
    }

    Block &body = *linalgOp.getBlock();
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    bool hasReduction = linalgOp.getNumReductionLoops() > 0;
    unsigned numInputs = linalgOp.getNumDpsInputs();
    SmallVector<Output> outputs;
    SmallVector<FactorResult> results;
    for (auto [k, init] : llvm::enumerate(linalgOp.getDpsInits())) {
      BlockArgument acc = body.getArgument(numInputs + k);
      Output out{yield.getOperand(k), std::nullopt, init, !acc.use_empty()};
      if (hasReduction) {
        if (auto match = matchCombiner(out.expr, acc)) {
          out.combiner = match->first;
          out.expr = match->second;
        }
      }
      FactorResult r;
      r.loops = loopsOf(maps[numInputs + k]);
      if (llvm::is_contained(r.loops, -1)) {
        whyNot << "result #" << k << " is not indexed by one loop per dim";
        return failure();
      }
      r.combiner = out.combiner;
      r.init =
          out.readsInit ? std::optional<unsigned>(numInputs + k) : std::nullopt;
      r.initIsIdentity = out.combiner && isIdentityInit(init, *out.combiner);
      results.push_back(std::move(r));
      outputs.push_back(out);
    }

    auto partials = [&](int64_t axis, ArrayRef<unsigned> holders,
                        ReductionKind kind,
                        ArrayRef<std::optional<ReductionKind>> fromLoops,
                        MutableArrayRef<std::optional<ReductionKind>> kinds,
                        raw_ostream &whyNot) {
      return passPartials(body, numInputs, hasReduction, outputs, results,
                          *mesh, axis, holders, kind, fromLoops, kinds, whyNot);
    };
    if (failed(rejectSplitIndex(linalgOp, operands, *mesh, whyNot)))
      return failure();
    return inferFactors(*mesh, numLoops, operands, results, partials, whyNot);
  }

  /// A fill writes one value everywhere: the init's splits, and those of
  /// its partial axes whose reduction gives that value back when every
  /// process holds it (max, min and avg of any value, a sum of zeros, a
  /// product of ones), so that an accumulator can be declared partial.
  static FailureOr<SmallVector<Dist>> inferFill(linalg::FillOp fill,
                                                TypeRange operandTypes,
                                                TypeRange resultTypes,
                                                raw_ostream &whyNot) {
    FailureOr<MeshAttr> mesh = commonMesh(operandTypes, resultTypes, whyNot);
    if (failed(mesh))
      return failure();
    Dist init =
        Dist::of(given(operandTypes, *fill.getDpsInitOperand(0)), *mesh);
    Dist out = init;
    out.partial.clear();
    for (auto [axis, kind] : init.partial) {
      bool keeps =
          kind == ReductionKind::Max || kind == ReductionKind::Min ||
          kind == ReductionKind::Avg ||
          ((kind == ReductionKind::Sum || kind == ReductionKind::Prod) &&
           isIdentityInit(fill.getResult(0), kind));
      if (keeps)
        out.partial.emplace_back(axis, kind);
    }
    return SmallVector<Dist>{std::move(out)};
  }
};

} // namespace

template <typename... Ops>
static void attachLinalg(MLIRContext *ctx, rules::detail::OpList<Ops...>) {
  (Ops::template attachInterface<LinalgRuleModel<Ops>>(*ctx), ...);
}

using StructuredOps = rules::detail::OpList<
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
    >;

void mlir::dist::registerLinalgRuleModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attachLinalg(ctx, StructuredOps{});
  });
}

void mlir::dist::promiseLinalgRules(MLIRContext *ctx) {
  rules::detail::promise(ctx, StructuredOps{});
}
