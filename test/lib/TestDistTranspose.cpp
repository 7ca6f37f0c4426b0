//===- TestDistTranspose.cpp - drive buildTranspose as a backward pass would
//===//
//
// Replaces each `"test.transpose"(%y, %g) : (Y, G) -> X` with the transpose
// of the redistribution that produced %y (through its dist.wait when it is
// asynchronous) applied to the cotangent %g; the declared result type X must
// be the one the transpose produces.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Transforms/Redistribution.h"

#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {
struct TestDistTranspose
    : public PassWrapper<TestDistTranspose, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestDistTranspose)

  StringRef getArgument() const final { return "test-dist-transpose"; }
  StringRef getDescription() const final {
    return "Replace test.transpose ops with dist::buildTranspose";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<dist::DistDialect>();
  }
  void runOnOperation() override {
    SmallVector<Operation *> markers;
    getOperation()->walk([&](Operation *op) {
      if (op->getName().getStringRef() == "test.transpose")
        markers.push_back(op);
    });
    dist::CostModel model;
    OpBuilder b(&getContext());
    for (Operation *marker : markers) {
      if (marker->getNumOperands() != 2 || marker->getNumResults() != 1) {
        marker->emitError("expected (primal result, cotangent) -> cotangent");
        return signalPassFailure();
      }
      Operation *primal = marker->getOperand(0).getDefiningOp();
      if (auto wait = dyn_cast_or_null<dist::WaitOp>(primal))
        primal = wait.getFuture().getDefiningOp();
      if (!primal) {
        marker->emitError("the primal is a block argument");
        return signalPassFailure();
      }
      b.setInsertionPoint(marker);
      std::string whyNot;
      FailureOr<Value> transpose = dist::buildTranspose(
          b, marker->getLoc(), primal, marker->getOperand(1), model, whyNot);
      if (failed(transpose)) {
        marker->emitError("no transpose: ") << whyNot;
        return signalPassFailure();
      }
      if (transpose->getType() != marker->getResult(0).getType()) {
        marker->emitError("the transpose is ")
            << transpose->getType() << ", not the declared "
            << marker->getResult(0).getType();
        return signalPassFailure();
      }
      marker->getResult(0).replaceAllUsesWith(*transpose);
      marker->erase();
    }
  }
};
} // namespace

namespace mlir::dist::test {
void registerTestDistTranspose() { PassRegistration<TestDistTranspose>(); }
} // namespace mlir::dist::test
