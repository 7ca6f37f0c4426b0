//===- TensorBuilders.cpp - tensor computations both lowerings build ------===//

#include "dist/Conversion/TensorBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::dist;

Value mlir::dist::buildZeros(OpBuilder &b, Location loc,
                             RankedTensorType type) {
  Value empty = tensor::EmptyOp::create(
      b, loc, type.getShape(), type.getElementType(), type.getEncoding());
  Value zero = arith::ConstantOp::create(b, loc, type.getElementType(),
                                         b.getZeroAttr(type.getElementType()));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

Value mlir::dist::buildScaled(OpBuilder &b, Location loc, Value x,
                              Value factor) {
  auto type = cast<RankedTensorType>(x.getType());
  auto map = AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext());
  auto generic = linalg::GenericOp::create(
      b, loc, type, ValueRange{x}, ValueRange{buildZeros(b, loc, type)},
      ArrayRef<AffineMap>{map, map},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value product = arith::MulFOp::create(nb, nloc, args[0], factor);
        linalg::YieldOp::create(nb, nloc, product);
      });
  return generic.getResult(0);
}
