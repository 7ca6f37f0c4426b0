//===- Packing.h - buffers of rows for dist.pack/unpack ---------*- C++ -*-===//
//
// The types of the 2-D buffers dist.pack makes, which the optimizer sharding
// and the gradient bucketing both build: one place says how many columns a
// set of tensors needs and how the buffer is distributed.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_PACKING_H
#define DIST_DIALECT_DIST_TRANSFORMS_PACKING_H

#include "dist/Dialect/Dist/IR/DistAttrs.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeRange.h"

namespace mlir {
namespace dist {

/// The mesh axes that split `type` (on any dims), ascending.
SmallVector<int64_t> splitAxesOf(Type type);

/// The buffer of `rows` rows that dist.pack makes of `tensors` (static, one
/// element type): `rows x sum(ceil(numel / rows))`, on `mesh` (null: no
/// encoding) with `dims` (two entries) and `partial`. Failure when `mesh`
/// is set and `dims` does not hold every axis that splits the tensors.
RankedTensorType
packedType(TypeRange tensors, int64_t rows, MeshAttr mesh,
           ArrayRef<int64_t> dims,
           ArrayRef<std::pair<int64_t, ReductionKind>> partial = {});

/// The dims of a buffer split over `splitAxes` (at most two), with
/// `rowAxis` (or -1) on its rows: the rows' axis first, the others on the
/// columns. Failure when they do not fit in two dims.
FailureOr<SmallVector<int64_t, 2>> bufferDims(ArrayRef<int64_t> splitAxes,
                                              int64_t rowAxis);

/// Whether `shard` is one process's row of `param` packed over a mesh axis
/// (what --dist-shard-optimizer makes of a state or, at stage 2, a
/// gradient): `1 x ceil(numel / n)` elements split over an axis of size `n`
/// that neither splits `param` nor is partial there, and over the axis
/// that splits `param`, if any.
bool isPackedShardOf(RankedTensorType shard, RankedTensorType param);

} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_TRANSFORMS_PACKING_H
