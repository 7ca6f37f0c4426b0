//===- TestDistLowering.cpp - both lowerings as one conversion ------------===//
//
// Drives the exported pattern sets of lib/Conversion with upstream's
// applyPartialConversion in one conversion, as a compiler that embeds dist
// next to its own lowerings would.
//
//===----------------------------------------------------------------------===//

#include "dist/Conversion/DistToLinalg.h"
#include "dist/Conversion/DistToMPI.h"
#include "dist/Conversion/TypeConversion.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {
struct TestDistLowerAsOne
    : public PassWrapper<TestDistLowerAsOne, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestDistLowerAsOne)

  StringRef getArgument() const final { return "test-dist-lower-as-one"; }
  StringRef getDescription() const final {
    return "Lower every dist op with the linalg and MPI pattern sets in one "
           "applyPartialConversion";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<affine::AffineDialect, arith::ArithDialect,
                    bufferization::BufferizationDialect, func::FuncDialect,
                    linalg::LinalgDialect, memref::MemRefDialect,
                    mpi::MPIDialect, scf::SCFDialect, tensor::TensorDialect>();
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    dist::DistTypeConverter converter;
    ConversionTarget target(*ctx);
    dist::configureDistConversionTarget(target, converter);
    target.addIllegalDialect<dist::DistDialect>();
    RewritePatternSet patterns(ctx);
    dist::DistToMPIState state(module);
    dist::populateDistEncodingDropPatterns(converter, patterns);
    dist::populateDistToLinalgConversionPatterns(converter, patterns);
    dist::populateDistToMPIConversionPatterns(converter, patterns, state);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    if (auto main = module.lookupSymbol<func::FuncOp>("main");
        main && failed(dist::addMPIInitAndFinalize(main, state.usesRuntime())))
      return signalPassFailure();
  }
};
} // namespace

namespace mlir::dist::test {
void registerTestDistLowering() { PassRegistration<TestDistLowerAsOne>(); }
} // namespace mlir::dist::test
