//===- Utils.cpp - helpers shared by the dist passes ----------------------===//

#include "dist/Dialect/Dist/Transforms/Passes.h"

using namespace mlir;

Location mlir::dist::rewriteLoc(Location loc, StringRef pass) {
  MLIRContext *ctx = loc.getContext();
  return FusedLoc::get(ctx, {loc}, StringAttr::get(ctx, pass));
}
