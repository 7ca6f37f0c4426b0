//===- DistRuleModels.cpp - distribution rules of upstream ops ------------===//
//
// Upstream ops cannot be given verifiers, but they can be given interfaces:
// the arith and math elementwise ops and casts and the tensor reshapes that
// dist programs apply to encoded tensors get DistributionRuleInterface here
// (the linalg structured ops in LinalgRuleModel.cpp), and
// --dist-verify-distributions checks them.
//
//===----------------------------------------------------------------------===//

#include "RuleModelUtils.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::rules;
using rules::detail::GivenTypes;
using rules::detail::MeshRuleModel;

namespace {
/// The elementwise rule for an op whose results all take the one inferred
/// distribution (comparisons: of an i1 tensor).
template <typename OpTy, Linearity L>
struct ElementwiseModel
    : public MeshRuleModel<ElementwiseModel<OpTy, L>, OpTy> {
  FailureOr<SmallVector<Dist>> infer(OpTy, GivenTypes types, MeshAttr mesh,
                                     raw_ostream &whyNot) const {
    // Scalar operands (a select's i1 on tensors) are the same everywhere.
    FailureOr<Dist> r = inferElementwise(mesh, types.operands, L, whyNot);
    if (failed(r))
      return failure();
    return SmallVector<Dist>(types.results.size(), *r);
  }
};

/// collapse_shape/expand_shape: a group of dims is split as its outermost
/// dim, and only that one may be split (otherwise the local reshape is not
/// a block of the global one). Partial values pass through.
template <typename OpTy>
struct ReshapeModel : public MeshRuleModel<ReshapeModel<OpTy>, OpTy> {
  FailureOr<SmallVector<Dist>> infer(OpTy reshape, GivenTypes types,
                                     MeshAttr mesh, raw_ostream &whyNot) const {
    Dist src = Dist::of(types.of(reshape.getSrcMutable()), mesh);
    Dist out;
    out.mesh = mesh;
    out.partial = src.partial;
    auto groups = reshape.getReassociationIndices();
    if constexpr (std::is_same_v<OpTy, tensor::CollapseShapeOp>) {
      for (ArrayRef<int64_t> group : groups) {
        for (int64_t inner : group.drop_front())
          if (src.dims[inner] >= 0) {
            whyNot << "dim " << inner << " is split over mesh "
                   << axisName(mesh, src.dims[inner])
                   << " but is not the outermost of the dims collapsed with "
                      "it: the local collapse would not be a block of the "
                      "global one";
            return failure();
          }
        out.dims.push_back(src.dims[group.front()]);
      }
    } else {
      for (auto [dim, group] : llvm::enumerate(groups))
        for (auto [i, resultDim] : llvm::enumerate(group))
          out.dims.push_back(i == 0 ? src.dims[dim] : -1);
    }
    if (failed(out.verify(whyNot)))
      return failure();
    return SmallVector<Dist>{std::move(out)};
  }
};

using rules::detail::OpList;
using rules::detail::promise;

/// The upstream ops that have a rule, by rule: the one list both attaching
/// the models and promising them read.
namespace lists {
using namespace arith;
using Additive = OpList<AddFOp, SubFOp, AddIOp, SubIOp>;
using Multiplicative = OpList<MulFOp, MulIOp>;
using Dividend = OpList<DivFOp>;
using Maximum = OpList<MaximumFOp, MaxSIOp, MaxUIOp>;
using Minimum = OpList<MinimumFOp, MinSIOp, MinUIOp>;
using Linear = OpList<NegFOp>;
using ExactCast = OpList<ExtFOp, ExtSIOp, ExtUIOp>;
using MonotoneCast = OpList<TruncFOp, TruncIOp, SIToFPOp, UIToFPOp, FPToSIOp,
                            FPToUIOp, IndexCastOp>;
using Nonlinear =
    OpList<DivSIOp, DivUIOp, CmpFOp, CmpIOp, SelectOp, AndIOp, OrIOp, XOrIOp,
           RemFOp, RemSIOp, RemUIOp, ShLIOp, ShRSIOp, ShRUIOp>;
using Reshapes = OpList<tensor::CollapseShapeOp, tensor::ExpandShapeOp>;
/// Every math op is elementwise and, for a pending reduction, nonlinear.
using Math = OpList<
#define GET_OP_LIST
#include "mlir/Dialect/Math/IR/MathOps.cpp.inc"
    >;
} // namespace lists

template <Linearity L, typename... Ops>
void attachElementwise(MLIRContext *ctx, OpList<Ops...>) {
  (Ops::template attachInterface<ElementwiseModel<Ops, L>>(*ctx), ...);
}

template <typename... Ops>
void attachReshapes(MLIRContext *ctx, OpList<Ops...>) {
  (Ops::template attachInterface<ReshapeModel<Ops>>(*ctx), ...);
}

} // namespace

void mlir::dist::registerDistributionRuleModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attachElementwise<Linearity::Additive>(ctx, lists::Additive{});
    attachElementwise<Linearity::Multiplicative>(ctx, lists::Multiplicative{});
    attachElementwise<Linearity::Dividend>(ctx, lists::Dividend{});
    attachElementwise<Linearity::Maximum>(ctx, lists::Maximum{});
    attachElementwise<Linearity::Minimum>(ctx, lists::Minimum{});
    attachElementwise<Linearity::Linear>(ctx, lists::Linear{});
    attachElementwise<Linearity::ExactCast>(ctx, lists::ExactCast{});
    attachElementwise<Linearity::MonotoneCast>(ctx, lists::MonotoneCast{});
    attachElementwise<Linearity::Nonlinear>(ctx, lists::Nonlinear{});
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    attachReshapes(ctx, lists::Reshapes{});
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attachElementwise<Linearity::Nonlinear>(ctx, lists::Math{});
  });
  registerLinalgRuleModels(registry);
  registerTensorRuleModels(registry);
}

void mlir::dist::promiseDistributionRules(MLIRContext *ctx) {
  promise(ctx, lists::Additive{});
  promise(ctx, lists::Multiplicative{});
  promise(ctx, lists::Dividend{});
  promise(ctx, lists::Maximum{});
  promise(ctx, lists::Minimum{});
  promise(ctx, lists::Linear{});
  promise(ctx, lists::ExactCast{});
  promise(ctx, lists::MonotoneCast{});
  promise(ctx, lists::Nonlinear{});
  promise(ctx, lists::Reshapes{});
  promise(ctx, lists::Math{});
  promiseLinalgRules(ctx);
  promiseTensorRules(ctx);
}

bool mlir::dist::rules::lacksRegisteredRule(Operation *op) {
  // (OperationName::hasPromiseOrImplementsInterface does not compile in
  // MLIR 22: it passes the dialect by pointer.)
  OperationName name = op->getName();
  Dialect *dialect = name.getDialect();
  return dialect && !name.hasInterface<DistributionRuleInterface>() &&
         dialect->hasPromisedInterface(
             name.getTypeID(), DistributionRuleInterface::getInterfaceID());
}

LogicalResult mlir::dist::rules::requireRegisteredRule(Operation *op) {
  if (!lacksRegisteredRule(op))
    return success();
  return op->emitOpError(
             "has a distribution rule that this tool did not register (an "
             "external model of dist): build the tool's DialectRegistry "
             "with mlir::dist::registerAllDistDialects(registry) from "
             "\"dist/InitAllDist.h\" (C: mlirDistRegisterDialects), not "
             "with registry.insert<")
         << "dist::DistDialect>() alone";
}

void mlir::dist::registerDistDialect(DialectRegistry &registry) {
  registry.insert<DistDialect>();
  registerDistributionRuleModels(registry);
}
