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
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <mutex>
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

/// Stable 64-bit identifiers of the random ops that draw their seed at run
/// time (dist_random_seed mixes it with the run seed): the same on every
/// process and every run of the same program, and keyed on the program's
/// structure alone, never on its file name or line numbers, so that `--seed`
/// repeats a run of a renamed or re-commented file. An op's identity is its
/// function's name, its op name and its ordinal among the ops of that name
/// in the function (in pre-order), and a dropout's `id` when it has one.
///
/// The ops of one name in one function are numbered together, the first
/// time one of them is asked for (in a conversion: before any of them is
/// rewritten), so the cost is linear in the program. Thread-safe.
class RuntimeSiteIds {
public:
  int64_t get(Operation *op);

private:
  std::mutex mutex;
  llvm::DenseMap<Operation *, int64_t> ids;
  /// Per (function, op name): the ordinal the next op of that name gets.
  llvm::DenseMap<std::pair<Operation *, OperationName>, unsigned> next;
};

} // namespace dist
} // namespace mlir

#endif // DIST_CONVERSION_RUNTIMECALLS_H
