//===- Varying.h - values that differ between processes ---------*- C++ -*-===//
//
// An SPMD program is the same on every process, but its values need not
// be: a process's coordinate (dist.process_coord), and whatever is computed
// from it, differ between the processes along that mesh axis; so do the
// elements of a tensor split or partial over an axis. The analysis says,
// for every value, along which mesh axes it may differ (JAX's "varying
// manual axes" of shard_map), through every op, region op, branch and call
// of a module. The distribution check uses it: a value that differs along
// an axis may not be declared replicated over it, and control that differs
// along an axis of a collective's group would let only some processes of
// the group issue the collective.
//
// What makes a value vary: dist.process_coord along an axis of size > 1;
// a tensor whose encoding splits a dim over, or is partial over, an axis;
// any op's result, from its operands (and, for region ops and branches, from
// the control that decides which values reach it). What makes it agree
// again: a collective, along the axes it communicates over. Shapes
// (tensor.dim, tensor.rank) agree everywhere: local shapes are equal.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_ANALYSIS_VARYING_H
#define DIST_ANALYSIS_VARYING_H

#include "dist/Dialect/Dist/IR/DistAttrs.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir {
namespace dist {

/// One axis of one mesh.
struct MeshAxis {
  MeshAttr mesh;
  int64_t axis;
  bool operator==(const MeshAxis &other) const {
    return mesh == other.mesh && axis == other.axis;
  }
};

/// The mesh axes along which a value may differ between processes, each
/// with the op (or, for an argument, the function) it first comes from, for
/// diagnostics.
class Variation {
public:
  bool empty() const { return axes.empty(); }
  /// Adds `axis` (from `source`); whether it was new.
  bool add(MeshAxis axis, Operation *source);
  /// Adds every axis of `other`; whether anything was new.
  bool join(const Variation &other);
  /// Drops the axes of `mesh` in `along` (a collective over them makes its
  /// group agree).
  void drop(MeshAttr mesh, ArrayRef<int64_t> along);
  /// Whether processes of one group over `along` of `mesh` may see
  /// different values: an axis of that mesh in `along`, or any axis of
  /// another mesh (whose processes dist cannot relate). The first such axis
  /// and its source, if any.
  std::optional<std::pair<MeshAxis, Operation *>>
  divides(MeshAttr mesh, ArrayRef<int64_t> along) const;
  /// The first axis of `mesh` not in `allowed`, with its source.
  std::optional<std::pair<MeshAxis, Operation *>>
  outside(MeshAttr mesh, ArrayRef<int64_t> allowed) const;
  ArrayRef<std::pair<MeshAxis, Operation *>> entries() const & { return axes; }
  // The entries of a temporary would dangle.
  void entries() const && = delete;

  /// The axes of `mesh` that `type`'s encoding splits a dim over or is
  /// partial over (those of size > 1), from `source`.
  static Variation declared(Type type, Operation *source);

private:
  SmallVector<std::pair<MeshAxis, Operation *>, 2> axes;
};

/// The variation of every value of a module, and of the control of every
/// region op and branch, to a fixpoint over loops, branches and calls.
///
/// An encoded tensor varies as its encoding declares: what flows into it is
/// kept only where the check compares the two (results of ops without a
/// rule, block arguments), and what it was cast from is forgotten (its
/// encoding is its distribution again). Only unannotated values that vary
/// are stored, so a program of encoded ops costs no map entry per value.
class VaryingAnalysis {
public:
  explicit VaryingAnalysis(Operation *root);

  /// Along which axes `value` may differ between processes. For a tensor
  /// with an encoding: what the encoding declares (flowOf says what its
  /// operands make it).
  Variation of(Value value) const;
  /// What an encoded value's operands (and control) make it vary along,
  /// whatever it declares, where flowIsTracked(value); empty otherwise.
  const Variation &flowOf(Value value) const;
  /// Whether flowOf is kept for `value`: an encoded value that no rule
  /// computes (the result of an op without a rule, outside the dist
  /// dialect; a block argument other than a function's).
  static bool flowIsTracked(Value value);
  /// For an op with regions or a branch: the variation of what decides
  /// whether, which and how often its regions or successors run (an
  /// scf.if's condition, a loop's bounds, scf.while's condition, a cond_br's
  /// flag), not of the values it forwards.
  const Variation &controlOf(Operation *op) const;
  /// The encodings cast away (tensor.cast to an unannotated tensor) on the
  /// way to the unannotated `value`, each with its cast.
  ArrayRef<std::pair<TensorDistAttr, Operation *>>
  castAwayOf(Value value) const;

private:
  friend struct VaryingSolver;
  llvm::DenseMap<Value, Variation> plain, flows;
  llvm::DenseMap<Operation *, Variation> controls;
  llvm::DenseMap<Value, SmallVector<std::pair<TensorDistAttr, Operation *>, 1>>
      castAway;
};

} // namespace dist
} // namespace mlir

namespace llvm {
template <> struct DenseMapInfo<mlir::dist::MeshAxis> {
  using Base = DenseMapInfo<std::pair<mlir::Attribute, int64_t>>;
  static mlir::dist::MeshAxis getEmptyKey() {
    return {mlir::dist::MeshAttr(), Base::getEmptyKey().second};
  }
  static mlir::dist::MeshAxis getTombstoneKey() {
    return {mlir::dist::MeshAttr(), Base::getTombstoneKey().second};
  }
  static unsigned getHashValue(const mlir::dist::MeshAxis &a) {
    return Base::getHashValue({a.mesh, a.axis});
  }
  static bool isEqual(const mlir::dist::MeshAxis &a,
                      const mlir::dist::MeshAxis &b) {
    return a == b;
  }
};
} // namespace llvm

#endif // DIST_ANALYSIS_VARYING_H
