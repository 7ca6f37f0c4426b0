//===- TestDistPatterns.cpp - drive dist patterns as another compiler would
//===//
//
// Applies the exported pattern sets with MLIR's greedy driver, so that the
// populate...Patterns entry points are tested apart from the dist passes
// (which drive the same rewrites themselves).
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {
struct TestMatmulGradOverlapPatterns
    : public PassWrapper<TestMatmulGradOverlapPatterns, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestMatmulGradOverlapPatterns)

  StringRef getArgument() const final {
    return "test-dist-matmul-grad-overlap-patterns";
  }
  StringRef getDescription() const final {
    return "Apply populateMatmulGradOverlapPatterns with the greedy driver";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<tensor::TensorDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    dist::populateMatmulGradOverlapPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

namespace mlir::dist::test {
void registerTestDistPatterns() {
  PassRegistration<TestMatmulGradOverlapPatterns>();
}
} // namespace mlir::dist::test
