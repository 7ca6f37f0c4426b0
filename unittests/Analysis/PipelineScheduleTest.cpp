//===- PipelineScheduleTest.cpp - bubbles against their closed forms ------===//
//
// The generator's replay at unit costs, for p in {2, 3, 4} stages and m in
// {p .. 4p} microbatches, against the bubbles the schedules' papers derive
// (idle time over compute time on a stage): GPipe and 1F1B (p-1)/m
// (F = 1, B = 2), interleaved with v chunks (p-1)/(v m), ZB-H1 (p-1)/(3m)
// (F = B = W = 1). And the memory each is known for: GPipe holds all m
// microbatches on the first stage, 1F1B at most p - s on stage s.
//
//===----------------------------------------------------------------------===//

#include "dist/Analysis/PipelineSchedule.h"

#include "gtest/gtest.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::dist;

namespace {

PipelineSchedule build(PipelineScheduleKind kind, int64_t p, int64_t m,
                       int64_t v, PipelineCosts costs) {
  std::string error;
  std::optional<PipelineSchedule> schedule =
      buildPipelineSchedule(kind, p, m, v, costs, error);
  EXPECT_TRUE(schedule.has_value()) << error;
  return schedule ? *schedule : PipelineSchedule{};
}

PipelineCosts unitCosts() {
  PipelineCosts costs;
  costs.forward = 1;
  costs.backward = 1;
  costs.weight = 1;
  return costs;
}

/// Every stage runs each microbatch-chunk's F, B (and W) once, F before B
/// before W.
void expectComplete(const PipelineSchedule &s, bool weights) {
  for (const auto &stage : s.order) {
    std::map<std::tuple<int, int64_t, int64_t>, int> seen;
    for (const TimedAction &t : stage) {
      ++seen[{t.action.kind, t.action.microbatch, t.action.chunk}];
      if (t.action.kind != PipelineAction::Forward)
        EXPECT_TRUE(seen.count(
            {t.action.kind - 1, t.action.microbatch, t.action.chunk}));
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()),
              s.microbatches * s.chunks * (weights ? 3 : 2));
    for (auto &[key, count] : seen)
      EXPECT_EQ(count, 1);
  }
}

TEST(PipelineScheduleTest, OneFOneBAndGPipeBubble) {
  for (int64_t p = 2; p <= 4; ++p)
    for (int64_t m = p; m <= 4 * p; ++m)
      for (auto kind :
           {PipelineScheduleKind::GPipe, PipelineScheduleKind::OneFOneB}) {
        PipelineSchedule s = build(kind, p, m, 1, unitCosts());
        SCOPED_TRACE(stringifyPipelineScheduleKind(kind).str() +
                     " p=" + std::to_string(p) + " m=" + std::to_string(m));
        expectComplete(s, false);
        EXPECT_NEAR(s.bubbleOverCompute(), double(p - 1) / m, 1e-9);
        EXPECT_NEAR(s.bubbleOverMakespan(), double(p - 1) / (m + p - 1), 1e-9);
        if (kind == PipelineScheduleKind::GPipe) {
          EXPECT_EQ(s.peakActivations[0], m);
        } else {
          for (int64_t stage = 0; stage < p; ++stage)
            EXPECT_LE(s.peakActivations[stage], p - stage);
          EXPECT_EQ(s.peakActivations[0], p);
        }
      }
}

TEST(PipelineScheduleTest, InterleavedBubble) {
  for (int64_t p = 2; p <= 4; ++p)
    for (int64_t m = p; m <= 4 * p; ++m)
      for (int64_t v = 1; v <= 2; ++v) {
        SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m) +
                     " v=" + std::to_string(v));
        PipelineSchedule s =
            build(PipelineScheduleKind::Interleaved, p, m, v, unitCosts());
        expectComplete(s, false);
        EXPECT_NEAR(s.bubbleOverCompute(), double(p - 1) / (v * m), 1e-9);
      }
}

TEST(PipelineScheduleTest, ZeroBubbleH1Bubble) {
  for (int64_t p = 2; p <= 4; ++p)
    for (int64_t m = p; m <= 4 * p; ++m) {
      SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
      PipelineSchedule s =
          build(PipelineScheduleKind::ZeroBubbleH1, p, m, 1, unitCosts());
      expectComplete(s, true);
      EXPECT_NEAR(s.bubbleOverCompute(), double(p - 1) / (3 * m), 1e-9);
      PipelineSchedule oneFOneB =
          build(PipelineScheduleKind::OneFOneB, p, m, 1, unitCosts());
      EXPECT_LT(s.makespan, oneFOneB.makespan);
    }
}

TEST(PipelineScheduleTest, Table) {
  PipelineSchedule s =
      build(PipelineScheduleKind::OneFOneB, 2, 3, 1, PipelineCosts());
  EXPECT_EQ(s.table(), "stage 0: F0 F1 B0 F2 B1 B2\n"
                       "stage 1: F0 B0 F1 B1 F2 B2");
}

TEST(PipelineScheduleTest, Refusals) {
  std::string error;
  EXPECT_FALSE(buildPipelineSchedule(PipelineScheduleKind::OneFOneB, 2, 4, 2,
                                     PipelineCosts(), error));
  EXPECT_EQ(error, "only the interleaved schedule runs several chunks per "
                   "stage");
  EXPECT_FALSE(buildPipelineSchedule(PipelineScheduleKind::GPipe, 0, 4, 1,
                                     PipelineCosts(), error));
  EXPECT_FALSE(buildPipelineSchedule(PipelineScheduleKind::GPipe, 2, 1 << 20, 1,
                                     PipelineCosts(), error));
}

} // namespace

namespace {
/// A zb-h1 step whose B is cheaper than its F and W (the weight products
/// split off) replays to completion.
TEST(PipelineScheduleTest, ZeroBubbleH1CheapB) {
  PipelineCosts costs;
  costs.forward = 1;
  costs.backward = 0.75;
  costs.weight = 1;
  for (int64_t p = 2; p <= 4; ++p)
    for (int64_t m = p; m <= 4 * p; ++m) {
      PipelineSchedule s =
          build(PipelineScheduleKind::ZeroBubbleH1, p, m, 1, costs);
      expectComplete(s, /*weights=*/true);
    }
}
} // namespace
