//===- RuntimeCalls.h - calls into libdist_runtime --------------*- C++ -*-===//
//
// The lowerings call the runtime (include/dist/Runtime/DistRuntime.h) for
// what upstream dialects cannot express: communicators, non-blocking
// collectives, run-time errors with a message, run-time seeds and collective
// tracing. These helpers declare those functions and build the constant
// strings the runtime prints, so that both conversions do it one way.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_CONVERSION_RUNTIMECALLS_H
#define DIST_CONVERSION_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace mlir {
namespace dist {

/// The declaration of runtime function `name` in the module that holds
/// `anchor`, added (private; with `llvm.emit_c_interface` when `cInterface`)
/// if the module has none. Emits an error on `anchor` and returns null when
/// the module already defines `name` as something else.
func::FuncOp getOrDeclareRuntimeFunction(OpBuilder &b, Operation *anchor,
                                         StringRef name, FunctionType type,
                                         bool cInterface);

/// A `memref<?xi8>` holding `text` (no terminating NUL), built at `b`'s
/// insertion point from a private constant global of the module that holds
/// `anchor`; equal texts share one global.
Value buildRuntimeString(OpBuilder &b, Location loc, Operation *anchor,
                         StringRef text);

/// How the runtime names `op` in a message: "file:line:col: op-name", the
/// file without its directories (the location of a fused or unknown location
/// is left out).
std::string describeForRuntime(Operation *op);

/// A stable 64-bit identifier of `op` for the runtime, from its description:
/// the same on every process and every run of the same program.
int64_t getRuntimeSiteId(Operation *op);

} // namespace dist
} // namespace mlir

#endif // DIST_CONVERSION_RUNTIMECALLS_H
