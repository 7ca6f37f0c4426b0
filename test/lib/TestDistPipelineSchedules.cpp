//===- TestDistPipelineSchedules.cpp - every schedule against its closed form
//===//
//
// For p in {2, 3, 4} stages, m in {p .. 4p} microbatches and v in {1, 2}
// chunks, builds each schedule with the generator --dist-pipeline uses and
// reports, as a remark on the module, its exact bubble at unit costs (idle
// over compute time) next to the closed form from the literature: (p-1)/m
// for GPipe and 1F1B (F = 1, B = 2), (p-1)/(v m) interleaved, (p-1)/(3m)
// for ZB-H1 (F = B = W = 1). The bubbles are printed as fractions with
// denominator 12 v m, which the closed forms make exact.
//
//===----------------------------------------------------------------------===//

#include "dist/Analysis/PipelineSchedule.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dist;

namespace {
struct TestDistPipelineSchedules
    : public PassWrapper<TestDistPipelineSchedules, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestDistPipelineSchedules)

  StringRef getArgument() const final { return "test-dist-pipeline-schedules"; }
  StringRef getDescription() const final {
    return "Report every schedule's bubble at unit costs next to its closed "
           "form";
  }

  void runOnOperation() override {
    int64_t checked = 0, differ = 0;
    for (int64_t p = 2; p <= 4; ++p)
      for (int64_t m = p; m <= 4 * p; ++m)
        for (auto [kind, v] :
             {std::pair{PipelineScheduleKind::GPipe, 1},
              std::pair{PipelineScheduleKind::OneFOneB, 1},
              std::pair{PipelineScheduleKind::Interleaved, 1},
              std::pair{PipelineScheduleKind::Interleaved, 2},
              std::pair{PipelineScheduleKind::ZeroBubbleH1, 1}}) {
          PipelineCosts costs;
          costs.forward = costs.backward = costs.weight = 1;
          std::string error;
          std::optional<PipelineSchedule> s =
              buildPipelineSchedule(kind, p, m, v, costs, error);
          if (!s) {
            getOperation().emitError(error);
            return signalPassFailure();
          }
          int64_t denominator = 12 * v * m;
          double closed = kind == PipelineScheduleKind::ZeroBubbleH1
                              ? double(p - 1) / (3 * m)
                              : double(p - 1) / (v * m);
          long measured = std::lround(s->bubbleOverCompute() * denominator);
          long expected = std::lround(closed * denominator);
          bool equal = std::abs(s->bubbleOverCompute() - closed) < 1e-9;
          ++checked;
          differ += !equal;
          getOperation().emitRemark()
              << stringifyPipelineScheduleKind(kind) << " p=" << p << " m=" << m
              << " v=" << v << ": bubble " << measured << "/" << denominator
              << (equal ? " equals " : " differs from ") << "the closed form "
              << expected << "/" << denominator;
        }
    getOperation().emitRemark() << checked << " schedules, " << differ
                                << " with a bubble other than the closed form";
  }
};
} // namespace

namespace mlir::dist::test {
void registerTestDistPipelineSchedules() {
  PassRegistration<TestDistPipelineSchedules>();
}
} // namespace mlir::dist::test
