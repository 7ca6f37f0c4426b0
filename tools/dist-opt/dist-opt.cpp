//===- dist-opt.cpp - the dist optimizer driver ---------------------------===//
//
// mlir-opt for dist programs: the dist dialect, its passes and lowerings,
// plus upstream MLIR.
//
//===----------------------------------------------------------------------===//

#include "dist/Conversion/Passes.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace mlir::dist::test {
void registerTestDistPatterns();
} // namespace mlir::dist::test

int main(int argc, char **argv) {
  // Every upstream dialect, extension and pass, so that the whole way from
  // dist to the LLVM dialect (--dist-to-llvm) runs in one tool. With
  // libMLIR.so this costs no link time.
  mlir::DialectRegistry registry;
  registry.insert<mlir::dist::DistDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllPasses();
  mlir::dist::registerDistPasses();
  mlir::dist::registerDistPipelines();
  mlir::dist::registerDistConversionPasses();
  mlir::dist::registerDistConversionPipelines();
  mlir::dist::test::registerTestDistPatterns();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dist optimizer driver\n", registry));
}
