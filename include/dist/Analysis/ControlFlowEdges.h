//===- ControlFlowEdges.h - where control flow carries values ---*- C++ -*-===//
//
// Completion, the varying analysis and the distribution check each follow
// values across control flow: from a branch to its successors' arguments,
// into and out of the regions of an scf op, from a call into its callee.
// This is the one walk of those edges over MLIR's control-flow and call
// interfaces, so that the three agree on what an edge is; and the one place
// that says which branches decide whether a block runs (control
// dependence), which the varying analysis and the check both need.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_ANALYSIS_CONTROLFLOWEDGES_H
#define DIST_ANALYSIS_CONTROLFLOWEDGES_H

#include "mlir/IR/Dominance.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir {
namespace dist {

/// An operand that control flow carries into another value: the block
/// argument, region argument or result a branch, a region-branch op or its
/// terminator forwards it to, or the entry argument of the callee a call
/// passes it to.
struct ForwardingEdge {
  OpOperand *use;
  Value sink;
};

/// The function `call` calls when it has a body; null for an external or
/// unresolved callee.
FunctionOpInterface getCalleeWithBody(CallOpInterface call,
                                      SymbolTableCollection &symbols);

/// Appends every edge out of `op`, in this order: into the regions (or
/// results) a RegionBranchOpInterface op enters, from a region's
/// terminator (RegionBranchTerminatorOpInterface) to the next region or
/// the parent's results, from a BranchOpInterface op to the arguments of
/// each successor it forwards to (those the op produces are not edges),
/// and from a call's arguments to its callee's entry arguments.
void getForwardingEdges(Operation *op, SymbolTableCollection &symbols,
                        SmallVectorImpl<ForwardingEdge> &edges);

/// Control dependence within the regions of CFG ops (func bodies, with cf
/// branches), from post-dominance, which is built once per function on
/// first use.
class ControlDependence {
public:
  /// Where every path from `block`'s successors meets again: its immediate
  /// post-dominator. Null in a region of one block, and where a path
  /// leaves the function before the paths meet.
  Block *getMeetingPoint(Block *block);

  /// The branches (terminators with several successors) in `block`'s
  /// region that decide whether `block` runs: `block` post-dominates one
  /// of a branch's successors (or is one) but not the branch's own block.
  /// In the region's block order; none outside a function.
  SmallVector<Operation *> getControllingBranches(Block *block);

private:
  /// The post-dominance of the regions of `region`'s parent op.
  PostDominanceInfo &postDominance(Region *region);

  DenseMap<Operation *, std::unique_ptr<PostDominanceInfo>> infos;
};

} // namespace dist
} // namespace mlir

#endif // DIST_ANALYSIS_CONTROLFLOWEDGES_H
