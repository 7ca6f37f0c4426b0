//===- dist-opt.cpp - the dist optimizer driver ---------------------------===//
//
// mlir-opt for dist programs: the dist dialect and passes, plus the upstream
// dialects a dist program is written in or lowered to.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::dist::test {
void registerTestDistPatterns();
} // namespace mlir::dist::test

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::dist::DistDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                  mlir::mpi::MPIDialect, mlir::scf::SCFDialect,
                  mlir::tensor::TensorDialect>();
  mlir::dist::registerDistPasses();
  mlir::dist::registerDistPipelines();
  mlir::dist::test::registerTestDistPatterns();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dist optimizer driver\n", registry));
}
