//===- DistPasses.cpp - C API of the dist passes and conversions ----------===//

#include "dist-c/Passes.h"
#include "dist/Conversion/Passes.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/CAPI/Pass.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::dist;

#ifdef __cplusplus
extern "C" {
#endif

#include "dist/Conversion/Passes.capi.cpp.inc"
#include "dist/Dialect/Dist/Transforms/Passes.capi.cpp.inc"

#ifdef __cplusplus
}
#endif
