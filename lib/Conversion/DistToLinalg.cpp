//===- DistToLinalg.cpp - lower dist compute ops to linalg ----------------===//
//
// Implements --convert-dist-to-linalg: every dist compute op becomes
// linalg.generic (and tensor/arith) on the same tensors, so that the program
// can be bufferized and run. Matmuls and their gradients are one contraction
// helper with different operand/result index maps; the dropout RNG hashes
// the *global* element index so shards of an SPMD program draw the serial
// program's mask.
//
//===----------------------------------------------------------------------===//

#include "dist/Conversion/Passes.h"
#include "dist/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_CONVERTDISTTOLINALG
#include "dist/Conversion/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

/// Used where a dropout draws "at run time": every process must draw the same
/// mask for a replicated tensor, so the runtime uses one fixed seed.
static constexpr int64_t kDefaultSeed = 0x5eed;

static Value zeroOf(OpBuilder &b, Location loc, Type type) {
  return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
}

/// A zero-filled tensor of `type` (its encoding kept).
static Value zeros(OpBuilder &b, Location loc, RankedTensorType type) {
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                        type.getElementType(),
                                        type.getEncoding());
  Value zero = zeroOf(b, loc, type.getElementType());
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

static Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::MulFOp::create(b, loc, x, y);
  return arith::MulIOp::create(b, loc, x, y);
}

static Value add(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

namespace {
/// The loops of a (batched) matmul, `batch` loops then m, n, k, and the map
/// of each operand's dims onto them.
struct MatmulLoops {
  unsigned numLoops;
  AffineMap x, y, out;
};
} // namespace

/// Loop maps for `op(x) * op(y)`, or failure when a batch dim of size 1
/// broadcasts (its gradient would need a second reduction).
static FailureOr<MatmulLoops> matmulLoops(MLIRContext *ctx, RankedTensorType x,
                                          RankedTensorType y,
                                          RankedTensorType out, bool tx,
                                          bool ty) {
  unsigned batch = out.getRank() - 2;
  unsigned m = batch, n = batch + 1, k = batch + 2, numLoops = batch + 3;
  auto operandMap = [&](RankedTensorType t, bool transpose, unsigned rowLoop,
                        unsigned colLoop) -> FailureOr<AffineMap> {
    SmallVector<AffineExpr> exprs;
    unsigned tBatch = t.getRank() - 2;
    for (unsigned j = 0; j < tBatch; ++j) {
      unsigned loop = batch - tBatch + j;
      if (t.getDimSize(j) != out.getDimSize(loop))
        return failure();
      exprs.push_back(getAffineDimExpr(loop, ctx));
    }
    exprs.push_back(getAffineDimExpr(transpose ? colLoop : rowLoop, ctx));
    exprs.push_back(getAffineDimExpr(transpose ? rowLoop : colLoop, ctx));
    return AffineMap::get(numLoops, 0, exprs, ctx);
  };
  FailureOr<AffineMap> xMap = operandMap(x, tx, m, k);
  FailureOr<AffineMap> yMap = operandMap(y, ty, k, n);
  if (failed(xMap) || failed(yMap))
    return failure();
  SmallVector<AffineExpr> outExprs;
  for (unsigned l = 0; l < batch + 2; ++l)
    outExprs.push_back(getAffineDimExpr(l, ctx));
  return MatmulLoops{numLoops, *xMap, *yMap,
                     AffineMap::get(numLoops, 0, outExprs, ctx)};
}

/// `result[outMap] = sum over the other loops of lhs[lhsMap] * rhs[rhsMap]`.
static Value contract(OpBuilder &b, Location loc, Value lhs, AffineMap lhsMap,
                      Value rhs, AffineMap rhsMap, RankedTensorType resultType,
                      AffineMap outMap) {
  SmallVector<utils::IteratorType> iterators(outMap.getNumDims(),
                                             utils::IteratorType::reduction);
  for (AffineExpr e : outMap.getResults())
    iterators[cast<AffineDimExpr>(e).getPosition()] =
        utils::IteratorType::parallel;
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, ValueRange{lhs, rhs},
      ValueRange{zeros(b, loc, resultType)},
      ArrayRef<AffineMap>{lhsMap, rhsMap, outMap}, iterators,
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value product = mul(nb, nloc, args[0], args[1]);
        linalg::YieldOp::create(nb, nloc, add(nb, nloc, args[2], product));
      });
  return generic.getResult(0);
}

static LogicalResult lowerMatmul(RewriterBase &rewriter, MatmulOp op) {
  FailureOr<MatmulLoops> loops = matmulLoops(
      op.getContext(), op.getX().getType(), op.getY().getType(),
      op.getResult().getType(), op.getTransposeX(), op.getTransposeY());
  if (failed(loops))
    return op.emitError("cannot lower a matmul whose batch dims broadcast "
                        "(size 1 against a larger size) to the runtime");
  Value result = contract(rewriter, op.getLoc(), op.getX(), loops->x,
                          op.getY(), loops->y, op.getResult().getType(),
                          loops->out);
  rewriter.replaceOp(op, result);
  return success();
}

static LogicalResult lowerMatmulGrad(RewriterBase &rewriter, MatmulGradOp op) {
  RankedTensorType out = op.getOutGrad().getType();
  FailureOr<MatmulLoops> loops =
      matmulLoops(op.getContext(), op.getX().getType(), op.getY().getType(),
                  out, op.getTransposeX(), op.getTransposeY());
  if (failed(loops))
    return op.emitError("cannot lower a matmul_grad whose batch dims "
                        "broadcast (size 1 against a larger size) to the "
                        "runtime");
  // Each gradient contracts the other operand with out_grad over the loops
  // missing from its own dims (k, or m/n, and any batch dims y lacks).
  Location loc = op.getLoc();
  Value dx = contract(rewriter, loc, op.getOutGrad(), loops->out, op.getY(),
                      loops->y, op.getXGrad().getType(), loops->x);
  Value dy = contract(rewriter, loc, op.getX(), loops->x, op.getOutGrad(),
                      loops->out, op.getYGrad().getType(), loops->y);
  rewriter.replaceOp(op, {dx, dy});
  return success();
}

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

/// The local row of `id`: `id - start`, and whether it falls in [0, rows).
static std::pair<Value, Value> localRow(OpBuilder &b, Location loc, Value id,
                                        Value start, int64_t rows) {
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
  if (!start)
    return {index, Value()};
  Value local = arith::SubIOp::create(b, loc, index, start);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value size = arith::ConstantIndexOp::create(b, loc, rows);
  // Named values: argument evaluation order would make the IR's op order
  // compiler-dependent.
  Value notBelow =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, local, zero);
  Value below =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, local, size);
  Value inRange = arith::AndIOp::create(b, loc, notBelow, below);
  return {local, inRange};
}

/// rows[p..., c] = weight[ids[p...] - start, c], zero outside the shard.
static Value gather(OpBuilder &b, Location loc, Value ids, Value weight,
                    Value start, RankedTensorType resultType) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = resultType.getRank();
  int64_t rows = cast<RankedTensorType>(weight.getType()).getDimSize(0);
  SmallVector<AffineExpr> idsExprs;
  for (unsigned d = 0; d + 1 < rank; ++d)
    idsExprs.push_back(getAffineDimExpr(d, ctx));
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, ValueRange{ids},
      ValueRange{zeros(b, loc, resultType)},
      ArrayRef<AffineMap>{AffineMap::get(rank, 0, idsExprs, ctx),
                          AffineMap::getMultiDimIdentityMap(rank, ctx)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        auto [row, inRange] = localRow(nb, nloc, args[0], start, rows);
        Value col = linalg::IndexOp::create(nb, nloc, rank - 1);
        if (inRange)
          row = arith::SelectOp::create(
              nb, nloc, inRange, row, arith::ConstantIndexOp::create(nb, nloc, 0));
        Value value =
            tensor::ExtractOp::create(nb, nloc, weight, ValueRange{row, col});
        if (inRange)
          value = arith::SelectOp::create(nb, nloc, inRange, value, args[1]);
        linalg::YieldOp::create(nb, nloc, value);
      });
  return generic.getResult(0);
}

/// grad[r, c] = sum over p with ids[p] - start == r of outGrad[p..., c].
static Value scatterAdd(OpBuilder &b, Location loc, Value ids, Value outGrad,
                        Value start, RankedTensorType gradType) {
  MLIRContext *ctx = b.getContext();
  unsigned idsRank = cast<RankedTensorType>(ids.getType()).getRank();
  unsigned numLoops = 2 + idsRank; // r, c, then the id positions.
  SmallVector<AffineExpr> idsExprs, gradExprs;
  for (unsigned d = 0; d < idsRank; ++d) {
    idsExprs.push_back(getAffineDimExpr(2 + d, ctx));
    gradExprs.push_back(getAffineDimExpr(2 + d, ctx));
  }
  gradExprs.push_back(getAffineDimExpr(1, ctx));
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::reduction);
  iterators[0] = iterators[1] = utils::IteratorType::parallel;
  auto generic = linalg::GenericOp::create(
      b, loc, gradType, ValueRange{ids, outGrad},
      ValueRange{zeros(b, loc, gradType)},
      ArrayRef<AffineMap>{AffineMap::get(numLoops, 0, idsExprs, ctx),
                          AffineMap::get(numLoops, 0, gradExprs, ctx),
                          AffineMap::get(numLoops, 0,
                                         {getAffineDimExpr(0, ctx),
                                          getAffineDimExpr(1, ctx)},
                                         ctx)},
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value row = localRow(nb, nloc, args[0], start, 0).first;
        Value here = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::eq, row,
            linalg::IndexOp::create(nb, nloc, 0));
        Value contribution = arith::SelectOp::create(
            nb, nloc, here, args[1], zeroOf(nb, nloc, args[1].getType()));
        linalg::YieldOp::create(nb, nloc, add(nb, nloc, args[2], contribution));
      });
  return generic.getResult(0);
}

static LogicalResult rejectRowSplit(Operation *op, Value weight) {
  if (TensorDistAttr dist = getTensorDist(weight.getType()))
    if (dist.getMeshAxis(0) != -1)
      return op->emitError("the table's rows are split over mesh axis ")
             << dist.getMeshAxis(0)
             << ": run --dist-parallel-embedding before lowering";
  return success();
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// splitmix64's finaliser: a counter-based generator, so element i of a mask
/// depends only on (seed, i).
static Value hash64(OpBuilder &b, Location loc, Value z) {
  auto c = [&](uint64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(int64_t(v)));
  };
  auto xorShift = [&](Value v, uint64_t s) -> Value {
    Value amount = c(s);
    Value shifted = arith::ShRUIOp::create(b, loc, v, amount);
    return arith::XOrIOp::create(b, loc, v, shifted);
  };
  // One op per statement, so the IR's order does not depend on the order a
  // compiler evaluates arguments in.
  Value golden = c(0x9E3779B97F4A7C15ull);
  z = arith::AddIOp::create(b, loc, z, golden);
  Value mixed = xorShift(z, 30);
  Value m1 = c(0xBF58476D1CE4E5B9ull);
  z = arith::MulIOp::create(b, loc, mixed, m1);
  mixed = xorShift(z, 27);
  Value m2 = c(0x94D049BB133111EBull);
  z = arith::MulIOp::create(b, loc, mixed, m2);
  return xorShift(z, 31);
}

static Value seedValue(OpBuilder &b, Location loc, DropoutOp op) {
  if (Value seed = op.getSeed()) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value v = tensor::ExtractOp::create(b, loc, seed, ValueRange{zero});
    return arith::ExtSIOp::create(b, loc, b.getI64Type(), v);
  }
  int64_t seed = op.getFixSeed() ? int64_t(*op.getFixSeed()) : 0;
  return arith::ConstantOp::create(
      b, loc, b.getI64IntegerAttr(seed ? seed : kDefaultSeed));
}

static LogicalResult lowerDropout(RewriterBase &rewriter, DropoutOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getInput().getType();
  if (op.getIsTest()) {
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
  if (!type.hasStaticShape())
    return op.emitError("cannot lower a dropout of dynamic shape");
  MLIRContext *ctx = op.getContext();
  unsigned rank = type.getRank();
  Value seed = seedValue(rewriter, loc, op);
  // The global index of a local element: dims split over axis a are offset
  // by coord(a) * local size.
  TensorDistAttr dist = getTensorDist(type);
  SmallVector<Value> offsets(rank);
  SmallVector<int64_t> globalShape(type.getShape());
  for (unsigned d = 0; d < rank; ++d) {
    int64_t axis = dist ? dist.getMeshAxis(d) : -1;
    if (axis < 0)
      continue;
    Value coord = ProcessCoordOp::create(rewriter, loc, dist.getMesh(), axis);
    Value size = arith::ConstantIndexOp::create(rewriter, loc, type.getDimSize(d));
    offsets[d] = arith::MulIOp::create(rewriter, loc, coord, size);
    globalShape[d] *= dist.getMesh().getAxisSize(axis);
  }
  double prob = op.getProb().convertToDouble();
  auto map = AffineMap::getMultiDimIdentityMap(rank, ctx);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, type, ValueRange{op.getInput()},
      ValueRange{zeros(rewriter, loc, type)}, ArrayRef<AffineMap>{map, map},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value linear = arith::ConstantIndexOp::create(b, l, 0);
        for (unsigned d = 0; d < rank; ++d) {
          Value index = linalg::IndexOp::create(b, l, d);
          if (offsets[d])
            index = arith::AddIOp::create(b, l, index, offsets[d]);
          Value extent = arith::ConstantIndexOp::create(b, l, globalShape[d]);
          Value scaled = arith::MulIOp::create(b, l, linear, extent);
          linear = arith::AddIOp::create(b, l, scaled, index);
        }
        Value counter = arith::IndexCastOp::create(b, l, b.getI64Type(), linear);
        Value hashed = hash64(b, l, counter);
        Value shift = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(32));
        Value seedHigh = arith::ShLIOp::create(b, l, seed, shift);
        Value key = arith::XOrIOp::create(b, l, hashed, seedHigh);
        // The top 24 bits of the hash, as a float in [0, 1).
        Value mask = hash64(b, l, key);
        Value top = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(40));
        Value bits = arith::ShRUIOp::create(b, l, mask, top);
        Value asFloat = arith::UIToFPOp::create(b, l, b.getF32Type(), bits);
        Value unit =
            arith::ConstantOp::create(b, l, b.getF32FloatAttr(1.0f / 16777216.0f));
        Value u = arith::MulFOp::create(b, l, asFloat, unit);
        Value threshold =
            arith::ConstantOp::create(b, l, b.getF32FloatAttr(float(prob)));
        Value keep =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, u, threshold);
        Type elementType = args[0].getType();
        Value scale = arith::ConstantOp::create(
            b, l, elementType, b.getFloatAttr(elementType, 1.0 / (1.0 - prob)));
        Value kept = arith::MulFOp::create(b, l, args[0], scale);
        Value result = arith::SelectOp::create(b, l, keep, kept, args[1]);
        linalg::YieldOp::create(b, l, result);
      });
  rewriter.replaceOp(op, generic.getResult(0));
  return success();
}

//===----------------------------------------------------------------------===//
// Scale and AMP
//===----------------------------------------------------------------------===//

/// Elementwise `x * factor` (factor an f64 attribute or a scalar value).
static Value scaleBy(OpBuilder &b, Location loc, Value x, Value factor) {
  auto type = cast<RankedTensorType>(x.getType());
  auto map = AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext());
  auto generic = linalg::GenericOp::create(
      b, loc, type, ValueRange{x}, ValueRange{zeros(b, loc, type)},
      ArrayRef<AffineMap>{map, map},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value product = arith::MulFOp::create(nb, nloc, args[0], factor);
        linalg::YieldOp::create(nb, nloc, product);
      });
  return generic.getResult(0);
}

static Value castFloat(OpBuilder &b, Location loc, Value v, Type to) {
  auto from = cast<FloatType>(v.getType());
  auto target = cast<FloatType>(to);
  if (from == target)
    return v;
  if (from.getWidth() < target.getWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

/// Whether any element of `grad` is infinite or NaN (x - x is 0 exactly for
/// finite x).
static Value anyNonFinite(OpBuilder &b, Location loc, Value grad) {
  auto type = cast<RankedTensorType>(grad.getType());
  MLIRContext *ctx = b.getContext();
  unsigned rank = type.getRank();
  auto flagType = RankedTensorType::get({}, b.getI1Type());
  Value falseValue = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
  Value empty =
      tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, b.getI1Type());
  Value init = linalg::FillOp::create(b, loc, falseValue, empty).getResult(0);
  auto generic = linalg::GenericOp::create(
      b, loc, flagType, ValueRange{grad}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                          AffineMap::get(rank, 0, {}, ctx)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value diff = arith::SubFOp::create(nb, nloc, args[0], args[0]);
        Value bad = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::UNE,
                                          diff,
                                          zeroOf(nb, nloc, diff.getType()));
        Value any = arith::OrIOp::create(nb, nloc, args[1], bad);
        linalg::YieldOp::create(nb, nloc, any);
      });
  return tensor::ExtractOp::create(b, loc, generic.getResult(0), ValueRange{});
}

static LogicalResult lowerCheckFinite(RewriterBase &rewriter,
                                      CheckFiniteAndUnscaleOp op) {
  Location loc = op.getLoc();
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value scale = tensor::ExtractOp::create(rewriter, loc, op.getScale(),
                                          ValueRange{zero});
  Value one = arith::ConstantOp::create(
      rewriter, loc, scale.getType(),
      rewriter.getFloatAttr(scale.getType(), 1.0));
  Value inverse = arith::DivFOp::create(rewriter, loc, one, scale);
  SmallVector<Value> results;
  Value found = arith::ConstantOp::create(rewriter, loc, rewriter.getBoolAttr(false));
  for (Value grad : op.getGrads()) {
    Type elementType = getElementTypeOrSelf(grad.getType());
    results.push_back(scaleBy(rewriter, loc, grad,
                              castFloat(rewriter, loc, inverse, elementType)));
    found = arith::OrIOp::create(rewriter, loc, found,
                                 anyNonFinite(rewriter, loc, grad));
  }
  results.push_back(tensor::FromElementsOp::create(
      rewriter, loc, op.getFoundInf().getType(), ValueRange{found}));
  rewriter.replaceOp(op, results);
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

static LogicalResult lower(RewriterBase &rewriter, Operation *op) {
  rewriter.setInsertionPoint(op);
  Location loc = op->getLoc();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](MatmulOp m) { return lowerMatmul(rewriter, m); })
      .Case([&](MatmulGradOp m) { return lowerMatmulGrad(rewriter, m); })
      .Case([&](EmbeddingOp e) {
        if (failed(rejectRowSplit(e, e.getWeight())))
          return failure();
        rewriter.replaceOp(e, gather(rewriter, loc, e.getIds(), e.getWeight(),
                                     Value(), e.getResult().getType()));
        return success();
      })
      .Case([&](CEmbeddingOp e) {
        rewriter.replaceOp(e, gather(rewriter, loc, e.getIds(), e.getWeight(),
                                     e.getStartIndex(),
                                     e.getResult().getType()));
        return success();
      })
      .Case([&](EmbeddingGradOp e) {
        if (failed(rejectRowSplit(e, e.getWeight())))
          return failure();
        rewriter.replaceOp(e, scatterAdd(rewriter, loc, e.getIds(),
                                         e.getOutGrad(), Value(),
                                         e.getWeightGrad().getType()));
        return success();
      })
      .Case([&](CEmbeddingGradOp e) {
        rewriter.replaceOp(e, scatterAdd(rewriter, loc, e.getIds(),
                                         e.getOutGrad(), e.getStartIndex(),
                                         e.getWeightGrad().getType()));
        return success();
      })
      .Case([&](DropoutOp d) { return lowerDropout(rewriter, d); })
      .Case([&](SeedOp s) {
        int32_t value = s.getValue() ? s.getValue() : int32_t(kDefaultSeed);
        RankedTensorType type = s.getResult().getType();
        // A dense constant cannot carry the encoding; cast it back on.
        auto plain = RankedTensorType::get(type.getShape(), type.getElementType());
        Value constant = arith::ConstantOp::create(
            rewriter, loc, plain,
            DenseElementsAttr::get(plain, rewriter.getI32IntegerAttr(value)));
        rewriter.replaceOpWithNewOp<tensor::CastOp>(s, type, constant);
        return success();
      })
      .Case([&](ScaleOp s) {
        Type elementType = getElementTypeOrSelf(s.getInput().getType());
        Value factor = arith::ConstantOp::create(
            rewriter, loc, elementType,
            rewriter.getFloatAttr(elementType,
                                  s.getFactor().convertToDouble()));
        rewriter.replaceOp(s, scaleBy(rewriter, loc, s.getInput(), factor));
        return success();
      })
      .Case([&](CheckFiniteAndUnscaleOp c) {
        return lowerCheckFinite(rewriter, c);
      })
      .Default([](Operation *) { return success(); });
}

namespace {
struct ConvertDistToLinalgPass
    : public dist::impl::ConvertDistToLinalgBase<ConvertDistToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<DistDialect>(op->getDialect()) &&
          !isa<CollectiveOpInterface, ProcessCoordOp, WaitOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    bool hadError = false;
    for (Operation *op : ops)
      if (failed(lower(rewriter, op)))
        hadError = true;
    if (hadError)
      signalPassFailure();
  }
};
} // namespace
