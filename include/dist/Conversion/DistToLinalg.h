//===- DistToLinalg.h - lower dist compute ops to linalg --------*- C++ -*-===//

#ifndef DIST_CONVERSION_DISTTOLINALG_H
#define DIST_CONVERSION_DISTTOLINALG_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace dist {

/// Patterns lowering the dist compute ops (matmuls, embeddings, dropout and
/// seeds, scale, check_finite_and_unscale) to linalg, tensor and arith on
/// the converted tensor types. A split dropout reads this process's
/// coordinates from the MPI rank.
void populateDistToLinalgConversionPatterns(const TypeConverter &converter,
                                            RewritePatternSet &patterns);

/// Marks the ops those patterns lower illegal.
void addDistToLinalgIllegalOps(ConversionTarget &target);

} // namespace dist
} // namespace mlir

#endif // DIST_CONVERSION_DISTTOLINALG_H
