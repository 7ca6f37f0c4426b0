//===- CompletedModulePass.h - passes on decided encodings -----*- C++ -*-===//
//
// A tensor's encoding is a claim about its distribution only once
// --dist-complete has decided it: before, an unannotated tensor is
// "undecided", not replicated. A pass that reads encodings (rewrites,
// estimates, lowerings) derives from this base, which refuses a module with
// undecided functions (rules::requireCompleted's located error) before the
// pass sees it:
//
//   struct MyPass : CompletedModulePass<impl::MyPassBase<MyPass>> {
//     using CompletedModulePass::CompletedModulePass;
//     void runOnCompletedModule() override { ... }
//   };
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_COMPLETEDMODULEPASS_H
#define DIST_DIALECT_DIST_TRANSFORMS_COMPLETEDMODULEPASS_H

#include "dist/Dialect/Dist/IR/DistRules.h"

namespace mlir {
namespace dist {

template <typename GeneratedBase>
struct CompletedModulePass : public GeneratedBase {
  using GeneratedBase::GeneratedBase;

  void runOnOperation() final {
    if (failed(rules::requireCompleted(this->getOperation())))
      return this->signalPassFailure();
    runOnCompletedModule();
  }

  /// The pass's work on a module whose encodings are all decided.
  virtual void runOnCompletedModule() = 0;
};

} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_TRANSFORMS_COMPLETEDMODULEPASS_H
