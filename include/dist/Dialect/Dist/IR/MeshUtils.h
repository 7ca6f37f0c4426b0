//===- MeshUtils.h - process-mesh arithmetic --------------------*- C++ -*-===//
//
// The one place that knows how processes sit in a mesh: coordinates, process
// groups, and local/global shapes. Verifiers, passes and the runtime lowering
// all call these; none of them re-derive the arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_MESHUTILS_H
#define DIST_DIALECT_DIST_IR_MESHUTILS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace mlir {
namespace dist {
class MeshAttr;
class TensorDistAttr;

namespace mesh {

/// Product of the sizes of `axes` of a mesh shaped `shape` (1 for no axes).
int64_t groupSize(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes);

/// Row-major unravel of `position` in a mesh shaped `shape`.
SmallVector<int64_t> unravel(ArrayRef<int64_t> shape, int64_t position);

/// Row-major linear position of `coord` in a mesh shaped `shape`.
int64_t ravel(ArrayRef<int64_t> shape, ArrayRef<int64_t> coord);

/// Coordinate of process `rank`: the unravel of its position in
/// `processIds`, or nothing when `rank` is not in the mesh.
std::optional<SmallVector<int64_t>> processCoord(ArrayRef<int64_t> shape,
                                                 ArrayRef<int64_t> processIds,
                                                 int64_t rank);

/// The processes whose coordinates differ from `rank`'s only along `axes`
/// (Paddle's `_get_comm_group`), ordered by their coordinates along `axes`
/// (row-major in the order given). Empty when `rank` is not in the mesh.
SmallVector<int64_t> processGroup(ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> processIds, int64_t rank,
                                  ArrayRef<int64_t> axes);

/// All process groups along `axes`, each ordered as `processGroup` orders
/// it, the groups ordered by the position of their first member.
SmallVector<SmallVector<int64_t>> allProcessGroups(ArrayRef<int64_t> shape,
                                                   ArrayRef<int64_t> processIds,
                                                   ArrayRef<int64_t> axes);

/// Convenience overloads on a mesh attribute.
std::optional<SmallVector<int64_t>> processCoord(MeshAttr mesh, int64_t rank);
SmallVector<int64_t> processGroup(MeshAttr mesh, int64_t rank,
                                  ArrayRef<int64_t> axes);
int64_t groupSize(MeshAttr mesh, ArrayRef<int64_t> axes);

/// Global (logical) shape of a tensor whose local shape is `localShape`:
/// each dimension mapped to a mesh axis is multiplied by that axis's size.
/// Dynamic dimensions stay dynamic.
SmallVector<int64_t> globalShape(ArrayRef<int64_t> localShape,
                                 TensorDistAttr dist);

/// Local shape of a tensor whose global shape is `globalShape`, or nothing
/// when a split dimension is not divisible by its axis size.
std::optional<SmallVector<int64_t>> localShape(ArrayRef<int64_t> globalShape,
                                               TensorDistAttr dist);

/// The distribution of a tensor whose dims are collapsed in `groups` of
/// consecutive dims (tensor.collapse_shape's reassociation). A group keeps
/// the mesh axis of its outermost dim; nothing when another dim of a group is
/// split, since the local collapse is then not a block of the global one.
/// A null `dist` stays null.
std::optional<TensorDistAttr>
collapseDist(TensorDistAttr dist, ArrayRef<SmallVector<int64_t, 2>> groups);

} // namespace mesh
} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_IR_MESHUTILS_H
