//===- TensorBuilders.h - tensor computations both lowerings build -*- C++
//-*-===//
//
// The few elementwise tensor computations that the compute lowering
// (DistToLinalg) and the collective lowering (DistToMPI) both emit, built one
// way: as linalg on tensors of the given type.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_CONVERSION_TENSORBUILDERS_H
#define DIST_CONVERSION_TENSORBUILDERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir {
namespace dist {

/// A zero-filled tensor of `type` (its encoding kept).
Value buildZeros(OpBuilder &b, Location loc, RankedTensorType type);

/// Elementwise `x * factor`, `factor` a scalar of `x`'s (float) element type.
Value buildScaled(OpBuilder &b, Location loc, Value x, Value factor);

} // namespace dist
} // namespace mlir

#endif // DIST_CONVERSION_TENSORBUILDERS_H
