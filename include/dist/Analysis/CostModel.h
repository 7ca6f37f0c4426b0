//===- CostModel.h - compute and communication time estimates ---*- C++ -*-===//
//
// The one cost model of the project: compute time is flops / peak flops, a
// collective costs latency + ring factor * bytes / bandwidth. Passes that
// decide or report overlap (matmul-grad splitting, stream assignment, the
// overlap report) all estimate through it, with its constants as options.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_ANALYSIS_COSTMODEL_H
#define DIST_ANALYSIS_COSTMODEL_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include <optional>

namespace mlir {
class Operation;
namespace dist {

struct CostModelOptions {
  /// Peak compute throughput of one process, in TFLOP/s.
  double peakTflops = 100.0;
  /// Fixed cost of one collective, in microseconds.
  double linkLatencyUs = 10.0;
  /// Link bandwidth per process, in GB/s (1e9 bytes per second).
  double linkBandwidthGBps = 100.0;

  /// Checks that the constants describe a machine (peak and bandwidth
  /// positive, latency not negative, all finite): estimates from anything
  /// else are infinite or NaN. Reports the first bad option through
  /// `emitError`.
  LogicalResult verify(function_ref<InFlightDiagnostic()> emitError) const;
};

class CostModel {
public:
  explicit CostModel(CostModelOptions options = {}) : options(options) {}

  /// Bytes of a statically shaped tensor; nothing for dynamic shapes or
  /// element types without a bit width.
  static std::optional<int64_t> tensorBytes(RankedTensorType type);

  /// Flops of `result = op(x) * op(y)` (dist.matmul's semantics): 2 per
  /// multiply-add. Nothing when a shape is dynamic.
  static std::optional<double>
  matmulFlops(RankedTensorType x, RankedTensorType result, bool transposeX);

  /// Seconds to compute `flops`.
  double computeTime(double flops) const;

  /// Seconds for a collective moving `bytes` per process within groups of
  /// `groupSize` processes, with `ringFactor` as the bandwidth factor (2(p-1)/p
  /// for a ring allreduce). Zero for a group of one.
  double collectiveTime(int64_t bytes, int64_t groupSize,
                        double ringFactor) const;

  /// Seconds for a dist collective op (allreduce, broadcast, c_identity), or
  /// nothing for other ops and dynamic shapes.
  std::optional<double> collectiveTime(Operation *op) const;

  /// Seconds of a compute op the model knows (dist.matmul and
  /// dist.matmul_grad), or nothing.
  std::optional<double> computeTime(Operation *op) const;

private:
  CostModelOptions options;
};

} // namespace dist
} // namespace mlir

#endif // DIST_ANALYSIS_COSTMODEL_H
