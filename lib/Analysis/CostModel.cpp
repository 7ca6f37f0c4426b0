//===- CostModel.cpp - compute and communication time estimates -----------===//

#include "dist/Analysis/CostModel.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dist;

LogicalResult
CostModelOptions::verify(function_ref<InFlightDiagnostic()> emitError) const {
  auto bad = [&](StringRef option, double value, StringRef expected) {
    return emitError() << "cost model option " << option << "=" << value
                       << " must be " << expected;
  };
  if (!std::isfinite(peakTflops) || peakTflops <= 0)
    return bad("peak-tflops", peakTflops, "positive and finite");
  if (!std::isfinite(linkLatencyUs) || linkLatencyUs < 0)
    return bad("link-latency-us", linkLatencyUs, "non-negative and finite");
  if (!std::isfinite(linkBandwidthGBps) || linkBandwidthGBps <= 0)
    return bad("link-bandwidth-gbps", linkBandwidthGBps, "positive and finite");
  return success();
}

std::optional<int64_t> CostModel::tensorBytes(RankedTensorType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  // i1 and other sub-byte types still take a byte each in memory.
  int64_t elementBytes =
      std::max<int64_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
  return type.getNumElements() * elementBytes;
}

std::optional<double> CostModel::matmulFlops(RankedTensorType x,
                                             RankedTensorType result,
                                             bool transposeX) {
  if (!x.hasStaticShape() || !result.hasStaticShape() || x.getRank() < 2)
    return std::nullopt;
  int64_t k = transposeX ? x.getDimSize(x.getRank() - 2)
                         : x.getDimSize(x.getRank() - 1);
  return 2.0 * static_cast<double>(result.getNumElements()) *
         static_cast<double>(k);
}

double CostModel::computeTime(double flops) const {
  return flops / (options.peakTflops * 1e12);
}

double CostModel::collectiveTime(int64_t bytes, int64_t groupSize,
                                 double ringFactor) const {
  if (groupSize <= 1)
    return 0.0;
  return options.linkLatencyUs * 1e-6 + ringFactor *
                                            static_cast<double>(bytes) /
                                            (options.linkBandwidthGBps * 1e9);
}

std::optional<double> CostModel::collectiveTime(Operation *op) const {
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  if (!collective)
    return std::nullopt;
  std::optional<int64_t> bytes = tensorBytes(collective.getInput().getType());
  if (!bytes)
    return std::nullopt;
  int64_t p = mesh::groupSize(collective.getMesh(), collective.getAxes());
  double n = static_cast<double>(p);
  // Ring allreduce: a reduce-scatter and an all-gather, each moving
  // (p-1)/p of the buffer. A pipelined broadcast moves the buffer once. A
  // c_identity communicates nothing in the forward direction.
  double factor = llvm::TypeSwitch<Operation *, double>(op)
                      .Case([&](AllReduceOp) { return 2.0 * (n - 1) / n; })
                      .Case([&](BroadcastOp) { return 1.0; })
                      .Default([](Operation *) { return 0.0; });
  if (factor == 0.0)
    return 0.0;
  return collectiveTime(*bytes, p, factor);
}

std::optional<double> CostModel::computeTime(Operation *op) const {
  std::optional<double> flops;
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    flops = matmulFlops(matmul.getX().getType(), matmul.getResult().getType(),
                        matmul.getTransposeX());
  } else if (auto grad = dyn_cast<MatmulGradOp>(op)) {
    // Two matmuls (dX and dY), each as costly as the forward one.
    flops = matmulFlops(grad.getX().getType(), grad.getOutGrad().getType(),
                        grad.getTransposeX());
    if (flops)
      *flops *= 2.0;
  }
  if (!flops)
    return std::nullopt;
  return computeTime(*flops);
}
