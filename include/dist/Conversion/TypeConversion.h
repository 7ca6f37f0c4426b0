//===- TypeConversion.h - types of lowered dist programs --------*- C++ -*-===//
//
// What both dist lowerings agree on: the type converter, the conversion
// target's rule for everything they do not claim, and the patterns that
// take the `#dist.tensor` encodings off every other op. With these, the two
// pattern sets (DistToLinalg.h, DistToMPI.h) run in either order or as one
// conversion.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_CONVERSION_TYPECONVERSION_H
#define DIST_CONVERSION_TYPECONVERSION_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace dist {

/// Drops `#dist.tensor` encodings from tensor types. A
/// `!dist.future<tensor<...xT>>` becomes two values: the 1-D receive buffer
/// `memref<N x R>` (R: getReductionElementType(T)) and the runtime's i64
/// request handle; the lowered dist.wait completes the one and reads the
/// other. Encoded and plain tensors of one shape convert into each other
/// with `tensor.cast`.
class DistTypeConverter : public TypeConverter {
public:
  DistTypeConverter();
};

/// Checks that every memref type under `root` (of results, block arguments
/// and function signatures, nested ones included) has a memory space the
/// LLVM lowering can give an address space: none or an integer. Another one
/// (a `#dist.tensor`, which describes tensors only) is an error at the op
/// that holds it; upstream's LLVM conversion would report it without a
/// location and leave the op unconverted.
LogicalResult checkLowerableMemorySpaces(Operation *root);

/// `type` without its `#dist.tensor` encoding; other types unchanged.
Type dropDistEncoding(Type type);

/// The element type MPI reduces `elementType` in: f16 and bf16 in f32,
/// integers narrower than 32 bits in i32, f32/f64/i32/i64 as they are. Null
/// when MPI has no reduction for it (index, complex, f8, ...).
Type getReductionElementType(Type elementType);

/// Rebuilds every op that is not a dist op without encodings in its types
/// (results, region arguments, typed attributes), and converts function
/// signatures and bodies. A `tensor.cast` that only added or removed an
/// encoding folds away.
void populateDistEncodingDropPatterns(const TypeConverter &converter,
                                      RewritePatternSet &patterns);

/// Dist ops are legal unless a lowering marks them illegal (its pattern set
/// adds them); any other op is legal once none of its types, or its
/// regions' argument types, carries an encoding.
void configureDistConversionTarget(ConversionTarget &target,
                                   const TypeConverter &converter);

} // namespace dist
} // namespace mlir

#endif // DIST_CONVERSION_TYPECONVERSION_H
