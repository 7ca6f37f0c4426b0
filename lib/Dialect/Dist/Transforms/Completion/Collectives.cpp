//===- Collectives.cpp - what collectives and reshards make ---------------===//

#include "Completion.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::completion;

/// The dims a split over `axes` lands on: those whose written local size
/// the op shrinks, in order, one per axis; none when they do not match.
static std::optional<SmallVector<int64_t>>
splitDims(RankedTensorType in, RankedTensorType out, ArrayRef<int64_t> axes) {
  if (in.getRank() != out.getRank())
    return std::nullopt;
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (!in.isDynamicDim(d) && !out.isDynamicDim(d) &&
        out.getDimSize(d) < in.getDimSize(d))
      dims.push_back(d);
  if (dims.size() != axes.size())
    return std::nullopt;
  return dims;
}

std::optional<TensorDistAttr>
completion::collectiveResultDist(Operation *op, RankedTensorType in,
                                 RankedTensorType out) {
  if (!in || !out)
    return std::nullopt;
  // A c_identity keeps its operand's distribution, as a broadcast does.
  auto identity = dyn_cast<CIdentityOp>(op);
  auto redistribution = dyn_cast<RedistributionOpInterface>(op);
  if (!identity && !redistribution)
    return std::nullopt;
  MeshAttr mesh = identity ? identity.getMesh() : redistribution.getMesh();
  ArrayRef<int64_t> axes =
      identity ? identity.getAxes() : redistribution.getAxes();
  RedistributionKind kind = identity ? RedistributionKind::Broadcast
                                     : redistribution.getRedistributionKind();
  TensorDistAttr from = getTensorDist(in);
  if (!from)
    from = TensorDistAttr::getReplicated(mesh, in.getRank());
  if (from.getMesh() != mesh ||
      static_cast<int64_t>(from.getDimsMapping().size()) != in.getRank())
    return std::nullopt;
  SmallVector<int64_t> dims(from.getDimsMapping());
  SmallVector<std::pair<int64_t, ReductionKind>> partial = from.getPartials();
  auto dropPartial = [&] {
    llvm::erase_if(partial,
                   [&](auto p) { return llvm::is_contained(axes, p.first); });
  };
  auto splitOver = [&]() -> bool {
    std::optional<SmallVector<int64_t>> at = splitDims(in, out, axes);
    if (!at)
      return false;
    for (auto [d, axis] : llvm::zip(*at, axes))
      dims[d] = axis;
    return true;
  };
  auto unsplit = [&] {
    for (int64_t &a : dims)
      if (llvm::is_contained(axes, a))
        a = -1;
  };
  bool ok = true;
  switch (kind) {
  case RedistributionKind::AllReduce:
    dropPartial();
    break;
  case RedistributionKind::Broadcast:
    break;
  case RedistributionKind::AllGather:
    unsplit();
    break;
  case RedistributionKind::ReduceScatter:
    dropPartial();
    ok = splitOver();
    break;
  case RedistributionKind::AllToAll:
    unsplit();
    ok = splitOver();
    break;
  case RedistributionKind::AllSlice:
    ok = splitOver();
    break;
  case RedistributionKind::MakePartial:
    for (int64_t axis : axes)
      partial.push_back({axis, *redistribution.getReduction()});
    llvm::sort(partial, llvm::less_first());
    break;
  }
  if (!ok)
    return std::nullopt;
  // One use per axis: a dim's split or a pending reduction.
  llvm::SmallDenseSet<int64_t> used;
  for (int64_t a : dims)
    if (a >= 0 && (a >= mesh.getRank() || !used.insert(a).second))
      return std::nullopt;
  for (int64_t a : llvm::make_first_range(partial))
    if (a < 0 || a >= mesh.getRank() || !used.insert(a).second)
      return std::nullopt;
  return TensorDistAttr::get(mesh, dims, partial);
}

/// What a `dist.reshard` written between two undecided types in a function
/// being completed changes its operand's distribution `from` into: its
/// written local shapes say it. A dim that grows is gathered, pending
/// reductions are completed, and a dim that shrinks by k is split over a
/// mesh axis of size k that is then free (those the reshard freed first, in
/// order). None when no axis fits.
std::optional<TensorDistAttr>
completion::reshardResultDist(RankedTensorType in, RankedTensorType out,
                              TensorDistAttr from) {
  if (!from || in.getRank() != out.getRank() || !in.hasStaticShape() ||
      !out.hasStaticShape() ||
      static_cast<int64_t>(from.getDimsMapping().size()) != in.getRank())
    return std::nullopt;
  MeshAttr mesh = from.getMesh();
  SmallVector<int64_t> global = mesh::globalShape(in.getShape(), from);
  SmallVector<int64_t> dims(from.getDimsMapping());
  SmallVector<int64_t> freed;
  for (auto [axis, kind] : from.getPartials())
    freed.push_back(axis);
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (out.getDimSize(d) != in.getDimSize(d) && dims[d] >= 0) {
      freed.push_back(dims[d]);
      dims[d] = -1;
    }
  for (int64_t a = 0; a < mesh.getRank(); ++a)
    if (!llvm::is_contained(freed, a) && !llvm::is_contained(dims, a))
      freed.push_back(a);
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (out.getDimSize(d) == in.getDimSize(d) || out.getDimSize(d) == global[d])
      continue;
    auto *axis = llvm::find_if(freed, [&](int64_t a) {
      return out.getDimSize(d) * mesh.getShape()[a] == global[d];
    });
    if (axis == freed.end())
      return std::nullopt;
    dims[d] = *axis;
    freed.erase(axis);
  }
  return TensorDistAttr::get(mesh, dims, {});
}
