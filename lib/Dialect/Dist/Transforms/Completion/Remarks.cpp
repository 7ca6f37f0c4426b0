//===- Remarks.cpp - how remarks name distributions -----------------------===//

#include "Completion.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::completion;

/// "replicated" or the encoding, as remarks name a distribution.
std::string completion::describe(TensorDistAttr dist) {
  if (!dist || dist.isReplicated())
    return "replicated";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(dist.getDimsMapping(), os);
  os << "]";
  if (dist.isPartial()) {
    os << " partial [";
    llvm::interleaveComma(dist.getPartials(), os, [&](auto p) {
      os << p.first << " : " << stringifyReductionKind(p.second);
    });
    os << "]";
  }
  return s;
}

std::string completion::describeOrigin(Value v, Operation *origin,
                                       TensorDistAttr dist) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (origin)
    os << "'" << origin->getName() << "' at " << origin->getLoc()
       << " computes ";
  else if (auto arg = dyn_cast<BlockArgument>(v))
    os << "block argument #" << arg.getArgNumber() << " is declared ";
  else
    os << "result #" << cast<OpResult>(v).getResultNumber() << " of '"
       << v.getDefiningOp()->getName() << "' is declared ";
  os << describe(dist);
  return s;
}

std::string completion::describePin(Location loc, TensorDistAttr dist) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "'dist.constraint' at " << loc << " pins " << describe(dist);
  return s;
}
