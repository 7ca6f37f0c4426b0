//===- DistToMPI.h - lower dist communication to MPI ------------*- C++ -*-===//

#ifndef DIST_CONVERSION_DISTTOMPI_H
#define DIST_CONVERSION_DISTTOMPI_H

#include "dist/Dialect/Dist/IR/DistAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace mlir {
namespace dist {

/// What the MPI patterns share while one conversion runs: per function, the
/// process's coordinates and its communicators, built once at the start of
/// the function; per module, the communicator group ids and the runtime
/// declarations. One state serves one conversion of one module.
class DistToMPIState {
public:
  /// With `traceCollectives`, every collective that communicates first
  /// calls the runtime's tracing entry point; with `traceEvents` as well,
  /// it calls the runtime again when it has been issued, so that the runtime
  /// can time it (dist-run --trace).
  explicit DistToMPIState(ModuleOp module, bool traceCollectives = false,
                          bool traceEvents = false)
      : module(module), traceCollectives(traceCollectives || traceEvents),
        traceEvents(traceEvents) {}

  bool tracesCollectives() const { return traceCollectives; }
  bool tracesEvents() const { return traceEvents; }

  /// This process's coordinates in `mesh` (one index per axis), computed at
  /// the start of the function that contains `user`.
  SmallVector<Value> getCoords(OpBuilder &b, Operation *user, MeshAttr mesh);

  /// The communicator (an `!mpi.comm` from the runtime) of this process's
  /// group along `axes` of `mesh`, created at the start of the function that
  /// contains `user`.
  Value getComm(OpBuilder &b, Operation *user, MeshAttr mesh,
                ArrayRef<int64_t> axes);

  /// Creates, at the start of `entry`, the communicator of every group the
  /// lowered module uses, in the order of their ids. Splitting
  /// MPI_COMM_WORLD is collective over every process: done lazily in a
  /// function that only some processes call (under a condition the
  /// distribution check accepts, one that differs only off the group's
  /// axes) it would deadlock. With all of them made here, first, by every
  /// process, the other functions' requests find them made.
  LogicalResult createAllComms(OpBuilder &b, func::FuncOp entry);

  /// The declaration of runtime function `name`, added on first use; null,
  /// with an error on `user`, when the module defines `name` otherwise.
  func::FuncOp getRuntimeFunction(OpBuilder &b, Operation *user, StringRef name,
                                  FunctionType type, bool cInterface);

  /// Whether the lowered module calls the runtime library.
  bool usesRuntime() const { return !runtimeFunctions.empty(); }

private:
  /// Sets `b` to the place where per-function values of `func` go: after
  /// the ones already there, at the start of its entry block.
  void setFunctionEntryInsertionPoint(OpBuilder &b, Operation *func);
  void recordFunctionEntryValue(Operation *func, Value value);
  /// The runtime call that returns group `groupId`'s communicator (along
  /// `axes` of `mesh`) for the process at `coords`, at `b`'s point.
  Value buildCommGet(OpBuilder &b, Operation *user, Location loc, MeshAttr mesh,
                     ArrayRef<int64_t> axes, ArrayRef<OpFoldResult> coords,
                     int64_t groupId);

  ModuleOp module;
  bool traceCollectives;
  bool traceEvents;
  llvm::DenseMap<Operation *, Operation *> lastEntryOp;
  llvm::DenseMap<std::pair<Operation *, Attribute>, SmallVector<Value>> coords;
  llvm::DenseMap<std::tuple<Operation *, Attribute, Attribute>, Value> comms;
  llvm::DenseMap<std::pair<Attribute, Attribute>, int64_t> groupIds;
  llvm::StringMap<func::FuncOp> runtimeFunctions;
};

/// Patterns lowering dist.process_coord, the collectives and dist.wait:
/// coordinates from the MPI rank through the mesh-indexing builders,
/// synchronous collectives to `mpi.allreduce` on runtime communicators,
/// asynchronous ones to the runtime's non-blocking allreduce and wait.
void populateDistToMPIConversionPatterns(const TypeConverter &converter,
                                         RewritePatternSet &patterns,
                                         DistToMPIState &state);

/// Marks the ops those patterns lower illegal.
void addDistToMPIIllegalOps(ConversionTarget &target);

/// Brackets `entry` with `mpi.init` (first) and `mpi.finalize` (before each
/// return); with `withRuntime`, the runtime's finalisation comes right
/// before each `mpi.finalize`. With `worldSize` > 0, the runtime checks
/// right after `mpi.init` that the program runs on that many processes. Run
/// after the conversion; does nothing when `entry` already calls `mpi.init`.
/// Fails (with an error) when the module uses the runtime's check name for
/// something else.
LogicalResult addMPIInitAndFinalize(func::FuncOp entry, bool withRuntime,
                                    int64_t worldSize = 0);

/// This process's rank in MPI_COMM_WORLD, as an index.
Value buildWorldRank(OpBuilder &b, Location loc);

} // namespace dist
} // namespace mlir

#endif // DIST_CONVERSION_DISTTOMPI_H
