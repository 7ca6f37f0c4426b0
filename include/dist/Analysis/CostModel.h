//===- CostModel.h - compute and communication time estimates ---*- C++ -*-===//
//
// The one cost model of the project: compute time is flops / peak flops, a
// collective costs latency + ring factor * bytes / bandwidth, from three
// constants or from what `dist-run --calibrate` measured on a machine.
// Passes that decide or report overlap (matmul-grad splitting, the overlap
// report) all estimate through it, with its constants or file as options.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_ANALYSIS_COSTMODEL_H
#define DIST_ANALYSIS_COSTMODEL_H

#include "dist/Dialect/Dist/IR/RedistributionKind.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include <memory>
#include <optional>

namespace mlir {
class Operation;
namespace dist {
struct CostModelOptions;

/// What `dist-run --calibrate` measured on one machine, read from its
/// cost-model file (JSON; docs/running.md describes it). A collective's time
/// is `latency + bytes / bandwidth` for the measured group size nearest to
/// the op's, with the bandwidth in bytes of the tensor per second (the ring
/// factor is in the measurement); a matmul's is its flops over the measured
/// throughput of its lowered form.
struct MeasuredCosts {
  struct Link {
    int64_t groupSize;
    double latencyUs, bandwidthGBps;
  };
  /// TFLOP/s of the lowered dist.matmul, dist.matmul with transpose_x, with
  /// transpose_y (either with both) and dist.matmul_grad: their loop nests
  /// read memory differently.
  double matmulTflops = 0, matmulTransposeXTflops = 0,
         matmulTransposeYTflops = 0, matmulGradTflops = 0;
  /// GB/s of an elementwise op's reads and writes together (`memory-gbps`);
  /// zero in a file from before it was measured, where memory-bound ops
  /// cost nothing.
  double memoryGBps = 0;
  /// Sorted by group size, at least one each.
  SmallVector<Link> allreduce, broadcast;
  /// Sorted by group size; empty in a file from before these were measured,
  /// when their times are scaled from the allreduce's.
  SmallVector<Link> allGather, reduceScatter, allToAll;

  /// Parses a cost-model file's text; a diagnostic at `fileLoc` says what is
  /// wrong (a missing or unknown key, a number that is not positive).
  static FailureOr<MeasuredCosts> parse(StringRef text, Location fileLoc);
  /// Reads and parses the file at `path`.
  static FailureOr<MeasuredCosts> read(StringRef path, MLIRContext *context);
  /// Reads the file for a pass that also offers the constants: setting one
  /// of them as well is an error (the file replaces them). Diagnostics point
  /// at the file.
  static FailureOr<std::shared_ptr<const MeasuredCosts>>
  readForPass(StringRef path, const CostModelOptions &constants,
              MLIRContext *context);
};

struct CostModelOptions {
  /// Peak compute throughput of one process, in TFLOP/s.
  double peakTflops = 100.0;
  /// Fixed cost of one collective, in microseconds.
  double linkLatencyUs = 10.0;
  /// Link bandwidth per process, in GB/s (1e9 bytes per second).
  double linkBandwidthGBps = 100.0;
  /// Memory bandwidth of one process, in GB/s, at which the ops that are
  /// not products (elementwise ops, reductions, copies, optimizer updates)
  /// read their operands and write their results. Zero, the default: those
  /// ops cost nothing, and only products count as compute.
  double memoryBandwidthGBps = 0.0;
  /// Measured costs, which replace the constants when set.
  std::shared_ptr<const MeasuredCosts> measured;

  /// The options of a pass that offers the constants (`constants`, whose
  /// `measured` is unset) and `cost-model=FILE`: the file's costs
  /// (MeasuredCosts::readForPass) or the constants, checked, with errors at
  /// `anchor`.
  static FailureOr<CostModelOptions>
  fromPassOptions(const CostModelOptions &constants, StringRef costModelFile,
                  Operation *anchor);

  /// Checks that the constants describe a machine (peak and link bandwidth
  /// positive, latency and memory bandwidth not negative, all finite):
  /// estimates from anything else are infinite or NaN. Reports the first
  /// bad option through `emitError`.
  LogicalResult verify(function_ref<InFlightDiagnostic()> emitError) const;
};

/// The cost model of a pass that has the cost-model options
/// (`CostModelOptions` in Passes.td) and runs per function: the file is read
/// once, in the pass's initialize(), and the constants are checked on each
/// run, with errors at the location of the op the pass runs on.
class PassCostModel {
public:
  /// Reads `costModelFile` when it is set (MeasuredCosts::readForPass).
  LogicalResult initialize(StringRef costModelFile,
                           const CostModelOptions &constants,
                           MLIRContext *context);
  /// The file's costs, or the constants once they are checked.
  FailureOr<CostModelOptions> getOptions(const CostModelOptions &constants,
                                         Operation *anchor) const;

private:
  std::shared_ptr<const MeasuredCosts> measured;
};

class CostModel {
public:
  explicit CostModel(CostModelOptions options = {}) : options(options) {}

  /// Bytes of a statically shaped tensor; nothing for dynamic shapes,
  /// element types without a bit width and sizes beyond 64 bits.
  static std::optional<int64_t> tensorBytes(RankedTensorType type);
  /// Bytes of a tensor of static `shape` with `elementBytes` per element,
  /// or nothing when they do not fit in 64 bits.
  static std::optional<int64_t> checkedBytes(ArrayRef<int64_t> shape,
                                             int64_t elementBytes);

  /// Flops of `result = op(x) * op(y)` (dist.matmul's semantics): 2 per
  /// multiply-add. Nothing when a shape is dynamic.
  static std::optional<double>
  matmulFlops(RankedTensorType x, RankedTensorType result, bool transposeX);

  /// Seconds of a dist.matmul of `flops` with these transpositions.
  double matmulTime(double flops, bool transposeX, bool transposeY) const;

  /// Seconds for collective `kind` in groups of `groupSize` processes on a
  /// tensor of `bytes` per process: the operand of an allreduce, broadcast
  /// or reduce-scatter, the gathered result of an all-gather, the shard of
  /// an all-to-all. With the constants, each moves its `ringFactor` of
  /// those bytes through a process's link; measured links include their
  /// factor. A kind the file did not measure is scaled from the allreduce's
  /// link by the ratio of the factors. Zero for a group of one and for the
  /// local kinds.
  double collectiveTime(RedistributionKind kind, int64_t bytes,
                        int64_t groupSize) const;
  /// Seconds for a dist collective op (allreduce, broadcast, c_identity,
  /// all_gather, reduce_scatter, all_to_all), or nothing for other ops and
  /// dynamic shapes.
  std::optional<double> collectiveTime(Operation *op) const;

  /// The memory bandwidth in GB/s (the file's or the constant), zero where
  /// memory-bound ops are not priced.
  double memoryBandwidthGBps() const;
  /// Seconds for an op that is bound by memory to read and write `bytes`:
  /// zero where the memory bandwidth is not known.
  double memoryTime(double bytes) const;
  /// The bytes a memory-bound op reads and writes, for the ops the model
  /// prices so (linalg ops, dropout, scale, the optimizer updates, embedding
  /// lookups, packing), or nothing.
  static std::optional<double>
  memoryTraffic(Operation *op, TypeRange operandTypes, TypeRange resultTypes);

  /// Seconds of a compute op the model knows: dist.matmul and
  /// dist.matmul_grad by their flops, the memory-bound ops by their
  /// traffic (memoryTraffic) where the memory bandwidth is known; nothing
  /// for other ops.
  std::optional<double> computeTime(Operation *op) const;
  /// The same if `op`'s operands and results had the types `operandTypes`
  /// and `resultTypes` (one per operand and result): what a choice of
  /// distributions would cost, asked before it is made.
  std::optional<double> computeTime(Operation *op, TypeRange operandTypes,
                                    TypeRange resultTypes) const;

private:
  CostModelOptions options;
};

} // namespace dist
} // namespace mlir

#endif // DIST_ANALYSIS_COSTMODEL_H
