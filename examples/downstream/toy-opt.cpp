//===- toy-opt.cpp - a downstream compiler that embeds dist ---------------===//
//
// Registers the dist dialect and its passes next to the upstream dialects
// it needs, and adds two passes of its own: --toy-overlap drives dist's
// matmul-grad overlap patterns with MLIR's greedy driver, as a compiler
// that mixes them with its own patterns would, and --toy-replicate-results
// makes every function return replicated values through dist's reshard
// planner (Redistribution.h).
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/Transforms/Redistribution.h"
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

struct ToyReplicateResultsPass
    : public mlir::PassWrapper<ToyReplicateResultsPass,
                               mlir::OperationPass<mlir::func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ToyReplicateResultsPass)

  llvm::StringRef getArgument() const final { return "toy-replicate-results"; }
  llvm::StringRef getDescription() const final {
    return "Return every distributed result replicated, through dist's "
           "reshard planner";
  }
  void runOnOperation() override {
    mlir::func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    mlir::dist::CostModel model;
    llvm::SmallVector<mlir::Type> results;
    func.walk([&](mlir::func::ReturnOp ret) {
      mlir::OpBuilder b(ret);
      for (mlir::OpOperand &operand : ret->getOpOperands()) {
        auto type =
            llvm::dyn_cast<mlir::RankedTensorType>(operand.get().getType());
        mlir::dist::TensorDistAttr dist =
            type ? mlir::dist::getTensorDist(type) : nullptr;
        if (!dist)
          continue;
        auto replicated = mlir::dist::TensorDistAttr::get(
            dist.getMesh(), llvm::SmallVector<int64_t>(type.getRank(), -1));
        std::string whyNot;
        mlir::FailureOr<mlir::Value> value = mlir::dist::buildReshard(
            b, ret.getLoc(), operand.get(), replicated, model, whyNot);
        if (mlir::failed(value)) {
          ret.emitError("cannot replicate result ")
              << operand.getOperandNumber() << ": " << whyNot;
          return signalPassFailure();
        }
        operand.set(*value);
      }
      results.assign(ret->getOperandTypes().begin(),
                     ret->getOperandTypes().end());
    });
    func.setType(mlir::FunctionType::get(&getContext(), func.getArgumentTypes(),
                                         results));
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
  mlir::PassRegistration<ToyReplicateResultsPass>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "toy compiler with dist\n", registry));
}
