//===- DistRuleModels.cpp - distribution rules of upstream ops ------------===//
//
// Upstream ops cannot be given verifiers, but they can be given interfaces:
// the arith elementwise ops and casts and the tensor reshapes that dist
// programs apply to encoded tensors get DistributionRuleInterface here, and
// --dist-verify-distributions checks them.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/DistRules.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::rules;

namespace {
/// The elementwise rule for an op whose results all take the one inferred
/// distribution (comparisons: of an i1 tensor).
template <typename OpTy, Linearity L>
struct ElementwiseModel
    : public DistributionRuleInterface::ExternalModel<ElementwiseModel<OpTy, L>,
                                                      OpTy> {
  FailureOr<SmallVector<TensorDistAttr>>
  inferResultDistributions(Operation *op, raw_ostream &whyNot) const {
    SmallVector<Type> types(op->getOperandTypes());
    llvm::append_range(types, op->getResultTypes());
    FailureOr<MeshAttr> mesh = commonMesh(types, whyNot);
    if (failed(mesh))
      return failure();
    // Scalar operands (a select's i1 on tensors) are the same everywhere.
    FailureOr<TensorDistAttr> r =
        inferElementwise(*mesh, op->getOperandTypes(), L, whyNot);
    if (failed(r))
      return failure();
    return SmallVector<TensorDistAttr>(op->getNumResults(), *r);
  }
};

/// collapse_shape/expand_shape: a group of dims is split as its outermost
/// dim, and only that one may be split (otherwise the local reshape is not
/// a block of the global one). Partial values pass through.
template <typename OpTy>
struct ReshapeModel
    : public DistributionRuleInterface::ExternalModel<ReshapeModel<OpTy>,
                                                      OpTy> {
  FailureOr<SmallVector<TensorDistAttr>>
  inferResultDistributions(Operation *op, raw_ostream &whyNot) const {
    auto reshape = cast<OpTy>(op);
    SmallVector<Type> types{op->getOperandTypes()};
    llvm::append_range(types, op->getResultTypes());
    FailureOr<MeshAttr> mesh = commonMesh(types, whyNot);
    if (failed(mesh))
      return failure();
    Dist src = Dist::of(reshape.getSrc().getType(), *mesh);
    Dist out;
    out.mesh = *mesh;
    out.partial = src.partial;
    auto groups = reshape.getReassociationIndices();
    if constexpr (std::is_same_v<OpTy, tensor::CollapseShapeOp>) {
      for (ArrayRef<int64_t> group : groups) {
        for (int64_t inner : group.drop_front())
          if (src.dims[inner] >= 0) {
            whyNot << "dim " << inner << " is split over mesh "
                   << axisName(*mesh, src.dims[inner])
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
    FailureOr<TensorDistAttr> r = out.toAttr(whyNot);
    if (failed(r))
      return failure();
    return SmallVector<TensorDistAttr>{*r};
  }
};

template <Linearity L, typename... Ops> void attach(MLIRContext *ctx) {
  (Ops::template attachInterface<ElementwiseModel<Ops, L>>(*ctx), ...);
}
} // namespace

void mlir::dist::registerDistributionRuleModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    using namespace arith;
    attach<Linearity::Additive, AddFOp, SubFOp, AddIOp, SubIOp>(ctx);
    attach<Linearity::Multiplicative, MulFOp, MulIOp>(ctx);
    attach<Linearity::Dividend, DivFOp, DivSIOp, DivUIOp>(ctx);
    attach<Linearity::Linear, NegFOp>(ctx);
    attach<Linearity::ExactCast, ExtFOp, ExtSIOp, ExtUIOp>(ctx);
    attach<Linearity::MonotoneCast, TruncFOp, TruncIOp, SIToFPOp, UIToFPOp,
           FPToSIOp, FPToUIOp, IndexCastOp>(ctx);
    attach<Linearity::Nonlinear, MaximumFOp, MinimumFOp, MaxSIOp, MinSIOp,
           MaxUIOp, MinUIOp, CmpFOp, CmpIOp, SelectOp, AndIOp, OrIOp, XOrIOp,
           RemFOp, RemSIOp, RemUIOp, ShLIOp, ShRSIOp, ShRUIOp>(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::CollapseShapeOp::attachInterface<
        ReshapeModel<tensor::CollapseShapeOp>>(*ctx);
    tensor::ExpandShapeOp::attachInterface<ReshapeModel<tensor::ExpandShapeOp>>(
        *ctx);
  });
}

void mlir::dist::registerDistDialect(DialectRegistry &registry) {
  registry.insert<DistDialect>();
  registerDistributionRuleModels(registry);
}
