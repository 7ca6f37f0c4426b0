//===- toy-opt.cpp - a downstream compiler that embeds dist ---------------===//
//
// Registers the dist dialect and its passes next to the upstream dialects
// it needs, and adds a pass of its own, --toy-overlap, that drives dist's
// matmul-grad overlap patterns with MLIR's greedy driver, as a compiler
// that mixes them with its own patterns would.
//
//===----------------------------------------------------------------------===//

#include "dist/InitAllDist.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace {
struct ToyOverlapPass
    : public mlir::PassWrapper<ToyOverlapPass, mlir::OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ToyOverlapPass)

  llvm::StringRef getArgument() const final { return "toy-overlap"; }
  llvm::StringRef getDescription() const final {
    return "Split matmul_grads with dist's pattern set";
  }
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    mlir::dist::populateMatmulGradOverlapPatterns(patterns);
    if (mlir::failed(
            mlir::applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  // The dialect with the distribution rules of the upstream ops it meets,
  // and every dist pass and pipeline.
  mlir::dist::registerAllDistDialects(registry);
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::tensor::TensorDialect>();
  mlir::dist::registerAllDistPasses();
  mlir::PassRegistration<ToyOverlapPass>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "toy compiler with dist\n", registry));
}
