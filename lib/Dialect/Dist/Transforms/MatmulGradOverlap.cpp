//===- MatmulGradOverlap.cpp - overlap the dX allreduce with dY -----------===//
//
// Implements --dist-matmul-grad-overlap: a matmul_grad whose x_grad is summed
// by an allreduce (or, with sequence parallelism, a reduce-scatter) becomes
// dX matmul, that collective, dY matmul, so the collective runs on the
// model-parallel stream while dY is computed. Paddle does this on
// an op list with in-place variables; in SSA the allreduce's result is a new
// value, so moving it up can never change what an earlier reader of dX sees,
// and the new dY matmul is placed where the matmul_grad was, above every use.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/Transforms/CompletedPass.h"
#include "dist/Dialect/Dist/Transforms/CostModelPass.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTMATMULGRADOVERLAP
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

static constexpr llvm::StringLiteral kRewriteTag = "dist-matmul-grad-overlap";

/// The single collective summing `xGrad`: a dist.allreduce, or the
/// dist.reduce_scatter that sequence parallelism puts after a row-parallel
/// dX. Null (with `whyNot` set) when there is none or more than one.
static Operation *findXGradReduction(MatmulGradOp op, std::string &whyNot) {
  Operation *found = nullptr;
  for (Operation *user : op.getXGrad().getUsers()) {
    if (!isa<AllReduceOp, ReduceScatterOp>(user))
      continue;
    if (found) {
      whyNot = "x_grad is reduced by more than one dist.allreduce or "
               "dist.reduce_scatter";
      return nullptr;
    }
    found = user;
  }
  if (!found) {
    whyNot = "x_grad is not reduced by a dist.allreduce or dist.reduce_scatter";
    return nullptr;
  }
  ReductionKind kind = isa<AllReduceOp>(found)
                           ? cast<AllReduceOp>(found).getKind()
                           : cast<ReduceScatterOp>(found).getKind();
  if (kind != ReductionKind::Sum) {
    whyNot = llvm::formatv("x_grad is reduced with '{0}', not 'sum'",
                           stringifyReductionKind(kind));
    return nullptr;
  }
  if (found->getBlock() != op->getBlock()) {
    whyNot = llvm::formatv("the {0} of x_grad is in another block",
                           found->getName().getStringRef());
    return nullptr;
  }
  return found;
}

/// Whether `op` or an op nested in it reads `value`.
static bool readsValue(Operation *op, Value value) {
  bool found = false;
  op->walk([&](Operation *nested) {
    if (llvm::is_contained(nested->getOperands(), value)) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

/// Whether `op` or an op nested in it reads a value of `values`.
static Operation *readsAnyOf(Operation *op,
                             const llvm::DenseSet<Value> &values) {
  Operation *reader = nullptr;
  op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      if (values.contains(operand)) {
        reader = nested;
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return reader;
}

/// Checks the ops strictly between the matmul_grad and the collective
/// reducing x_grad: x_grad may not be read there, and Paddle's hazard rule
/// holds (an op reading y_grad is fine, an op reading such an op's result
/// but not y_grad blocks the split).
static LogicalResult checkOpsBetween(MatmulGradOp op, Operation *reduction,
                                     std::string &whyNot) {
  Value xGrad = op.getXGrad(), yGrad = op.getYGrad();
  llvm::DenseSet<Value> fromYGrad;
  for (Operation *it = op->getNextNode(); it != reduction;
       it = it->getNextNode()) {
    if (readsValue(it, xGrad)) {
      whyNot = llvm::formatv("x_grad is also read before its {0}, by "
                             "'{1}'; that read must keep seeing the "
                             "unreduced value",
                             reduction->getName().getStringRef(),
                             it->getName().getStringRef());
      return failure();
    }
    if (readsValue(it, yGrad)) {
      fromYGrad.insert(it->getResults().begin(), it->getResults().end());
      continue;
    }
    if (readsAnyOf(it, fromYGrad)) {
      whyNot = llvm::formatv(
          "'{0}' between the matmul_grad and the reduction reads a value "
          "computed from y_grad but not y_grad itself (Paddle's hazard rule)",
          it->getName().getStringRef());
      return failure();
    }
  }
  return success();
}

/// Reassociation folding every dim but the last of a rank-`rank` tensor.
static SmallVector<SmallVector<int64_t, 2>> foldLeadingDims(int64_t rank) {
  SmallVector<int64_t, 2> leading;
  for (int64_t d = 0; d + 1 < rank; ++d)
    leading.push_back(d);
  return {leading, {rank - 1}};
}

/// `type` collapsed to 2-D by folding its leading dims, with the folded
/// distribution; null when the distribution cannot be folded.
static RankedTensorType foldedType(RankedTensorType type) {
  int64_t rank = type.getRank();
  std::optional<TensorDistAttr> dist =
      mesh::collapseDist(getTensorDist(type), foldLeadingDims(rank));
  if (!dist)
    return {};
  int64_t rows = 1;
  for (int64_t size : type.getShape().drop_back()) {
    if (ShapedType::isDynamic(size)) {
      rows = ShapedType::kDynamic;
      break;
    }
    rows *= size;
  }
  return RankedTensorType::get({rows, type.getShape().back()},
                               type.getElementType(), *dist);
}

LogicalResult mlir::dist::canBuildMatmulGradProducts(MatmulGradOp op,
                                                     std::string &whyNot) {
  if (op.getTransposeX()) {
    whyNot = "transpose_x is set; a matmul_grad is split with a plain or "
             "transposed y only";
    return failure();
  }
  RankedTensorType x = op.getX().getType(), y = op.getY().getType(),
                   dout = op.getOutGrad().getType();
  if (y.getRank() != 2) {
    whyNot = llvm::formatv("y has rank {0}; only a 2-D y is split (a batched "
                           "y_grad is not a single matmul)",
                           y.getRank());
    return failure();
  }
  if (x.getRank() > 2) {
    if (x.getShape().drop_back() != dout.getShape().drop_back()) {
      whyNot = "the leading dims of x and out_grad differ";
      return failure();
    }
    if (!foldedType(x) || !foldedType(dout)) {
      whyNot = "a leading dim of x or out_grad other than the outermost is "
               "split over the mesh, so they cannot be folded";
      return failure();
    }
  }
  return success();
}

LogicalResult
mlir::dist::canSplitMatmulGrad(MatmulGradOp op,
                               const MatmulGradOverlapOptions &options,
                               std::string &whyNot) {
  if (failed(canBuildMatmulGradProducts(op, whyNot)))
    return failure();
  Operation *reduction = findXGradReduction(op, whyNot);
  if (!reduction || failed(checkOpsBetween(op, reduction, whyNot)))
    return failure();

  if (options.minOverlapRatio > 0.0) {
    RankedTensorType x = op.getX().getType(), dout = op.getOutGrad().getType();
    CostModel model(options.costModel);
    // dY = X^T dOut, or dOut^T X for a transposed y: the same products.
    std::optional<double> flops = CostModel::matmulFlops(
        op.getTransposeY() ? dout : x, op.getYGrad().getType(),
        /*transposeX=*/true);
    std::optional<double> commTime = model.collectiveTime(reduction);
    if (flops && commTime && *commTime > 0.0) {
      double computeTime =
          model.matmulTime(*flops, /*transposeX=*/true, /*transposeY=*/false);
      if (computeTime < options.minOverlapRatio * *commTime) {
        whyNot = llvm::formatv(
            "the dY matmul (~{0:f3} us) would hide less than {1} of the "
            "{2} (~{3:f3} us)",
            computeTime * 1e6, options.minOverlapRatio,
            reduction->getName().getStringRef(), *commTime * 1e6);
        return failure();
      }
    }
  }
  return success();
}

std::pair<Value, Value> mlir::dist::buildMatmulGradProducts(OpBuilder &b,
                                                            MatmulGradOp op,
                                                            Location loc) {
  // dX = dOut * Y^T, or dOut * Y where the forward product read Y^T (a
  // PyTorch weight, [out, in]).
  bool transposedY = op.getTransposeY();
  auto dx = MatmulOp::create(b, loc, op.getXGrad().getType(), op.getOutGrad(),
                             op.getY(),
                             /*transpose_x=*/false,
                             /*transpose_y=*/!transposedY);
  // dY = X^T * dOut (dOut^T * X for a transposed y), with the leading dims
  // of X and dOut folded.
  Value x = op.getX(), dout = op.getOutGrad();
  if (op.getX().getType().getRank() > 2) {
    auto groups = foldLeadingDims(op.getX().getType().getRank());
    x = tensor::CollapseShapeOp::create(b, loc, foldedType(op.getX().getType()),
                                        x, groups);
    dout = tensor::CollapseShapeOp::create(
        b, loc, foldedType(op.getOutGrad().getType()), dout, groups);
  }
  if (transposedY)
    std::swap(x, dout);
  auto dy = MatmulOp::create(b, loc, op.getYGrad().getType(), x, dout,
                             /*transpose_x=*/true, /*transpose_y=*/false);
  return {dx.getResult(), dy.getResult()};
}

void mlir::dist::splitMatmulGrad(RewriterBase &rewriter, MatmulGradOp op) {
  std::string unused;
  Operation *reduction = findXGradReduction(op, unused);
  Location loc = rewriteLoc(op.getLoc(), kRewriteTag);

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  auto [dx, dy] = buildMatmulGradProducts(rewriter, op, loc);
  // The reduction comes right after dX and before dY, so that it overlaps
  // with the dY matmul on the model-parallel stream. A clone keeps its kind,
  // result type and attributes.
  rewriter.setInsertionPointAfterValue(dx);
  Operation *reduced = rewriter.clone(*reduction);
  reduced->setOperand(0, dx);
  reduced->setLoc(rewriteLoc(reduction->getLoc(), kRewriteTag));
  auto stream = StreamKindAttr::get(op.getContext(), StreamKind::ModelParallel);
  if (auto allreduce = dyn_cast<AllReduceOp>(reduced))
    allreduce.setStreamAttr(stream);
  else
    cast<ReduceScatterOp>(reduced).setStreamAttr(stream);

  rewriter.replaceOp(reduction, reduced->getResults());
  rewriter.replaceOp(op, {dx, dy});
}

namespace {
struct SplitMatmulGradPattern : public OpRewritePattern<MatmulGradOp> {
  SplitMatmulGradPattern(MLIRContext *ctx,
                         const MatmulGradOverlapOptions &options)
      : OpRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(MatmulGradOp op,
                                PatternRewriter &rewriter) const override {
    std::string whyNot;
    if (failed(canSplitMatmulGrad(op, options, whyNot)))
      return rewriter.notifyMatchFailure(op, whyNot);
    splitMatmulGrad(rewriter, op);
    return success();
  }

  MatmulGradOverlapOptions options;
};

struct DistMatmulGradOverlapPass
    : public CostModelPass<CompletedPass<
          dist::impl::DistMatmulGradOverlapBase<DistMatmulGradOverlapPass>>> {
  using CostModelPass::CostModelPass;

  void runOnCompleted(func::FuncOp func) override {
    MatmulGradOverlapOptions options;
    options.minOverlapRatio = minOverlapRatio;
    if (!std::isfinite(options.minOverlapRatio) ||
        options.minOverlapRatio < 0) {
      mlir::emitError(func->getLoc())
          << "min-overlap-ratio=" << options.minOverlapRatio
          << " must be non-negative and finite";
      return signalPassFailure();
    }
    FailureOr<CostModelOptions> costModel = costModelOptions();
    if (failed(costModel))
      return signalPassFailure();
    options.costModel = *costModel;

    // Collect first: splitting erases the later reduction, which a walk
    // that is still to visit it must not see.
    SmallVector<MatmulGradOp> candidates;
    func->walk([&](MatmulGradOp op) { candidates.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (MatmulGradOp op : candidates) {
      std::string whyNot;
      if (failed(canSplitMatmulGrad(op, options, whyNot))) {
        ++numSkipped;
        if (remarks)
          op.emitRemark("not split: ") << whyNot;
        continue;
      }
      splitMatmulGrad(rewriter, op);
      ++numSplit;
    }
  }
};
} // namespace

void mlir::dist::populateMatmulGradOverlapPatterns(
    RewritePatternSet &patterns, const MatmulGradOverlapOptions &options) {
  patterns.add<SplitMatmulGradPattern>(patterns.getContext(), options);
}
