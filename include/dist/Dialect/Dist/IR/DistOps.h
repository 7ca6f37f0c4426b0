//===- DistOps.h - dist operations ------------------------------*- C++ -*-===//

#ifndef DIST_DIALECT_DIST_IR_DISTOPS_H
#define DIST_DIALECT_DIST_IR_DISTOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dist/Dialect/Dist/IR/DistAttrs.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/IR/RedistributionKind.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"

#include "dist/Dialect/Dist/IR/DistInterfaces.h.inc"

namespace mlir {
namespace dist {
/// A shape as the verifiers print it in their messages: [2, ?, 4].
std::string shapeString(ArrayRef<int64_t> shape);
} // namespace dist
} // namespace mlir

#define GET_OP_CLASSES
#include "dist/Dialect/Dist/IR/DistOps.h.inc"

#endif // DIST_DIALECT_DIST_IR_DISTOPS_H
