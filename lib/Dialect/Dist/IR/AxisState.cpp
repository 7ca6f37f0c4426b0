//===- AxisState.cpp - a distribution seen along one mesh axis ------------===//

#include "dist/Dialect/Dist/IR/AxisState.h"

using namespace mlir;
using namespace mlir::dist;

AxisState mlir::dist::getAxisState(TensorDistAttr dist, int64_t axis) {
  if (std::optional<int64_t> dim = dist.getDimOfMeshAxis(axis))
    return AxisState::split(*dim);
  if (std::optional<ReductionKind> kind = dist.getPartialKind(axis))
    return AxisState::partial(*kind);
  return AxisState::replicated();
}

TensorDistAttr mlir::dist::withAxisState(TensorDistAttr dist, int64_t axis,
                                         AxisState state) {
  SmallVector<int64_t> dims(dist.getDimsMapping());
  for (int64_t &mapped : dims)
    if (mapped == axis)
      mapped = -1;
  if (state.isSplit())
    dims[state.dim] = axis;
  SmallVector<std::pair<int64_t, ReductionKind>> partials;
  for (auto [a, kind] : dist.getPartials())
    if (a != axis)
      partials.emplace_back(a, kind);
  if (state.isPartial())
    partials.emplace_back(axis, state.reduction);
  return TensorDistAttr::get(dist.getMesh(), dims, partials);
}

llvm::raw_ostream &mlir::dist::operator<<(llvm::raw_ostream &os,
                                          const AxisState &state) {
  switch (state.kind) {
  case AxisState::Kind::Replicated:
    return os << "replicated";
  case AxisState::Kind::Split:
    return os << "split dim " << state.dim;
  case AxisState::Kind::Partial:
    return os << "partial (" << stringifyReductionKind(state.reduction) << ")";
  }
  llvm_unreachable("unknown axis state");
}

Diagnostic &mlir::dist::operator<<(Diagnostic &diag, const AxisState &state) {
  std::string text;
  llvm::raw_string_ostream(text) << state;
  return diag << text;
}
