//===- PipelineSchedule.h - the order of each stage's work -------*- C++
//-*-===//
//
// A pipeline schedule says, for every stage, in which order it runs the
// forward (F), backward (B) and, for zero-bubble schedules, weight-gradient
// (W) work of each microbatch and model chunk. One generator makes every
// schedule: an event-driven replay in which each idle stage takes the best
// action that is ready, by the schedule's policy:
//
//   gpipe        every forward, then every backward;
//   1f1b         a backward when one is ready, else a forward while fewer
//                than P - p microbatches wait for their backward (stage p
//                of P), so that stage p holds at most P - p activations;
//   interleaved  1f1b over V chunks per stage (virtual stage c * P + p),
//                forwards in Megatron's order (g microbatches of chunk 0,
//                then the same g of chunk 1, ...), backwards in the reverse
//                chunks, after Megatron's warm-up of 2(P - p - 1) +
//                (V - 1) g forwards; Megatron takes g = P and needs M to be
//                a multiple of it, the generator replays every g from P to
//                M (strictly alternating or greedy) and keeps the shortest,
//                which reaches (P - 1)/(V M) for every M it was tried on;
//   zb-h1        1f1b with the backward split into B (the input gradient,
//                what the previous stage waits for) and W (the weight
//                gradient), W taken only when no B or F is ready.
//
// The replay at the given costs is also the estimate: the makespan, each
// stage's idle time (the bubble) and its peak of microbatches whose
// activations are held.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_ANALYSIS_PIPELINESCHEDULE_H
#define DIST_ANALYSIS_PIPELINESCHEDULE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir {
namespace dist {

enum class PipelineScheduleKind { GPipe, OneFOneB, Interleaved, ZeroBubbleH1 };

/// The option spelling (`gpipe`, `1f1b`, `interleaved`, `zb-h1`).
std::optional<PipelineScheduleKind> parsePipelineScheduleKind(StringRef name);
StringRef stringifyPipelineScheduleKind(PipelineScheduleKind kind);

struct PipelineAction {
  enum Kind { Forward, Backward, Weight } kind;
  int64_t microbatch;
  /// The model chunk on this stage (0 unless interleaved).
  int64_t chunk;
  /// "F", "B" or "W".
  StringRef letter() const;
};

/// What an action costs: the time of one chunk's F, B and W. Without a W
/// (every schedule but zb-h1) B is the whole backward.
struct PipelineCosts {
  double forward = 1, backward = 2, weight = 0;
  /// Added to a dependency that crosses stages.
  double transfer = 0;
};

struct TimedAction {
  PipelineAction action;
  double start, end;
};

struct PipelineSchedule {
  PipelineScheduleKind kind;
  int64_t stages, microbatches, chunks;
  /// Per stage, its actions in the order it runs them, with the replay's
  /// times.
  SmallVector<SmallVector<TimedAction>> order;
  double makespan = 0;
  /// Per stage: time spent computing, and the most microbatch-chunks whose
  /// forward ran and whose backward (W included) has not finished.
  SmallVector<double> busy;
  SmallVector<int64_t> peakActivations;

  /// Idle time over compute time on the busiest stage: (p-1)/m for 1f1b
  /// at equal stage costs.
  double bubbleOverCompute() const;
  /// Idle time over the makespan: (p-1)/(m+p-1) for 1f1b.
  double bubbleOverMakespan() const;
  /// One row per stage: its actions in order (`F0 F1 B0 ...`, chunk as a
  /// suffix `F0.1` when interleaved).
  std::string table() const;
};

/// Builds the schedule of `kind` for `stages` stages, `microbatches`
/// microbatches and `chunks` chunks per stage (1 unless interleaved), by
/// replaying it at `costs`. Fails with a message in `error` for sizes the
/// schedule cannot take.
std::optional<PipelineSchedule>
buildPipelineSchedule(PipelineScheduleKind kind, int64_t stages,
                      int64_t microbatches, int64_t chunks,
                      const PipelineCosts &costs, std::string &error);

} // namespace dist
} // namespace mlir

#endif // DIST_ANALYSIS_PIPELINESCHEDULE_H
