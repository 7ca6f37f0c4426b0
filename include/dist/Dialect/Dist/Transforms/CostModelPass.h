//===- CostModelPass.h - what every estimating pass shares ------*- C++ -*-===//
//
// A pass that estimates time with the cost model declares, in Passes.td, the
// same options (CostModelOptions: peak-tflops, link-latency-us,
// link-bandwidth-gbps, memory-bandwidth-gbps, cost-model). This base reads the
// cost-model file once, at initialize, and gives each run the model its options
// say:
//
//   struct MyPass : CostModelPass<impl::MyPassBase<MyPass>> {
//     using CostModelPass::CostModelPass;
//     void runOnOperation() override {
//       FailureOr<CostModelOptions> costs = costModelOptions();
//       ...
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_COSTMODELPASS_H
#define DIST_DIALECT_DIST_TRANSFORMS_COSTMODELPASS_H

#include "dist/Analysis/CostModel.h"

namespace mlir {
namespace dist {

template <typename GeneratedBase> struct CostModelPass : public GeneratedBase {
  using GeneratedBase::GeneratedBase;

  /// The cost-model file is read once, not per run or per function.
  LogicalResult initialize(MLIRContext *context) override {
    return costs.initialize(this->costModelFile, constants(), context);
  }

  /// The file's costs, or the constants once they are checked (an error at
  /// the pass's operation otherwise).
  FailureOr<CostModelOptions> costModelOptions() {
    return costs.getOptions(constants(), this->getOperation());
  }

private:
  CostModelOptions constants() const {
    CostModelOptions options;
    options.peakTflops = this->peakTflops;
    options.linkLatencyUs = this->linkLatencyUs;
    options.linkBandwidthGBps = this->linkBandwidthGBps;
    options.memoryBandwidthGBps = this->memoryBandwidthGBps;
    return options;
  }

  PassCostModel costs;
};

} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_TRANSFORMS_COSTMODELPASS_H
