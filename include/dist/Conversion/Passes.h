//===- Passes.h - dist conversion passes ------------------------*- C++ -*-===//

#ifndef DIST_CONVERSION_PASSES_H
#define DIST_CONVERSION_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace dist {

#define GEN_PASS_DECL
#include "dist/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dist/Conversion/Passes.h.inc"

} // namespace dist
} // namespace mlir

#endif // DIST_CONVERSION_PASSES_H
