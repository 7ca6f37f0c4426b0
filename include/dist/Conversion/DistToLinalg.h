//===- DistToLinalg.h - lower dist compute ops to linalg --------*- C++ -*-===//

#ifndef DIST_CONVERSION_DISTTOLINALG_H
#define DIST_CONVERSION_DISTTOLINALG_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace dist {

/// Patterns lowering the dist compute ops (matmuls, embeddings, dropout and
/// seeds, scale, check_finite_and_unscale) to linalg, tensor and arith on
/// the converted tensor types. A split dropout reads this process's
/// coordinates from the MPI rank. With `copyTransposed`, a matmul operand
/// read across its contiguous dim is copied into the transposed layout
/// first, which loops read faster; without, the contraction reads it in
/// place, as BLAS does (--dist-contractions-to-blas).
void populateDistToLinalgConversionPatterns(const TypeConverter &converter,
                                            RewritePatternSet &patterns,
                                            bool copyTransposed = true);

/// Marks the ops those patterns lower illegal.
void addDistToLinalgIllegalOps(ConversionTarget &target);

} // namespace dist
} // namespace mlir

#endif // DIST_CONVERSION_DISTTOLINALG_H
