//===- dist-lsp-server.cpp - MLIR language server that knows dist --------===//
//
// Upstream's mlir-lsp-server with everything dist-opt registers: an editor
// pointed at it (VS Code's MLIR extension: mlir.server_path) shows dist's
// verifier errors as diagnostics and its ops on hover.
//
//===----------------------------------------------------------------------===//

#include "dist/InitAllDist.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::dist::registerAllDistDialects(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  return mlir::failed(mlir::MlirLspServerMain(argc, argv, registry));
}
