//===- AxisState.h - a distribution seen along one mesh axis ----*- C++ -*-===//
//
// Along each mesh axis a `#dist.tensor` is in one of three states: the same
// value on every process of the axis (replicated), one block of a dim per
// process (split), or terms of a pending reduction (partial). Every
// redistribution changes the states of some axes and keeps the others: the
// redistribution ops' verifiers, the reshard planner and the MPI lowering
// all read distributions this way.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_AXISSTATE_H
#define DIST_DIALECT_DIST_IR_AXISSTATE_H

#include "dist/Dialect/Dist/IR/DistAttrs.h"
#include "mlir/IR/Diagnostics.h"

namespace mlir {
namespace dist {

struct AxisState {
  enum class Kind { Replicated, Split, Partial };
  Kind kind = Kind::Replicated;
  /// The dim a split axis splits.
  int64_t dim = -1;
  /// The reduction a partial axis awaits.
  ReductionKind reduction = ReductionKind::Sum;

  static AxisState replicated() { return {}; }
  static AxisState split(int64_t dim) { return {Kind::Split, dim, {}}; }
  static AxisState partial(ReductionKind kind) {
    return {Kind::Partial, -1, kind};
  }
  bool isReplicated() const { return kind == Kind::Replicated; }
  bool isSplit() const { return kind == Kind::Split; }
  bool isPartial() const { return kind == Kind::Partial; }

  bool operator==(const AxisState &other) const {
    return kind == other.kind && (!isSplit() || dim == other.dim) &&
           (!isPartial() || reduction == other.reduction);
  }
  bool operator!=(const AxisState &other) const { return !(*this == other); }
};

/// The state of `dist` along mesh axis `axis`.
AxisState getAxisState(TensorDistAttr dist, int64_t axis);

/// `dist` with mesh axis `axis` in `state`; a dim it splits must not be
/// split by another axis.
TensorDistAttr withAxisState(TensorDistAttr dist, int64_t axis,
                             AxisState state);

/// "replicated", "split dim 1", "partial (sum)".
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const AxisState &state);
Diagnostic &operator<<(Diagnostic &diag, const AxisState &state);

} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_IR_AXISSTATE_H
