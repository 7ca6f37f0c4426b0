//===- MeshIndexing.h - mesh coordinates as IR or constants -----*- C++ -*-===//
//
// Where a lowering or a rewrite needs a process's place in a mesh, it asks
// these builders. Each takes and returns OpFoldResults: given constants (a
// rank that --dist-specialize-rank fixed) they fold with the arithmetic of
// MeshUtils.h and create nothing; given values (a rank from the runtime)
// they build `affine.delinearize_index`/`affine.linearize_index`, as
// upstream's shard lowering does. So the row-major convention is written
// once, in MeshUtils.cpp, and once as IR, here.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_UTILS_MESHINDEXING_H
#define DIST_DIALECT_DIST_UTILS_MESHINDEXING_H

#include "dist/Dialect/Dist/IR/DistAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir {
namespace dist {
namespace mesh {

/// The position in `mesh`'s process-id list of the process with `rank`.
/// With default ids that is the rank itself; otherwise a search of the id
/// list (never a table indexed by the rank, whose size would be the largest
/// id). Fails only for a constant rank that is not in the mesh; a rank
/// value that is not in the mesh gives position 0.
FailureOr<OpFoldResult> buildPosition(OpBuilder &b, Location loc, MeshAttr mesh,
                                      OpFoldResult rank);

/// The coordinates, one per mesh axis, of the process at `position`.
SmallVector<OpFoldResult> buildCoords(OpBuilder &b, Location loc, MeshAttr mesh,
                                      OpFoldResult position);

/// The row-major index of `coords` (one per mesh axis) restricted to
/// `axes`, in the order given: with a collective's axes, the process's
/// position in its group (as mesh::processGroup orders it); with the other
/// axes, the index of the group.
OpFoldResult buildLinearIndex(OpBuilder &b, Location loc, MeshAttr mesh,
                              ArrayRef<OpFoldResult> coords,
                              ArrayRef<int64_t> axes);

/// The mesh axes not in `axes`, ascending.
SmallVector<int64_t> complementAxes(MeshAttr mesh, ArrayRef<int64_t> axes);

} // namespace mesh
} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_UTILS_MESHINDEXING_H
