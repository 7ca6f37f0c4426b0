//===- ContractionsToBlas.cpp - contractions as runtime GEMM calls --------===//
//
// Implements --dist-contractions-to-blas. Loops that LLVM vectorises
// compute a product at a fifth of the machine's rate; OpenBLAS's kernels
// block for the caches and registers. The rewrite runs on memrefs, after
// bufferization, so that the runtime sees each operand's real strides.
//
//===----------------------------------------------------------------------===//

#include "dist/Conversion/Passes.h"
#include "dist/Conversion/RuntimeCalls.h"
#include "dist/Runtime/DistRuntime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTCONTRACTIONSTOBLAS
#include "dist/Conversion/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

namespace {
/// The loops of a contraction `op` as one GEMM: its M, N and K loops, and
/// the loops around the call (all others, in the op's order).
struct GemmPlan {
  unsigned m, n, k;
  SmallVector<unsigned> outer;
  /// Whether an outer loop is missing from C, so that several GEMMs add
  /// into the same part of C.
  bool outerSums = false;
};
} // namespace

/// Whether `block` computes `out + in0 * in1` (in either order) and yields
/// it.
static bool isMulAdd(Block &block) {
  if (block.getNumArguments() != 3 || block.getOperations().size() != 3)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(block.front());
  auto add = dyn_cast_or_null<arith::AddFOp>(block.front().getNextNode());
  auto yield = dyn_cast<linalg::YieldOp>(block.back());
  if (!mul || !add || !yield || yield.getNumOperands() != 1 ||
      yield.getOperand(0) != add.getResult())
    return false;
  Value a = block.getArgument(0), b = block.getArgument(1),
        c = block.getArgument(2);
  auto isPair = [](Value x, Value y, Value p, Value q) {
    return (x == p && y == q) || (x == q && y == p);
  };
  return isPair(mul.getLhs(), mul.getRhs(), a, b) &&
         isPair(add.getLhs(), add.getRhs(), c, mul.getResult());
}

/// The position of loop `loop` among `map`'s results, or -1.
static int64_t positionIn(AffineMap map, unsigned loop) {
  for (auto [i, e] : llvm::enumerate(map.getResults()))
    if (cast<AffineDimExpr>(e).getPosition() == loop)
      return i;
  return -1;
}

/// `op` as a GEMM, or nothing when it is not a contraction BLAS computes.
static std::optional<GemmPlan> planGemm(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !isMulAdd(*op.getBlock()))
    return std::nullopt;
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1],
        c = op.getDpsInits()[0];
  if (c == a || c == b)
    return std::nullopt;
  Type element;
  for (Value v : {a, b, c}) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || (element && type.getElementType() != element))
      return std::nullopt;
    element = type.getElementType();
  }
  if (!element.isF32() && !element.isF64())
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (AffineMap map : maps)
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false) ||
        map.getNumSymbols() != 0)
      return std::nullopt;

  // Of each kind, the loop innermost in C (K: in A).
  std::optional<unsigned> m, n, k;
  auto later = [](std::optional<unsigned> &best, unsigned loop, AffineMap map) {
    if (!best || positionIn(map, loop) > positionIn(map, *best))
      best = loop;
  };
  for (unsigned loop = 0, e = op.getNumLoops(); loop < e; ++loop) {
    bool inA = positionIn(maps[0], loop) >= 0,
         inB = positionIn(maps[1], loop) >= 0,
         inC = positionIn(maps[2], loop) >= 0;
    if (inA && inC && !inB)
      later(m, loop, maps[2]);
    else if (inB && inC && !inA)
      later(n, loop, maps[2]);
    else if (inA && inB && !inC)
      later(k, loop, maps[0]);
  }
  if (!m || !n || !k)
    return std::nullopt;
  GemmPlan plan{*m, *n, *k, {}};
  for (unsigned loop = 0, e = op.getNumLoops(); loop < e; ++loop) {
    if (loop == plan.m || loop == plan.n || loop == plan.k)
      continue;
    plan.outer.push_back(loop);
    plan.outerSums |= positionIn(maps[2], loop) < 0;
  }
  return plan;
}

/// The fully dynamic 2-D strided memref type the runtime functions take.
static MemRefType gemmOperandType(Type element) {
  MLIRContext *ctx = element.getContext();
  int64_t dyn = ShapedType::kDynamic;
  return MemRefType::get(
      {dyn, dyn}, element,
      StridedLayoutAttr::get(ctx, /*offset=*/dyn, /*strides=*/{dyn, dyn}));
}

/// The `rows x cols` matrix of `operand` (indexed by `map`) at the outer
/// loops' `ivs`: a rank-reducing subview, transposed when `cols` comes
/// first, cast to the runtime's operand type.
static Value matrixView(OpBuilder &b, Location loc, Value operand,
                        AffineMap map, unsigned rows, unsigned cols,
                        const DenseMap<unsigned, Value> &ivs) {
  auto type = cast<MemRefType>(operand.getType());
  Value view = operand;
  if (type.getRank() != 2) {
    SmallVector<OpFoldResult> offsets, sizes,
        strides(type.getRank(), b.getIndexAttr(1));
    SmallVector<int64_t> shape;
    for (auto [dim, e] : llvm::enumerate(map.getResults())) {
      unsigned loop = cast<AffineDimExpr>(e).getPosition();
      if (Value iv = ivs.lookup(loop)) {
        offsets.push_back(iv);
        sizes.push_back(b.getIndexAttr(1));
        continue;
      }
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(memref::getMixedSize(b, loc, operand, dim));
      shape.push_back(type.getDimSize(dim));
    }
    auto viewType = memref::SubViewOp::inferRankReducedResultType(
        shape, type, offsets, sizes, strides);
    view = memref::SubViewOp::create(b, loc, viewType, operand, offsets, sizes,
                                     strides);
  }
  if (positionIn(map, cols) < positionIn(map, rows)) {
    AffineMap swap =
        AffineMap::getPermutationMap(ArrayRef<unsigned>{1, 0}, b.getContext());
    view = memref::TransposeOp::create(b, loc, view, AffineMapAttr::get(swap));
  }
  return memref::CastOp::create(b, loc, gemmOperandType(type.getElementType()),
                                view);
}

/// The `linalg.fill` of zero into `op`'s result right before `op`, if any.
static linalg::FillOp zeroFillBefore(linalg::LinalgOp op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || fill.getDpsInits()[0] != op.getDpsInits()[0] ||
      !matchPattern(fill.getDpsInputs()[0], m_AnyZeroFloat()))
    return nullptr;
  return fill;
}

/// Replaces `op` by the loops and calls of `plan`; false (and an error at
/// `op`) when the module defines the runtime function's name otherwise.
static bool rewriteAsGemm(linalg::LinalgOp op, const GemmPlan &plan) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  MemRefType operandType = gemmOperandType(element);
  auto calleeType = b.getFunctionType(
      {operandType, operandType, operandType, b.getI64Type()}, {});
  std::string name =
      std::string(DIST_RUNTIME_GEMM_PREFIX) + (element.isF32() ? "f32" : "f64");
  func::FuncOp callee = getOrDeclareRuntimeFunction(b, op, name, calleeType,
                                                    /*cInterface=*/true);
  if (!callee)
    return false;

  bool accumulate = true;
  if (!plan.outerSums)
    if (linalg::FillOp fill = zeroFillBefore(op)) {
      fill.erase();
      accumulate = false;
    }
  Value flag = arith::ConstantIntOp::create(b, loc, accumulate, 64);
  SmallVector<Range> ranges = op.createLoopRanges(b, loc);
  SmallVector<Value> lbs, ubs, steps;
  for (unsigned loop : plan.outer) {
    lbs.push_back(getValueOrCreateConstantIndexOp(b, loc, ranges[loop].offset));
    ubs.push_back(getValueOrCreateConstantIndexOp(b, loc, ranges[loop].size));
    steps.push_back(
        getValueOrCreateConstantIndexOp(b, loc, ranges[loop].stride));
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1],
        c = op.getDpsInits()[0];
  scf::buildLoopNest(
      b, loc, lbs, ubs, steps,
      [&](OpBuilder &nb, Location nloc, ValueRange ivValues) {
        DenseMap<unsigned, Value> ivs;
        for (auto [loop, iv] : llvm::zip_equal(plan.outer, ivValues))
          ivs[loop] = iv;
        Value va = matrixView(nb, nloc, a, maps[0], plan.m, plan.k, ivs);
        Value vb = matrixView(nb, nloc, bm, maps[1], plan.k, plan.n, ivs);
        Value vc = matrixView(nb, nloc, c, maps[2], plan.m, plan.n, ivs);
        func::CallOp::create(nb, nloc, callee, ValueRange{va, vb, vc, flag});
      });
  op->erase();
  return true;
}

namespace {
struct DistContractionsToBlasPass
    : public dist::impl::DistContractionsToBlasBase<
          DistContractionsToBlasPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, GemmPlan>> gemms;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<GemmPlan> plan = planGemm(op))
        gemms.emplace_back(op, std::move(*plan));
    });
    for (auto &[op, plan] : gemms)
      if (!rewriteAsGemm(op, plan))
        return signalPassFailure();
  }
};
} // namespace
