//===- Packing.cpp - buffers of rows for dist.pack/unpack -----------------===//

#include "dist/Dialect/Dist/Transforms/Packing.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::dist;

SmallVector<int64_t> mlir::dist::splitAxesOf(Type type) {
  TensorDistAttr dist = getTensorDist(type);
  return dist ? dist.getSplitAxes() : SmallVector<int64_t>();
}

RankedTensorType
mlir::dist::packedType(TypeRange tensors, int64_t rows, MeshAttr mesh,
                       ArrayRef<int64_t> dims,
                       ArrayRef<std::pair<int64_t, ReductionKind>> partial) {
  int64_t columns = 0;
  for (Type type : tensors)
    columns +=
        llvm::divideCeil(cast<RankedTensorType>(type).getNumElements(), rows);
  auto type = RankedTensorType::get(
      {rows, columns},
      cast<RankedTensorType>(tensors.front()).getElementType());
  if (!mesh)
    return type;
  return withTensorDist(type, TensorDistAttr::get(mesh, dims, partial));
}

FailureOr<SmallVector<int64_t, 2>>
mlir::dist::bufferDims(ArrayRef<int64_t> splitAxes, int64_t rowAxis) {
  SmallVector<int64_t, 2> dims = {rowAxis, -1};
  for (int64_t axis : splitAxes) {
    if (axis == rowAxis)
      continue;
    if (dims[1] != -1)
      return failure();
    dims[1] = axis;
  }
  return dims;
}

bool mlir::dist::isPackedShardOf(RankedTensorType shard,
                                 RankedTensorType param) {
  TensorDistAttr dist = getTensorDist(shard);
  if (!dist || dist.isPartial() || shard.getRank() != 2 ||
      !shard.hasStaticShape() || !param.hasStaticShape() ||
      shard.getDimSize(0) != 1 ||
      shard.getElementType() != param.getElementType())
    return false;
  int64_t axis = dist.getMeshAxis(0);
  TensorDistAttr paramDist = getTensorDist(param);
  if (axis < 0 || (paramDist && (paramDist.getMesh() != dist.getMesh() ||
                                 paramDist.getDimOfMeshAxis(axis) ||
                                 paramDist.getPartialKind(axis))))
    return false;
  SmallVector<int64_t> others = splitAxesOf(param);
  int64_t other = dist.getMeshAxis(1);
  if (others.size() > 1 || (others.empty() ? other != -1 : other != others[0]))
    return false;
  int64_t size = dist.getMesh().getShape()[axis];
  return shard.getDimSize(1) ==
         llvm::divideCeilSigned(param.getNumElements(), size);
}
