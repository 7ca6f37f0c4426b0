//===- MeshUtils.cpp - process-mesh arithmetic ----------------------------===//

#include "dist/Dialect/Dist/IR/MeshUtils.h"
#include "dist/Dialect/Dist/IR/DistAttrs.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::mesh;

int64_t mesh::groupSize(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes) {
  int64_t size = 1;
  for (int64_t axis : axes)
    size *= shape[axis];
  return size;
}

SmallVector<int64_t> mesh::unravel(ArrayRef<int64_t> shape, int64_t position) {
  SmallVector<int64_t> coord(shape.size());
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    coord[i] = position % shape[i];
    position /= shape[i];
  }
  return coord;
}

int64_t mesh::ravel(ArrayRef<int64_t> shape, ArrayRef<int64_t> coord) {
  int64_t position = 0;
  for (auto [size, c] : llvm::zip_equal(shape, coord))
    position = position * size + c;
  return position;
}

std::optional<SmallVector<int64_t>>
mesh::processCoord(ArrayRef<int64_t> shape, ArrayRef<int64_t> processIds,
                   int64_t rank) {
  const auto *it = llvm::find(processIds, rank);
  if (it == processIds.end())
    return std::nullopt;
  return unravel(shape, it - processIds.begin());
}

/// Walks the coordinates along `axes` row-major, holding the other axes at
/// `base`, and collects the process ids found there.
static SmallVector<int64_t> collectGroup(ArrayRef<int64_t> shape,
                                         ArrayRef<int64_t> processIds,
                                         SmallVector<int64_t> base,
                                         ArrayRef<int64_t> axes) {
  SmallVector<int64_t> axisShape;
  for (int64_t axis : axes)
    axisShape.push_back(shape[axis]);
  int64_t size = groupSize(shape, axes);
  SmallVector<int64_t> group;
  group.reserve(size);
  for (int64_t i = 0; i < size; ++i) {
    SmallVector<int64_t> sub = unravel(axisShape, i);
    for (auto [axis, c] : llvm::zip_equal(axes, sub))
      base[axis] = c;
    group.push_back(processIds[ravel(shape, base)]);
  }
  return group;
}

SmallVector<int64_t> mesh::processGroup(ArrayRef<int64_t> shape,
                                        ArrayRef<int64_t> processIds,
                                        int64_t rank, ArrayRef<int64_t> axes) {
  std::optional<SmallVector<int64_t>> coord =
      processCoord(shape, processIds, rank);
  if (!coord)
    return {};
  return collectGroup(shape, processIds, *coord, axes);
}

SmallVector<SmallVector<int64_t>>
mesh::allProcessGroups(ArrayRef<int64_t> shape, ArrayRef<int64_t> processIds,
                       ArrayRef<int64_t> axes) {
  SmallVector<SmallVector<int64_t>> groups;
  int64_t n = groupSize(shape, llvm::to_vector(llvm::seq<int64_t>(
                                   0, static_cast<int64_t>(shape.size()))));
  for (int64_t position = 0; position < n; ++position) {
    SmallVector<int64_t> coord = unravel(shape, position);
    // The group's first member has coordinate 0 along every group axis.
    if (llvm::any_of(axes, [&](int64_t axis) { return coord[axis] != 0; }))
      continue;
    groups.push_back(collectGroup(shape, processIds, coord, axes));
  }
  return groups;
}

std::optional<SmallVector<int64_t>> mesh::processCoord(MeshAttr mesh,
                                                       int64_t rank) {
  return processCoord(mesh.getShape(), mesh.getProcessIds(), rank);
}

SmallVector<int64_t> mesh::processGroup(MeshAttr mesh, int64_t rank,
                                        ArrayRef<int64_t> axes) {
  return processGroup(mesh.getShape(), mesh.getProcessIds(), rank, axes);
}

int64_t mesh::groupSize(MeshAttr mesh, ArrayRef<int64_t> axes) {
  return groupSize(mesh.getShape(), axes);
}

SmallVector<int64_t> mesh::globalShape(ArrayRef<int64_t> localShape,
                                       TensorDistAttr dist) {
  SmallVector<int64_t> shape(localShape);
  if (!dist)
    return shape;
  for (auto [dim, axis] : llvm::enumerate(dist.getDimsMapping()))
    if (axis >= 0 && !ShapedType::isDynamic(shape[dim]))
      shape[dim] *= dist.getMesh().getAxisSize(axis);
  return shape;
}

std::optional<SmallVector<int64_t>>
mesh::localShape(ArrayRef<int64_t> globalShape, TensorDistAttr dist) {
  SmallVector<int64_t> shape(globalShape);
  if (!dist)
    return shape;
  for (auto [dim, axis] : llvm::enumerate(dist.getDimsMapping())) {
    if (axis < 0 || ShapedType::isDynamic(shape[dim]))
      continue;
    int64_t size = dist.getMesh().getAxisSize(axis);
    if (shape[dim] % size != 0)
      return std::nullopt;
    shape[dim] /= size;
  }
  return shape;
}

std::optional<TensorDistAttr>
mesh::collapseDist(TensorDistAttr dist,
                   ArrayRef<SmallVector<int64_t, 2>> groups) {
  if (!dist)
    return TensorDistAttr();
  SmallVector<int64_t> dims;
  for (ArrayRef<int64_t> group : groups) {
    for (int64_t inner : group.drop_front())
      if (dist.getMeshAxis(inner) != -1)
        return std::nullopt;
    dims.push_back(dist.getMeshAxis(group.front()));
  }
  return dist.withDimsMapping(dims);
}
