//===- dist-reduce.cpp - test-case reducer for dist programs --------------===//
//
// Upstream's mlir-reduce with everything dist-opt registers, so that a dist
// program that makes a pass misbehave can be cut down to what matters:
//   dist-reduce prog.mlir --test=interesting.sh -reduction-tree=...
//
//===----------------------------------------------------------------------===//

#include "dist/InitAllDist.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-reduce/MlirReduceMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::dist::registerAllDistDialects(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // Reduction passes named in -reduction-tree may be any pass dist-opt has.
  mlir::registerAllPasses();
  mlir::dist::registerAllDistPasses();
  mlir::MLIRContext context(registry);
  return mlir::failed(mlir::mlirReduceMain(argc, argv, context));
}
