//===- CompletedPass.h - passes on decided encodings ------------*- C++ -*-===//
//
// A tensor's encoding is a claim about its distribution only once
// --dist-complete has decided it: before, an unannotated tensor is
// "undecided", not replicated. A pass that reads encodings (rewrites,
// estimates, lowerings) derives from this base, which refuses an op (a
// module or a function) with undecided functions (rules::requireCompleted's
// located error) before the pass sees it:
//
//   struct MyPass : CompletedPass<impl::MyPassBase<MyPass>> {
//     using CompletedPass::CompletedPass;
//     void runOnCompleted(ModuleOp module) override { ... }
//   };
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_COMPLETEDPASS_H
#define DIST_DIALECT_DIST_TRANSFORMS_COMPLETEDPASS_H

#include "dist/Dialect/Dist/Rules/DistRules.h"

#include "mlir/Pass/Pass.h"

#include <utility>

namespace mlir {
namespace dist {
namespace detail {
/// The op type a pass runs on; declared only, for decltype.
template <typename OpT> OpT anchorOf(const OperationPass<OpT> *);
} // namespace detail

template <typename GeneratedBase> struct CompletedPass : public GeneratedBase {
  using GeneratedBase::GeneratedBase;
  /// What the pass runs on: ModuleOp or func::FuncOp.
  using Anchor =
      decltype(detail::anchorOf(std::declval<const GeneratedBase *>()));

  void runOnOperation() final {
    if (failed(rules::requireCompleted(this->getOperation())))
      return this->signalPassFailure();
    runOnCompleted(this->getOperation());
  }

  /// The pass's work on `op`, whose encodings are all decided.
  virtual void runOnCompleted(Anchor op) = 0;
};

} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_TRANSFORMS_COMPLETEDPASS_H
