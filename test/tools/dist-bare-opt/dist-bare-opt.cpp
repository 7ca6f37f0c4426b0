//===- dist-bare-opt.cpp - a tool that registers only DistDialect ---------===//
//
// What a downstream tool that writes `registry.insert<dist::DistDialect>()`
// instead of calling registerAllDistDialects gets: the distribution rules
// of upstream ops are missing, and the check must say which call to make
// (test/Tools/registration.mlir), never that an op "has no distribution
// rule".
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::dist::DistDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::tensor::TensorDialect>();
  mlir::dist::registerDistPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "dist with the dialect class registered alone\n", registry));
}
