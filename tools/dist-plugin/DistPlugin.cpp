//===- DistPlugin.cpp - dist as a plugin of upstream mlir-opt -------------===//
//
// One library for both of mlir-opt's plugin options:
//   mlir-opt --load-dialect-plugin=DistPlugin.so \
//            --load-pass-plugin=DistPlugin.so \
//            --pass-pipeline='builtin.module(dist-auto-parallel)' prog.mlir
// Plugin passes are not top-level flags of mlir-opt; name them in
// --pass-pipeline.
//
//===----------------------------------------------------------------------===//

#include "dist/InitAllDist.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

using namespace mlir;

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Dist", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            dist::registerAllDistDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Dist", LLVM_VERSION_STRING,
          []() { dist::registerAllDistPasses(); }};
}
