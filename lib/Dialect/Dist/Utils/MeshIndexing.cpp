//===- MeshIndexing.cpp - mesh coordinates as IR or constants -------------===//

#include "dist/Dialect/Dist/Utils/MeshIndexing.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::dist;

FailureOr<OpFoldResult> mesh::buildPosition(OpBuilder &b, Location loc,
                                            MeshAttr mesh, OpFoldResult rank) {
  ArrayRef<int64_t> ids = mesh.getProcessIds();
  if (std::optional<int64_t> constant = getConstantIntValue(rank)) {
    const int64_t *it = llvm::find(ids, *constant);
    if (it == ids.end())
      return failure();
    return OpFoldResult(b.getIndexAttr(it - ids.begin()));
  }
  if (mesh.hasDefaultProcessIds())
    return rank;
  // position = the i with ids[i] == rank, by a loop over the id list: its
  // cost is the mesh size, once per function, whatever the ids' range.
  Value rankValue = getValueOrCreateConstantIndexOp(b, loc, rank);
  auto tableType = RankedTensorType::get({static_cast<int64_t>(ids.size())},
                                         b.getIndexType());
  Value table = arith::ConstantOp::create(
      b, loc, tableType, DenseElementsAttr::get(tableType, ids));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value size = arith::ConstantIndexOp::create(b, loc, ids.size());
  auto loop = scf::ForOp::create(
      b, loc, zero, size, one, ValueRange{zero},
      [&](OpBuilder &nb, Location nloc, Value i, ValueRange found) {
        Value id = tensor::ExtractOp::create(nb, nloc, table, ValueRange{i});
        Value match = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq,
                                            id, rankValue);
        Value next = arith::SelectOp::create(nb, nloc, match, i, found[0]);
        scf::YieldOp::create(nb, nloc, next);
      });
  return OpFoldResult(loop.getResult(0));
}

SmallVector<OpFoldResult> mesh::buildCoords(OpBuilder &b, Location loc,
                                            MeshAttr mesh,
                                            OpFoldResult position) {
  if (std::optional<int64_t> constant = getConstantIntValue(position))
    return getAsIndexOpFoldResult(b.getContext(),
                                  unravel(mesh.getShape(), *constant));
  Value linear = getValueOrCreateConstantIndexOp(b, loc, position);
  auto delinearize = affine::AffineDelinearizeIndexOp::create(
      b, loc, linear, mesh.getShape(), /*hasOuterBound=*/true);
  return getAsOpFoldResult(delinearize.getResults());
}

OpFoldResult mesh::buildLinearIndex(OpBuilder &b, Location loc, MeshAttr mesh,
                                    ArrayRef<OpFoldResult> coords,
                                    ArrayRef<int64_t> axes) {
  SmallVector<int64_t> basis;
  SmallVector<OpFoldResult> picked;
  for (int64_t axis : axes) {
    basis.push_back(mesh.getAxisSize(axis));
    picked.push_back(coords[axis]);
  }
  if (std::optional<SmallVector<int64_t>> constants =
          getConstantIntValues(picked))
    return b.getIndexAttr(ravel(basis, *constants));
  SmallVector<Value> values = llvm::map_to_vector(picked, [&](OpFoldResult c) {
    return getValueOrCreateConstantIndexOp(b, loc, c);
  });
  return affine::AffineLinearizeIndexOp::create(b, loc, values, basis,
                                                /*disjoint=*/true)
      .getResult();
}

SmallVector<int64_t> mesh::complementAxes(MeshAttr mesh,
                                          ArrayRef<int64_t> axes) {
  SmallVector<int64_t> others;
  for (int64_t axis = 0; axis < mesh.getRank(); ++axis)
    if (!llvm::is_contained(axes, axis))
      others.push_back(axis);
  return others;
}
