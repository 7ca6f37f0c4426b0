//===- ControlFlowEdges.cpp - where control flow carries values -----------===//

#include "dist/Analysis/ControlFlowEdges.h"

#include "mlir/Interfaces/ControlFlowInterfaces.h"

using namespace mlir;
using namespace mlir::dist;

FunctionOpInterface
mlir::dist::getCalleeWithBody(CallOpInterface call,
                              SymbolTableCollection &symbols) {
  auto callee = dyn_cast_or_null<FunctionOpInterface>(
      call.resolveCallableInTable(&symbols));
  return callee && !callee.isExternal() ? callee : nullptr;
}

void mlir::dist::getForwardingEdges(Operation *op,
                                    SymbolTableCollection &symbols,
                                    SmallVectorImpl<ForwardingEdge> &edges) {
  auto add = [&](MutableArrayRef<OpOperand> uses, ValueRange sinks) {
    for (auto [use, sink] : llvm::zip(uses, sinks))
      edges.push_back({&use, sink});
  };
  auto usesOf = [&](OperandRange range) {
    if (range.empty())
      return MutableArrayRef<OpOperand>();
    return op->getOpOperands().slice(range.getBeginOperandIndex(),
                                     range.size());
  };
  if (auto branch = dyn_cast<RegionBranchOpInterface>(op)) {
    SmallVector<RegionSuccessor> successors;
    branch.getSuccessorRegions(RegionBranchPoint::parent(), successors);
    for (RegionSuccessor &s : successors)
      add(usesOf(branch.getEntrySuccessorOperands(s)), s.getSuccessorInputs());
  }
  if (auto term = dyn_cast<RegionBranchTerminatorOpInterface>(op)) {
    if (auto parent = dyn_cast<RegionBranchOpInterface>(op->getParentOp())) {
      SmallVector<RegionSuccessor> successors;
      parent.getSuccessorRegions(RegionBranchPoint(term), successors);
      for (RegionSuccessor &s : successors)
        add(usesOf(term.getSuccessorOperands(s)), s.getSuccessorInputs());
    }
  }
  if (auto branch = dyn_cast<BranchOpInterface>(op))
    for (unsigned i = 0; i < op->getNumSuccessors(); ++i) {
      SuccessorOperands operands = branch.getSuccessorOperands(i);
      add(usesOf(operands.getForwardedOperands()),
          op->getSuccessor(i)->getArguments().drop_front(
              operands.getProducedOperandCount()));
    }
  if (auto call = dyn_cast<CallOpInterface>(op))
    if (FunctionOpInterface callee = getCalleeWithBody(call, symbols))
      add(usesOf(call.getArgOperands()),
          callee.getFunctionBody().front().getArguments());
}

PostDominanceInfo &ControlDependence::postDominance(Region *region) {
  auto [it, inserted] = infos.try_emplace(region->getParentOp(), nullptr);
  if (inserted)
    it->second = std::make_unique<PostDominanceInfo>(region->getParentOp());
  return *it->second;
}

Block *ControlDependence::getMeetingPoint(Block *block) {
  Region *region = block->getParent();
  if (!region->getParentOp() || region->hasOneBlock())
    return nullptr;
  if (auto *node = postDominance(region).getDomTree(region).getNode(block))
    if (auto *idom = node->getIDom())
      return idom->getBlock();
  return nullptr;
}

SmallVector<Operation *>
ControlDependence::getControllingBranches(Block *block) {
  SmallVector<Operation *> branches;
  Region *region = block->getParent();
  Operation *parent = block->getParentOp();
  if (!parent || (!isa<FunctionOpInterface>(parent) &&
                  !parent->getParentOfType<FunctionOpInterface>()))
    return branches;
  PostDominanceInfo &pdom = postDominance(region);
  for (Block &x : *region) {
    Operation *term = x.empty() ? nullptr : &x.back();
    if (!term || !term->mightHaveTrait<OpTrait::IsTerminator>() ||
        term->getNumSuccessors() < 2 || pdom.properlyPostDominates(block, &x))
      continue;
    if (llvm::any_of(term->getSuccessors(), [&](Block *succ) {
          return succ == block || pdom.postDominates(block, succ);
        }))
      branches.push_back(term);
  }
  return branches;
}
