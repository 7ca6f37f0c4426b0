//===- DistAttrs.h - dist attributes ----------------------------*- C++ -*-===//

#ifndef DIST_DIALECT_DIST_IR_DISTATTRS_H
#define DIST_DIALECT_DIST_IR_DISTATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TensorEncoding.h"

#include "dist/Dialect/Dist/IR/DistEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dist/Dialect/Dist/IR/DistAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dist/Dialect/Dist/IR/DistTypes.h.inc"

namespace mlir {
namespace dist {

/// The `#dist.tensor` encoding of `type`, or null when it is not a ranked
/// tensor or carries no (or another) encoding.
TensorDistAttr getTensorDist(Type type);

/// `type` with its encoding replaced by `dist` (removed when `dist` is null).
RankedTensorType withTensorDist(RankedTensorType type, TensorDistAttr dist);

} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_IR_DISTATTRS_H
