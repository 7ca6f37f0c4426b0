//===- DistToLinalg.cpp - lower dist compute ops to linalg ----------------===//
//
// Implements --convert-dist-to-linalg and its patterns: every dist compute
// op becomes linalg.generic (and tensor/arith) on the converted tensors, so
// that the program can be bufferized and run. Matmuls and their gradients are
// one contraction helper with different operand/result index maps; the dropout
// RNG hashes the *global* element index so shards of an SPMD program draw the
// serial program's mask.
//
//===----------------------------------------------------------------------===//

#include "dist/Conversion/DistToLinalg.h"
#include "dist/Conversion/DistToMPI.h"
#include "dist/Conversion/Passes.h"
#include "dist/Conversion/RuntimeCalls.h"
#include "dist/Conversion/TensorBuilders.h"
#include "dist/Conversion/TypeConversion.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/MatmulGeometry.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/Transforms/CompletedPass.h"
#include "dist/Dialect/Dist/Utils/MeshIndexing.h"
#include "dist/Runtime/DistRuntime.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_CONVERTDISTTOLINALG
#include "dist/Conversion/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

static Value zeroOf(OpBuilder &b, Location loc, Type type) {
  return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
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

/// The loops these lowerings build have static bounds: a dynamic dim is an
/// error, not an invalid `tensor.empty`.
static LogicalResult requireStaticShapes(Operation *op) {
  auto isDynamic = [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    return shaped && !shaped.hasStaticShape();
  };
  for (Type type :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
    if (isDynamic(type))
      return op->emitError("cannot lower '")
             << op->getName() << "' with the dynamic shape " << type
             << ": the lowering needs static shapes";
  return success();
}

namespace {
/// A lowering that builds loops with static bounds: it sees only ops whose
/// tensors have static shapes (the others get requireStaticShapes' error).
template <typename OpTy>
struct StaticShapeLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using Adaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    if (failed(requireStaticShapes(op)))
      return failure();
    return lowerStatic(op, adaptor, rewriter);
  }

  virtual LogicalResult
  lowerStatic(OpTy op, Adaptor adaptor,
              ConversionPatternRewriter &rewriter) const = 0;
};
} // namespace

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

namespace {
/// The loops of a (batched) matmul, `batch` loops then m, k, n, and the map
/// of each operand's dims onto them. Linalg lowers a generic to loops in this
/// order, so n (the contiguous dim of y and the result) is innermost; with
/// the contraction innermost instead, the split's `transpose_x` dY matmul
/// read both operands with a stride and took 17-38% longer.
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
  unsigned batch = matmul::batchRank(out.getRank());
  unsigned m = batch, k = batch + 1, n = batch + 2, numLoops = batch + 3;
  auto operandMap = [&](RankedTensorType t, bool transpose, unsigned rowLoop,
                        unsigned colLoop) -> FailureOr<AffineMap> {
    SmallVector<AffineExpr> exprs;
    for (auto [dim, loop] : llvm::enumerate(matmul::operandLoops(
             t.getRank(), transpose, batch, rowLoop, colLoop))) {
      if (loop < batch && t.getDimSize(dim) != out.getDimSize(loop))
        return failure();
      exprs.push_back(getAffineDimExpr(loop, ctx));
    }
    return AffineMap::get(numLoops, 0, exprs, ctx);
  };
  FailureOr<AffineMap> xMap = operandMap(x, tx, m, k);
  FailureOr<AffineMap> yMap = operandMap(y, ty, k, n);
  if (failed(xMap) || failed(yMap))
    return failure();
  SmallVector<AffineExpr> outExprs;
  for (unsigned l = 0; l < batch; ++l)
    outExprs.push_back(getAffineDimExpr(l, ctx));
  outExprs.push_back(getAffineDimExpr(m, ctx));
  outExprs.push_back(getAffineDimExpr(n, ctx));
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
      ValueRange{buildZeros(b, loc, resultType)},
      ArrayRef<AffineMap>{lhsMap, rhsMap, outMap}, iterators,
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value product = mul(nb, nloc, args[0], args[1]);
        linalg::YieldOp::create(nb, nloc, add(nb, nloc, args[2], product));
      });
  return generic.getResult(0);
}

/// A copy of `t` with its last two dims swapped (linalg.transpose).
static Value transposeLastTwo(OpBuilder &b, Location loc, Value t) {
  auto type = cast<RankedTensorType>(t.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> permutation = llvm::to_vector(llvm::seq<int64_t>(rank));
  std::swap(permutation[rank - 2], permutation[rank - 1]);
  SmallVector<int64_t> shape(type.getShape());
  std::swap(shape[rank - 2], shape[rank - 1]);
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, t, init, permutation)
      .getResult()[0];
}

/// `op(x) * y` into `resultType`, y not transposed. The loops run n
/// innermost, where y and the result are contiguous (a transposed x is read
/// at a fixed place there); callers copy a transposed y first, since it would
/// be read with a stride (the copy moves k x n values, the contraction m
/// times as many).
static Value matmulOfUntransposedY(OpBuilder &b, Location loc, Value x,
                                   bool transposeX, Value y,
                                   RankedTensorType resultType) {
  FailureOr<MatmulLoops> loops =
      matmulLoops(b.getContext(), cast<RankedTensorType>(x.getType()),
                  cast<RankedTensorType>(y.getType()), resultType, transposeX,
                  /*ty=*/false);
  assert(succeeded(loops) && "batch dims were checked by the caller");
  return contract(b, loc, x, loops->x, y, loops->y, resultType, loops->out);
}

namespace {
/// The loops of a matmul or matmul_grad `op` whose product has `outType`;
/// an error at `op` when its batch dims broadcast.
template <typename OpTy>
static FailureOr<MatmulLoops> loopsOf(OpTy op, RankedTensorType outType) {
  FailureOr<MatmulLoops> loops =
      matmulLoops(op.getContext(), op.getX().getType(), op.getY().getType(),
                  outType, op.getTransposeX(), op.getTransposeY());
  if (failed(loops))
    return op.emitError("cannot lower a '")
           << op->getName()
           << "' whose batch dims broadcast (size 1 against a larger size) "
              "to the runtime";
  return loops;
}

/// A contraction lowering: `copyTransposed` says whether an operand read
/// across its contiguous dim is copied first (for the loop lowering) or
/// read in place through the contraction's map (for BLAS, which takes
/// transposed operands as they are).
template <typename OpTy>
struct ContractionLowering : public StaticShapeLowering<OpTy> {
  ContractionLowering(const TypeConverter &converter, MLIRContext *ctx,
                      bool copyTransposed)
      : StaticShapeLowering<OpTy>(converter, ctx),
        copyTransposed(copyTransposed) {}

protected:
  bool copyTransposed;
};

struct MatmulLowering : public ContractionLowering<MatmulOp> {
  using ContractionLowering::ContractionLowering;

  LogicalResult
  lowerStatic(MatmulOp op, OpAdaptor adaptor,
              ConversionPatternRewriter &rewriter) const override {
    FailureOr<MatmulLoops> loops = loopsOf(op, op.getResult().getType());
    if (failed(loops))
      return failure();
    auto type = getTypeConverter()->convertType<RankedTensorType>(
        op.getResult().getType());
    if (!copyTransposed) {
      rewriter.replaceOp(op, contract(rewriter, op.getLoc(), adaptor.getX(),
                                      loops->x, adaptor.getY(), loops->y, type,
                                      loops->out));
      return success();
    }
    Value y = adaptor.getY();
    if (op.getTransposeY())
      y = transposeLastTwo(rewriter, op.getLoc(), y);
    rewriter.replaceOp(op, matmulOfUntransposedY(rewriter, op.getLoc(),
                                                 adaptor.getX(),
                                                 op.getTransposeX(), y, type));
    return success();
  }
};

struct MatmulGradLowering : public ContractionLowering<MatmulGradOp> {
  using ContractionLowering::ContractionLowering;

  LogicalResult
  lowerStatic(MatmulGradOp op, OpAdaptor adaptor,
              ConversionPatternRewriter &rewriter) const override {
    FailureOr<MatmulLoops> loops = loopsOf(op, op.getOutGrad().getType());
    if (failed(loops))
      return failure();
    const TypeConverter &converter = *getTypeConverter();
    // Each gradient contracts the other operand with out_grad over the loops
    // missing from its own dims (k, or m/n, and any batch dims y lacks).
    Location loc = op.getLoc();
    // dX = dY op(y)^T, or its transpose (op(y) dY^T) for a transposed x: as
    // a matmul with an untransposed second operand, its innermost loop runs
    // over dX's last dim,
    // contiguously, instead of contracting there (a dot product LLVM does
    // not vectorise: the matmul_grad ran at 1.09 GFLOP/s against the plain
    // matmul's 2.44 here).
    auto dxType =
        converter.convertType<RankedTensorType>(op.getXGrad().getType());
    // An x without out_grad's batch dims sums dX over them: that stays one
    // contraction over the forward loops.
    Value y = adaptor.getY(), dout = adaptor.getOutGrad();
    Value dx =
        !copyTransposed ||
                dxType.getRank() != op.getOutGrad().getType().getRank()
            ? contract(rewriter, loc, dout, loops->out, y, loops->y, dxType,
                       loops->x)
        : op.getTransposeX()
            ? matmulOfUntransposedY(rewriter, loc, y, op.getTransposeY(),
                                    transposeLastTwo(rewriter, loc, dout),
                                    dxType)
            : matmulOfUntransposedY(
                  rewriter, loc, dout, /*transposeX=*/false,
                  op.getTransposeY() ? y : transposeLastTwo(rewriter, loc, y),
                  dxType);
    Value dy = contract(
        rewriter, loc, adaptor.getX(), loops->x, adaptor.getOutGrad(),
        loops->out,
        converter.convertType<RankedTensorType>(op.getYGrad().getType()),
        loops->y);
    rewriter.replaceOp(op, {dx, dy});
    return success();
  }
};
} // namespace

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

namespace {
/// How a lowered lookup checks its ids against the whole table: `site` (a
/// runtime string naming the op) and the table's global row count. Without
/// a site (a vocab-parallel shard of unknown global size) nothing is
/// checked; the lookup still never reads outside its shard.
struct IdCheck {
  Value site;
  Value rows;
  func::FuncOp error;
};
} // namespace

/// The check of `op`'s ids against `globalRows` (a static row count, or the
/// `table`'s dim 0 when dynamic); none when `globalRows` is unknown (< 0
/// and no table).
static FailureOr<IdCheck> buildIdCheck(OpBuilder &b, Operation *op,
                                       int64_t globalRows, Value table) {
  if (globalRows < 0 && !table)
    return IdCheck();
  if (globalRows < 0) {
    auto type = cast<RankedTensorType>(table.getType());
    if (!type.isDynamicDim(0))
      globalRows = type.getDimSize(0);
  }
  Location loc = op->getLoc();
  auto i64 = b.getI64Type();
  auto string = MemRefType::get({ShapedType::kDynamic}, b.getI8Type());
  func::FuncOp error = getOrDeclareRuntimeFunction(
      b, op, DIST_RUNTIME_INDEX_ERROR,
      b.getFunctionType({string, i64, i64}, {}), /*cInterface=*/true);
  if (!error)
    return failure();
  Value rows =
      globalRows >= 0
          ? arith::ConstantIndexOp::create(b, loc, globalRows).getResult()
          : tensor::DimOp::create(b, loc, table, 0).getResult();
  return IdCheck{buildRuntimeString(b, loc, op, describeForRuntime(op)), rows,
                 error};
}

/// Stops the program through the runtime when `id` is outside [0, rows);
/// returns whether it is (for code that must not read there even so).
static Value emitIdCheck(OpBuilder &b, Location loc, const IdCheck &check,
                         Value id) {
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
  // Unsigned: a negative id is a huge one.
  Value outside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                        index, check.rows);
  scf::IfOp::create(b, loc, outside, [&](OpBuilder &tb, Location tloc) {
    auto i64 = tb.getI64Type();
    Value id64 = arith::IndexCastOp::create(tb, tloc, i64, index);
    Value rows64 = arith::IndexCastOp::create(tb, tloc, i64, check.rows);
    func::CallOp::create(tb, tloc, check.error,
                         ValueRange{check.site, id64, rows64});
    scf::YieldOp::create(tb, tloc);
  });
  return outside;
}

/// rows[p..., c] = weight[ids[p...] - start, c], zero outside the shard.
static Value gather(OpBuilder &b, Location loc, Value ids, Value weight,
                    Value start, RankedTensorType resultType,
                    const IdCheck &check) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = resultType.getRank();
  int64_t rows = cast<RankedTensorType>(weight.getType()).getDimSize(0);
  SmallVector<AffineExpr> idsExprs;
  for (unsigned d = 0; d + 1 < rank; ++d)
    idsExprs.push_back(getAffineDimExpr(d, ctx));
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, ValueRange{ids},
      ValueRange{buildZeros(b, loc, resultType)},
      ArrayRef<AffineMap>{AffineMap::get(rank, 0, idsExprs, ctx),
                          AffineMap::getMultiDimIdentityMap(rank, ctx)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value outside;
        if (check.site)
          outside = emitIdCheck(nb, nloc, check, args[0]);
        auto [row, inRange] = localRow(nb, nloc, args[0], start, rows);
        Value col = linalg::IndexOp::create(nb, nloc, rank - 1);
        Value zero = arith::ConstantIndexOp::create(nb, nloc, 0);
        if (inRange)
          row = arith::SelectOp::create(nb, nloc, inRange, row, zero);
        else if (outside)
          // Not reached (the runtime stopped the program), but never a read
          // outside the table either.
          row = arith::SelectOp::create(nb, nloc, outside, zero, row);
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
                        Value start, RankedTensorType gradType,
                        const IdCheck &check) {
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
      ValueRange{buildZeros(b, loc, gradType)},
      ArrayRef<AffineMap>{
          AffineMap::get(numLoops, 0, idsExprs, ctx),
          AffineMap::get(numLoops, 0, gradExprs, ctx),
          AffineMap::get(numLoops, 0,
                         {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx)},
                         ctx)},
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        if (check.site)
          emitIdCheck(nb, nloc, check, args[0]);
        Value row = localRow(nb, nloc, args[0], start, 0).first;
        Value here =
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, row,
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

/// The seed of an unseeded random op, drawn at run time: the runtime
/// derives it from the run seed, the op and how often it ran (see
/// dist_random_seed), so replicas agree and steps differ.
static FailureOr<Value> runtimeSeed(OpBuilder &b, Operation *op,
                                    RuntimeSiteIds &sites) {
  auto i64 = b.getI64Type();
  func::FuncOp draw = getOrDeclareRuntimeFunction(
      b, op, DIST_RUNTIME_RANDOM_SEED, b.getFunctionType({i64}, {i64}),
      /*cInterface=*/false);
  if (!draw)
    return failure();
  Value site = arith::ConstantOp::create(b, op->getLoc(),
                                         b.getI64IntegerAttr(sites.get(op)));
  return func::CallOp::create(b, op->getLoc(), draw, ValueRange{site})
      .getResult(0);
}

/// The dropout's seed as an i64: its seed operand, else `fix_seed`, else
/// one drawn at run time.
static FailureOr<Value> seedValue(OpBuilder &b, Location loc, DropoutOp op,
                                  Value seed, RuntimeSiteIds &sites) {
  if (seed) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value v = tensor::ExtractOp::create(b, loc, seed, ValueRange{zero});
    return arith::ExtSIOp::create(b, loc, b.getI64Type(), v).getResult();
  }
  if (op.getFixSeed() && *op.getFixSeed() != 0)
    return arith::ConstantOp::create(
               b, loc, b.getI64IntegerAttr(int64_t(*op.getFixSeed())))
        .getResult();
  return runtimeSeed(b, op, sites);
}

namespace {
/// The random ops' patterns share one numbering of their run-time sites.
template <typename OpTy>
struct RandomOpLowering : public StaticShapeLowering<OpTy> {
  RandomOpLowering(const TypeConverter &converter, MLIRContext *ctx,
                   std::shared_ptr<RuntimeSiteIds> sites)
      : StaticShapeLowering<OpTy>(converter, ctx), sites(std::move(sites)) {}

  std::shared_ptr<RuntimeSiteIds> sites;
};

struct DropoutLowering : public RandomOpLowering<DropoutOp> {
  using RandomOpLowering::RandomOpLowering;

  LogicalResult
  lowerStatic(DropoutOp op, OpAdaptor adaptor,
              ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (op.getIsTest()) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    // The encoding is read from the op's own type: it says which global
    // element each local one is.
    RankedTensorType type = op.getInput().getType();
    TensorDistAttr dist = getTensorDist(type);
    unsigned rank = type.getRank();
    SmallVector<int64_t> globalShape = mesh::globalShape(type.getShape(), dist);
    int64_t numElements = 1;
    for (int64_t size : globalShape)
      if (size < 0 || llvm::MulOverflow(numElements, size, numElements))
        return op.emitError("cannot lower a dropout whose global shape does "
                            "not fit in 64 bits");

    auto resultType = getTypeConverter()->convertType<RankedTensorType>(type);
    FailureOr<Value> seedOrFailure =
        seedValue(rewriter, loc, op, adaptor.getSeed(), *sites);
    if (failed(seedOrFailure))
      return failure();
    Value seed = *seedOrFailure;
    // The global index of a local element: dims split over axis a are
    // offset by coord(a) * local size.
    SmallVector<Value> offsets(rank);
    SmallVector<OpFoldResult> coords;
    if (dist && llvm::any_of(dist.getDimsMapping(),
                             [](int64_t axis) { return axis >= 0; })) {
      MeshAttr mesh = dist.getMesh();
      Value rankValue = buildWorldRank(rewriter, loc);
      coords = mesh::buildCoords(
          rewriter, loc, mesh,
          *mesh::buildPosition(rewriter, loc, mesh, rankValue));
    }
    for (unsigned d = 0; d < rank; ++d) {
      int64_t axis = dist ? dist.getMeshAxis(d) : -1;
      if (axis < 0)
        continue;
      Value coord =
          getValueOrCreateConstantIndexOp(rewriter, loc, coords[axis]);
      Value size =
          arith::ConstantIndexOp::create(rewriter, loc, type.getDimSize(d));
      offsets[d] = arith::MulIOp::create(rewriter, loc, coord, size);
    }
    double prob = op.getProb().convertToDouble();
    auto map = AffineMap::getMultiDimIdentityMap(rank, op.getContext());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, resultType, ValueRange{adaptor.getInput()},
        ValueRange{buildZeros(rewriter, loc, resultType)},
        ArrayRef<AffineMap>{map, map},
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
          Value counter =
              arith::IndexCastOp::create(b, l, b.getI64Type(), linear);
          Value hashed = hash64(b, l, counter);
          Value shift =
              arith::ConstantOp::create(b, l, b.getI64IntegerAttr(32));
          Value seedHigh = arith::ShLIOp::create(b, l, seed, shift);
          Value key = arith::XOrIOp::create(b, l, hashed, seedHigh);
          // The top 24 bits of the hash, as a float in [0, 1).
          Value mask = hash64(b, l, key);
          Value top = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(40));
          Value bits = arith::ShRUIOp::create(b, l, mask, top);
          Value asFloat = arith::UIToFPOp::create(b, l, b.getF32Type(), bits);
          Value unit = arith::ConstantOp::create(
              b, l, b.getF32FloatAttr(1.0f / 16777216.0f));
          Value u = arith::MulFOp::create(b, l, asFloat, unit);
          Value threshold =
              arith::ConstantOp::create(b, l, b.getF32FloatAttr(float(prob)));
          Value keep = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, u,
                                             threshold);
          Type elementType = args[0].getType();
          Value scale = arith::ConstantOp::create(
              b, l, elementType,
              b.getFloatAttr(elementType, 1.0 / (1.0 - prob)));
          Value kept = arith::MulFOp::create(b, l, args[0], scale);
          Value result = arith::SelectOp::create(b, l, keep, kept, args[1]);
          linalg::YieldOp::create(b, l, result);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct SeedLowering : public RandomOpLowering<SeedOp> {
  using RandomOpLowering::RandomOpLowering;

  LogicalResult
  lowerStatic(SeedOp op, OpAdaptor,
              ConversionPatternRewriter &rewriter) const override {
    auto type = getTypeConverter()->convertType<RankedTensorType>(op.getType());
    if (op.getValue()) {
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          op, type,
          DenseElementsAttr::get(type,
                                 rewriter.getI32IntegerAttr(op.getValue())));
      return success();
    }
    FailureOr<Value> seed = runtimeSeed(rewriter, op, *sites);
    if (failed(seed))
      return failure();
    Value narrow = arith::TruncIOp::create(rewriter, op.getLoc(),
                                           type.getElementType(), *seed);
    rewriter.replaceOpWithNewOp<tensor::SplatOp>(op, type, narrow);
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// Scale and AMP
//===----------------------------------------------------------------------===//

static Value castFloat(OpBuilder &b, Location loc, Value v, Type to) {
  auto from = cast<FloatType>(v.getType());
  auto target = cast<FloatType>(to);
  if (from == target)
    return v;
  if (from.getWidth() < target.getWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

/// `grad * inverse` computed in `compute` (at least f32) and rounded once
/// to the gradient's type, as Paddle's kernel does with its master type: an
/// f16 `1 / 2^25` would underflow to 0.
static Value unscale(OpBuilder &b, Location loc, Value grad, Value inverse) {
  auto type = cast<RankedTensorType>(grad.getType());
  Type element = type.getElementType();
  Type compute = inverse.getType();
  auto map = AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext());
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{grad},
             ValueRange{buildZeros(b, loc, type)},
             ArrayRef<AffineMap>{map, map},
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value wide = castFloat(nb, nloc, args[0], compute);
               Value product = arith::MulFOp::create(nb, nloc, wide, inverse);
               linalg::YieldOp::create(nb, nloc,
                                       castFloat(nb, nloc, product, element));
             })
      .getResult(0);
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
        Value bad =
            arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::UNE, diff,
                                  zeroOf(nb, nloc, diff.getType()));
        Value any = arith::OrIOp::create(nb, nloc, args[1], bad);
        linalg::YieldOp::create(nb, nloc, any);
      });
  return tensor::ExtractOp::create(b, loc, generic.getResult(0), ValueRange{});
}

namespace {
/// dist.scale: elementwise times its constant factor.
struct ScaleLowering : public StaticShapeLowering<ScaleOp> {
  using StaticShapeLowering::StaticShapeLowering;

  LogicalResult
  lowerStatic(ScaleOp op, OpAdaptor adaptor,
              ConversionPatternRewriter &rewriter) const override {
    Type elementType = getElementTypeOrSelf(op.getType());
    Value factor = arith::ConstantOp::create(
        rewriter, op.getLoc(), elementType,
        rewriter.getFloatAttr(elementType, op.getFactor().convertToDouble()));
    rewriter.replaceOp(
        op, buildScaled(rewriter, op.getLoc(), adaptor.getInput(), factor));
    return success();
  }
};

struct CheckFiniteAndUnscaleLowering
    : public StaticShapeLowering<CheckFiniteAndUnscaleOp> {
  using StaticShapeLowering::StaticShapeLowering;

  LogicalResult
  lowerStatic(CheckFiniteAndUnscaleOp op, OpAdaptor adaptor,
              ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // One inverse, in f64 if any gradient is f64, else in f32.
    bool anyF64 = llvm::any_of(op.getGrads(), [](Value grad) {
      return getElementTypeOrSelf(grad.getType()).isF64();
    });
    Type compute =
        anyF64 ? Type(rewriter.getF64Type()) : Type(rewriter.getF32Type());
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value scale = tensor::ExtractOp::create(rewriter, loc, adaptor.getScale(),
                                            ValueRange{zero});
    scale = castFloat(rewriter, loc, scale, compute);
    Value one = arith::ConstantOp::create(rewriter, loc, compute,
                                          rewriter.getFloatAttr(compute, 1.0));
    Value inverse = arith::DivFOp::create(rewriter, loc, one, scale);
    SmallVector<Value> results;
    Value found =
        arith::ConstantOp::create(rewriter, loc, rewriter.getBoolAttr(false));
    for (Value grad : adaptor.getGrads()) {
      results.push_back(unscale(rewriter, loc, grad, inverse));
      found = arith::OrIOp::create(rewriter, loc, found,
                                   anyNonFinite(rewriter, loc, grad));
    }
    results.push_back(tensor::FromElementsOp::create(
        rewriter, loc,
        getTypeConverter()->convertType<RankedTensorType>(
            op.getFoundInf().getType()),
        ValueRange{found}));
    rewriter.replaceOp(op, results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

/// The type an optimizer update computes in: f32 for narrower floats (as
/// Paddle's master weights), else the element type.
static Type updateComputeType(OpBuilder &b, Type element) {
  return cast<FloatType>(element).getWidth() < 32 ? Type(b.getF32Type())
                                                  : element;
}

static Value floatConstant(OpBuilder &b, Location loc, Type type, double v) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, v));
}

/// An elementwise linalg.generic over `inputs` (all of `type`, with
/// `scalars` of rank 0 read at every element) that yields `numResults`
/// values of `type`: `body` gets the elements in the compute type.
static SmallVector<Value> buildUpdate(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange inputs,
    unsigned numResults,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = type.getRank();
  Type element = type.getElementType();
  Type compute = updateComputeType(b, element);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<AffineMap> maps(inputs.size() + numResults, identity);
  SmallVector<Value> inits;
  SmallVector<Type> types(numResults, type);
  for (unsigned i = 0; i < numResults; ++i)
    inits.push_back(tensor::EmptyOp::create(b, loc, type.getShape(), element));
  auto generic = linalg::GenericOp::create(
      b, loc, types, inputs, inits, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> wide;
        for (Value arg : args.take_front(inputs.size()))
          wide.push_back(castFloat(nb, nloc, arg, compute));
        SmallVector<Value> out;
        for (Value v : body(nb, nloc, wide))
          out.push_back(castFloat(nb, nloc, v, element));
        linalg::YieldOp::create(nb, nloc, out);
      });
  return SmallVector<Value>(generic.getResults());
}

namespace {
/// dist.sgd: d = g + wd * p; v' = mu * v + d; p' = p - lr * v'.
struct SgdLowering : public StaticShapeLowering<SgdOp> {
  using StaticShapeLowering::StaticShapeLowering;

  LogicalResult
  lowerStatic(SgdOp op, OpAdaptor adaptor,
              ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = getTypeConverter()->convertType<RankedTensorType>(
        op.getParam().getType());
    Type compute = updateComputeType(rewriter, type.getElementType());
    Value lr =
        floatConstant(rewriter, loc, compute, op.getLr().convertToDouble());
    Value mu = floatConstant(rewriter, loc, compute,
                             op.getMomentum().convertToDouble());
    Value wd = floatConstant(rewriter, loc, compute,
                             op.getWeightDecay().convertToDouble());
    SmallVector<Value> results = buildUpdate(
        rewriter, loc, type,
        ValueRange{adaptor.getParam(), adaptor.getGrad(),
                   adaptor.getVelocity()},
        2, [&](OpBuilder &b, Location l, ValueRange e) -> SmallVector<Value> {
          Value d = arith::AddFOp::create(
              b, l, e[1], arith::MulFOp::create(b, l, wd, e[0]));
          Value v = arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, mu, e[2]), d);
          Value p = arith::SubFOp::create(b, l, e[0],
                                          arith::MulFOp::create(b, l, lr, v));
          return {p, v};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// dist.adamw, with the bias corrections computed once from the step.
struct AdamWLowering : public StaticShapeLowering<AdamWOp> {
  using StaticShapeLowering::StaticShapeLowering;

  LogicalResult
  lowerStatic(AdamWOp op, OpAdaptor adaptor,
              ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = getTypeConverter()->convertType<RankedTensorType>(
        op.getParam().getType());
    Type compute = updateComputeType(rewriter, type.getElementType());
    auto constant = [&](double v) {
      return floatConstant(rewriter, loc, compute, v);
    };
    double lrValue = op.getLr().convertToDouble();
    double beta1 = op.getBeta1().convertToDouble();
    double beta2 = op.getBeta2().convertToDouble();
    Value step = castFloat(rewriter, loc,
                           tensor::ExtractOp::create(
                               rewriter, loc, adaptor.getStep(), ValueRange{}),
                           compute);
    Value one = constant(1.0);
    auto correction = [&](double beta) -> Value {
      Value power = math::PowFOp::create(rewriter, loc, constant(beta), step);
      return arith::SubFOp::create(rewriter, loc, one, power);
    };
    Value bc1 = correction(beta1), bc2 = correction(beta2);
    Value decay =
        constant(1.0 - lrValue * op.getWeightDecay().convertToDouble());
    Value lr = constant(lrValue),
          eps = constant(op.getEpsilon().convertToDouble());
    Value b1 = constant(beta1), b2 = constant(beta2);
    Value c1 = constant(1.0 - beta1), c2 = constant(1.0 - beta2);
    SmallVector<Value> results = buildUpdate(
        rewriter, loc, type,
        ValueRange{adaptor.getParam(), adaptor.getGrad(), adaptor.getMoment1(),
                   adaptor.getMoment2()},
        3, [&](OpBuilder &b, Location l, ValueRange e) -> SmallVector<Value> {
          auto mul = [&](Value x, Value y) {
            return arith::MulFOp::create(b, l, x, y).getResult();
          };
          auto addf = [&](Value x, Value y) {
            return arith::AddFOp::create(b, l, x, y).getResult();
          };
          Value m = addf(mul(b1, e[2]), mul(c1, e[1]));
          Value v = addf(mul(b2, e[3]), mul(c2, mul(e[1], e[1])));
          Value mHat = arith::DivFOp::create(b, l, m, bc1);
          Value vHat = arith::DivFOp::create(b, l, v, bc2);
          Value denom = addf(math::SqrtOp::create(b, l, vHat), eps);
          Value update = mul(lr, arith::DivFOp::create(b, l, mHat, denom));
          Value p = arith::SubFOp::create(b, l, mul(e[0], decay), update);
          return {p, m, v};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// Packing
//===----------------------------------------------------------------------===//

/// `x` (static shape) as a 1-D tensor, row-major.
static Value flatten(OpBuilder &b, Location loc, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  auto flatType =
      RankedTensorType::get({type.getNumElements()}, type.getElementType());
  if (type.getRank() == 1)
    return x;
  if (type.getRank() == 0)
    return tensor::FromElementsOp::create(
        b, loc, flatType,
        ValueRange{tensor::ExtractOp::create(b, loc, x, ValueRange{})});
  ReassociationIndices all =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  return tensor::CollapseShapeOp::create(b, loc, flatType, x,
                                         ArrayRef<ReassociationIndices>{all});
}

/// The 1-D `flat` in `type`'s shape (the inverse of flatten).
static Value unflatten(OpBuilder &b, Location loc, Value flat,
                       RankedTensorType type) {
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    return tensor::FromElementsOp::create(
        b, loc, type,
        ValueRange{tensor::ExtractOp::create(b, loc, flat, ValueRange{zero})});
  }
  ReassociationIndices all =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       ArrayRef<ReassociationIndices>{all});
}

namespace {
/// dist.pack: each input flattened, zero-padded to rows x chunk, and put in
/// its columns of the buffer.
struct PackLowering : public StaticShapeLowering<PackOp> {
  using StaticShapeLowering::StaticShapeLowering;

  LogicalResult
  lowerStatic(PackOp op, OpAdaptor adaptor,
              ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = getTypeConverter()->convertType<RankedTensorType>(op.getType());
    int64_t rows = type.getDimSize(0);
    Type element = type.getElementType();
    Value buffer = buildZeros(rewriter, loc, type);
    int64_t offset = 0;
    for (Value input : adaptor.getInputs()) {
      Value flat = flatten(rewriter, loc, input);
      int64_t n = cast<RankedTensorType>(flat.getType()).getDimSize(0);
      int64_t chunk = llvm::divideCeil(n, rows);
      if (n != rows * chunk)
        flat = tensor::InsertSliceOp::create(
            rewriter, loc, flat,
            buildZeros(rewriter, loc,
                       RankedTensorType::get({rows * chunk}, element)),
            ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
            ArrayRef<OpFoldResult>{rewriter.getIndexAttr(n)},
            ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
      Value block = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get({rows, chunk}, element), flat,
          ArrayRef<ReassociationIndices>{{0, 1}});
      buffer = tensor::InsertSliceOp::create(
          rewriter, loc, block, buffer,
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0),
                                 rewriter.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(rows),
                                 rewriter.getIndexAttr(chunk)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1),
                                 rewriter.getIndexAttr(1)});
      offset += chunk;
    }
    rewriter.replaceOp(op, buffer);
    return success();
  }
};

/// dist.unpack: each result's columns, flattened, the padding dropped.
struct UnpackLowering : public StaticShapeLowering<UnpackOp> {
  using StaticShapeLowering::StaticShapeLowering;

  LogicalResult
  lowerStatic(UnpackOp op, OpAdaptor adaptor,
              ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto bufferType = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t rows = bufferType.getDimSize(0);
    Type element = bufferType.getElementType();
    SmallVector<Value> results;
    int64_t offset = 0;
    for (Type resultType : op.getResultTypes()) {
      auto type = getTypeConverter()->convertType<RankedTensorType>(resultType);
      int64_t n = type.getNumElements();
      int64_t chunk = llvm::divideCeil(n, rows);
      Value block = tensor::ExtractSliceOp::create(
          rewriter, loc, RankedTensorType::get({rows, chunk}, element),
          adaptor.getInput(), ValueRange{}, ValueRange{}, ValueRange{},
          ArrayRef<int64_t>{0, offset}, ArrayRef<int64_t>{rows, chunk},
          ArrayRef<int64_t>{1, 1});
      Value flat = tensor::CollapseShapeOp::create(
          rewriter, loc, RankedTensorType::get({rows * chunk}, element), block,
          ArrayRef<ReassociationIndices>{{0, 1}});
      if (n != rows * chunk)
        flat = tensor::ExtractSliceOp::create(
            rewriter, loc, RankedTensorType::get({n}, element), flat,
            ValueRange{}, ValueRange{}, ValueRange{}, ArrayRef<int64_t>{0},
            ArrayRef<int64_t>{n}, ArrayRef<int64_t>{1});
      results.push_back(unflatten(rewriter, loc, flat, type));
      offset += chunk;
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};
} // namespace

/// The global row count of a table whose rows may be split (after
/// --dist-parallel-embedding): -1 when its encoding does not say.
static int64_t globalRows(Value weight) {
  auto type = cast<RankedTensorType>(weight.getType());
  TensorDistAttr dist = getTensorDist(type);
  if (!dist || dist.getMeshAxis(0) < 0 || type.isDynamicDim(0))
    return -1;
  return mesh::globalShape(type.getShape(), dist)[0];
}

/// embedding, c_embedding and their gradients: a gather of rows, or a
/// scatter-add of out_grad rows, each id checked against the whole table.
/// A whole table (embedding) checks against its own rows and must not be
/// row-split; a vocab-parallel shard (c_embedding) checks against the global
/// rows its encoding gives and reads from its start index on.
template <typename OpTy>
struct LookupLowering : public StaticShapeLowering<OpTy> {
  using StaticShapeLowering<OpTy>::StaticShapeLowering;
  using Adaptor = typename StaticShapeLowering<OpTy>::Adaptor;
  static constexpr bool kShard =
      llvm::is_one_of<OpTy, CEmbeddingOp, CEmbeddingGradOp>::value;
  static constexpr bool kGrad =
      llvm::is_one_of<OpTy, EmbeddingGradOp, CEmbeddingGradOp>::value;

  LogicalResult
  lowerStatic(OpTy op, Adaptor adaptor,
              ConversionPatternRewriter &rewriter) const override {
    FailureOr<IdCheck> check;
    Value start;
    if constexpr (kShard) {
      check = buildIdCheck(rewriter, op, globalRows(op.getWeight()), Value());
      start = adaptor.getStartIndex();
    } else {
      if (failed(rejectRowSplit(op, op.getWeight())))
        return failure();
      check = buildIdCheck(rewriter, op, -1, adaptor.getWeight());
    }
    if (failed(check))
      return failure();
    auto type =
        this->getTypeConverter()->template convertType<RankedTensorType>(
            op.getType());
    Value result;
    if constexpr (kGrad)
      result = scatterAdd(rewriter, op.getLoc(), adaptor.getIds(),
                          adaptor.getOutGrad(), start, type, *check);
    else
      result = gather(rewriter, op.getLoc(), adaptor.getIds(),
                      adaptor.getWeight(), start, type, *check);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::dist::populateDistToLinalgConversionPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    bool copyTransposed) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<MatmulLowering, MatmulGradLowering>(converter, ctx,
                                                   copyTransposed);
  patterns.add<CheckFiniteAndUnscaleLowering, LookupLowering<EmbeddingOp>,
               LookupLowering<CEmbeddingOp>, LookupLowering<EmbeddingGradOp>,
               LookupLowering<CEmbeddingGradOp>, ScaleLowering, SgdLowering,
               AdamWLowering, PackLowering, UnpackLowering>(converter, ctx);
  auto sites = std::make_shared<RuntimeSiteIds>();
  patterns.add<DropoutLowering, SeedLowering>(converter, ctx, sites);
}

void mlir::dist::addDistToLinalgIllegalOps(ConversionTarget &target) {
  target.addIllegalOp<MatmulOp, MatmulGradOp, EmbeddingOp, CEmbeddingOp,
                      EmbeddingGradOp, CEmbeddingGradOp, DropoutOp, SeedOp,
                      ScaleOp, CheckFiniteAndUnscaleOp, SgdOp, AdamWOp, PackOp,
                      UnpackOp>();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct ConvertDistToLinalgPass
    : public CompletedPass<
          dist::impl::ConvertDistToLinalgBase<ConvertDistToLinalgPass>> {
  using CompletedPass::CompletedPass;

  void runOnCompleted(ModuleOp module) override {
    if (failed(checkLowerableMemorySpaces(module)))
      return signalPassFailure();
    MLIRContext *ctx = module.getContext();
    DistTypeConverter converter;
    ConversionTarget target(*ctx);
    configureDistConversionTarget(target, converter);
    addDistToLinalgIllegalOps(target);
    RewritePatternSet patterns(ctx);
    populateDistEncodingDropPatterns(converter, patterns);
    populateDistToLinalgConversionPatterns(converter, patterns, copyTransposed);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
