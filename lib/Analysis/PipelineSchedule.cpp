//===- PipelineSchedule.cpp - the order of each stage's work --------------===//

#include "dist/Analysis/PipelineSchedule.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::dist;

std::optional<PipelineScheduleKind>
mlir::dist::parsePipelineScheduleKind(StringRef name) {
  return llvm::StringSwitch<std::optional<PipelineScheduleKind>>(name)
      .Case("gpipe", PipelineScheduleKind::GPipe)
      .Case("1f1b", PipelineScheduleKind::OneFOneB)
      .Case("interleaved", PipelineScheduleKind::Interleaved)
      .Case("zb-h1", PipelineScheduleKind::ZeroBubbleH1)
      .Default(std::nullopt);
}

StringRef mlir::dist::stringifyPipelineScheduleKind(PipelineScheduleKind kind) {
  switch (kind) {
  case PipelineScheduleKind::GPipe:
    return "gpipe";
  case PipelineScheduleKind::OneFOneB:
    return "1f1b";
  case PipelineScheduleKind::Interleaved:
    return "interleaved";
  case PipelineScheduleKind::ZeroBubbleH1:
    return "zb-h1";
  }
  return "";
}

StringRef PipelineAction::letter() const {
  return kind == Forward ? "F" : kind == Backward ? "B" : "W";
}

double PipelineSchedule::bubbleOverCompute() const {
  double worst = 0;
  for (double b : busy)
    if (b > 0)
      worst = std::max(worst, (makespan - b) / b);
  return worst;
}

double PipelineSchedule::bubbleOverMakespan() const {
  double worst = 0;
  if (makespan > 0)
    for (double b : busy)
      worst = std::max(worst, (makespan - b) / makespan);
  return worst;
}

std::string PipelineSchedule::table() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (auto [stage, actions] : llvm::enumerate(order)) {
    os << "stage " << stage << ":";
    for (const TimedAction &timed : actions) {
      os << ' ' << timed.action.letter() << timed.action.microbatch;
      if (chunks > 1)
        os << '.' << timed.action.chunk;
    }
    if (stage + 1 != order.size())
      os << '\n';
  }
  return text;
}

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr double kEps = 1e-9;

/// The replay: virtual stage c * P + p is chunk c of stage p.
class Replay {
public:
  Replay(PipelineScheduleKind kind, int64_t stages, int64_t microbatches,
         int64_t chunks, const PipelineCosts &costs, int64_t group, bool strict)
      : kind(kind), P(stages), M(microbatches), V(chunks), costs(costs),
        splitW(kind == PipelineScheduleKind::ZeroBubbleH1), strict(strict),
        group(group) {
    int64_t virtualStages = P * V;
    fEnd.assign(virtualStages, SmallVector<double>(M, kNever));
    bEnd = wEnd = fEnd;
    for (int64_t p = 0; p < P; ++p) {
      SmallVector<std::pair<int64_t, int64_t>> forwards, backwards;
      // Microbatches go through the chunks in groups of P (Megatron's
      // interleaved order; one group of M when not interleaved).
      for (int64_t first = 0; first < M; first += group) {
        int64_t last = std::min(M, first + group);
        for (int64_t c = 0; c < V; ++c)
          for (int64_t m = first; m < last; ++m) {
            forwards.push_back({c, m});
            backwards.push_back({V - 1 - c, m});
          }
      }
      stagesState.push_back({forwards, backwards, backwards});
    }
  }

  std::optional<PipelineSchedule> run(std::string &error) {
    PipelineSchedule schedule;
    schedule.kind = kind;
    schedule.stages = P;
    schedule.microbatches = M;
    schedule.chunks = V;
    schedule.order.resize(P);
    schedule.busy.assign(P, 0);
    schedule.peakActivations.assign(P, 0);
    SmallVector<double> freeAt(P, 0);
    SmallVector<int64_t> held(P, 0);
    SmallVector<SmallVector<std::pair<double, bool>>> releases(P);
    double now = 0;
    int64_t remaining = P * V * M * (splitW ? 3 : 2);
    while (remaining > 0) {
      for (int64_t p = 0; p < P; ++p) {
        if (freeAt[p] > now + kEps)
          continue;
        std::optional<PipelineAction> action = pick(p, now);
        if (!action)
          continue;
        double cost = costOf(action->kind);
        double end = now + cost;
        record(p, *action, end);
        schedule.order[p].push_back({*action, now, end});
        schedule.busy[p] += cost;
        freeAt[p] = end;
        --remaining;
        // Activations are held from a forward's start to the end of the
        // last backward step that reads them.
        if (action->kind == PipelineAction::Forward) {
          releaseUpTo(releases[p], held[p], now);
          ++held[p];
          schedule.peakActivations[p] =
              std::max(schedule.peakActivations[p], held[p]);
        } else if (action->kind == PipelineAction::Weight || !splitW) {
          releases[p].push_back({end, true});
        }
      }
      if (remaining == 0)
        break;
      double next = nextEvent(now, freeAt);
      if (next == kNever) {
        error = "the " + stringifyPipelineScheduleKind(kind).str() +
                " replay stalls with " + std::to_string(remaining) +
                " actions left";
        return std::nullopt;
      }
      now = next;
    }
    for (double end : freeAt)
      schedule.makespan = std::max(schedule.makespan, end);
    return schedule;
  }

private:
  struct StageState {
    SmallVector<std::pair<int64_t, int64_t>> forwards, backwards, weights;
    size_t nextF = 0, nextB = 0, nextW = 0;
  };

  static void releaseUpTo(SmallVector<std::pair<double, bool>> &releases,
                          int64_t &held, double now) {
    for (auto &[at, pending] : releases)
      if (pending && at <= now + kEps) {
        pending = false;
        --held;
      }
  }

  double costOf(PipelineAction::Kind kind) const {
    double scale = 1.0 / V;
    switch (kind) {
    case PipelineAction::Forward:
      return costs.forward * scale;
    case PipelineAction::Backward:
      return costs.backward * scale;
    case PipelineAction::Weight:
      return costs.weight * scale;
    }
    return 0;
  }

  /// When the input of chunk `c`'s `kind` for `m` on stage `p` is there.
  double readyAt(int64_t p, PipelineAction::Kind kind, int64_t c,
                 int64_t m) const {
    int64_t vs = c * P + p, last = P * V - 1;
    auto across = [&](double end) {
      return end == kNever ? kNever : end + costs.transfer;
    };
    switch (kind) {
    case PipelineAction::Forward:
      return vs == 0 ? 0 : across(fEnd[vs - 1][m]);
    case PipelineAction::Backward:
      return vs == last ? fEnd[vs][m] : across(bEnd[vs + 1][m]);
    case PipelineAction::Weight:
      return bEnd[vs][m];
    }
    return kNever;
  }

  /// Microbatch-chunks forwarded on `p` whose backward has not started.
  /// Microbatch-chunks forwarded on `p` whose backward has not started.
  /// (For zb-h1 the W steps, which also read the activations, are not
  /// bounded: they fill the bubbles, and the stage holds more than 1F1B's
  /// P - p; bounding them as the ZB paper's H1 does doubled the bubble of
  /// this greedy replay.)
  int64_t inFlight(int64_t p) const {
    const StageState &s = stagesState[p];
    return static_cast<int64_t>(s.nextF) - static_cast<int64_t>(s.nextB);
  }

  int64_t forwardLimit(int64_t p) const {
    switch (kind) {
    case PipelineScheduleKind::GPipe:
      return M * V;
    case PipelineScheduleKind::OneFOneB:
    case PipelineScheduleKind::ZeroBubbleH1:
      return P - p;
    case PipelineScheduleKind::Interleaved:
      // Megatron's warm-up forwards, plus the one of the first steady step.
      return (P - p - 1) * 2 + (V - 1) * group + 1;
    }
    return 1;
  }

  std::optional<PipelineAction> pick(int64_t p, double now) const {
    const StageState &s = stagesState[p];
    auto ready = [&](PipelineAction::Kind kind,
                     std::pair<int64_t, int64_t> at) {
      return readyAt(p, kind, at.first, at.second) <= now + kEps;
    };
    bool forwardsLeft = s.nextF < s.forwards.size();
    bool canB = s.nextB < s.backwards.size() && s.nextB < s.nextF &&
                ready(PipelineAction::Backward, s.backwards[s.nextB]);
    bool canF = forwardsLeft && inFlight(p) < forwardLimit(p) &&
                ready(PipelineAction::Forward, s.forwards[s.nextF]);
    bool canW = splitW && s.nextW < s.nextB &&
                ready(PipelineAction::Weight, s.weights[s.nextW]);
    auto make = [](PipelineAction::Kind kind, std::pair<int64_t, int64_t> at) {
      return PipelineAction{kind, at.second, at.first};
    };
    if (kind == PipelineScheduleKind::GPipe) {
      if (forwardsLeft)
        return canF ? std::optional(
                          make(PipelineAction::Forward, s.forwards[s.nextF]))
                    : std::nullopt;
      if (canB)
        return make(PipelineAction::Backward, s.backwards[s.nextB]);
      return std::nullopt;
    }
    if (kind == PipelineScheduleKind::Interleaved && strict) {
      // Megatron's order: the warm-up forwards, then strictly one forward
      // and one backward, whichever is ready first waiting for the other.
      int64_t warmup =
          std::min<int64_t>(forwardLimit(p) - 1, s.forwards.size());
      bool forwardTurn =
          forwardsLeft && (static_cast<int64_t>(s.nextF) < warmup ||
                           s.nextF - warmup == s.nextB);
      if (forwardTurn)
        return ready(PipelineAction::Forward, s.forwards[s.nextF])
                   ? std::optional(
                         make(PipelineAction::Forward, s.forwards[s.nextF]))
                   : std::nullopt;
      return canB ? std::optional(
                        make(PipelineAction::Backward, s.backwards[s.nextB]))
                  : std::nullopt;
    }
    if (canB)
      return make(PipelineAction::Backward, s.backwards[s.nextB]);
    if (canF)
      return make(PipelineAction::Forward, s.forwards[s.nextF]);
    if (canW)
      return make(PipelineAction::Weight, s.weights[s.nextW]);
    return std::nullopt;
  }

  void record(int64_t p, const PipelineAction &action, double end) {
    StageState &s = stagesState[p];
    int64_t vs = action.chunk * P + p;
    switch (action.kind) {
    case PipelineAction::Forward:
      fEnd[vs][action.microbatch] = end;
      ++s.nextF;
      break;
    case PipelineAction::Backward:
      bEnd[vs][action.microbatch] = end;
      ++s.nextB;
      break;
    case PipelineAction::Weight:
      wEnd[vs][action.microbatch] = end;
      ++s.nextW;
      break;
    }
  }

  /// The next time something finishes or becomes ready after `now`.
  double nextEvent(double now, ArrayRef<double> freeAt) const {
    double next = kNever;
    auto consider = [&](double t) {
      if (t > now + kEps && t < next)
        next = t;
    };
    for (double t : freeAt)
      consider(t);
    for (const auto *table : {&fEnd, &bEnd, &wEnd})
      for (const auto &row : *table)
        for (double end : row)
          if (end != kNever) {
            consider(end);
            consider(end + costs.transfer);
          }
    return next;
  }

  PipelineScheduleKind kind;
  int64_t P, M, V;
  PipelineCosts costs;
  bool splitW, strict;
  int64_t group;
  SmallVector<SmallVector<double>> fEnd, bEnd, wEnd;
  SmallVector<StageState> stagesState;
};

} // namespace

static std::optional<PipelineSchedule>
replayBest(PipelineScheduleKind kind, int64_t stages, int64_t microbatches,
           int64_t chunks, const PipelineCosts &used, std::string &error);

std::optional<PipelineSchedule> mlir::dist::buildPipelineSchedule(
    PipelineScheduleKind kind, int64_t stages, int64_t microbatches,
    int64_t chunks, const PipelineCosts &costs, std::string &error) {
  if (stages < 1 || microbatches < 1 || chunks < 1) {
    error = "stages, microbatches and chunks must be positive";
    return std::nullopt;
  }
  if (chunks > 1 && kind != PipelineScheduleKind::Interleaved) {
    error = "only the interleaved schedule runs several chunks per stage";
    return std::nullopt;
  }
  // 2^20 actions keep the replay's quadratic scan in seconds.
  if (stages > (1 << 12) || chunks > (1 << 12) || stages * chunks > (1 << 12) ||
      microbatches > (1 << 12) || stages * chunks * microbatches > (1 << 20)) {
    error = "more than 4096 microbatches, 4096 stages x chunks or 2^20 "
            "microbatch-chunks is refused";
    return std::nullopt;
  }
  if (!(costs.forward > 0) || !(costs.backward >= 0) || !(costs.weight >= 0) ||
      !(costs.transfer >= 0) ||
      !std::isfinite(costs.forward + costs.backward + costs.weight +
                     costs.transfer)) {
    error = "costs must be finite, the forward's positive";
    return std::nullopt;
  }
  // The replay runs in units of a forward, where its tolerance means
  // something; its times are scaled back at the end.
  double unit = costs.forward;
  PipelineCosts used = costs;
  used.forward = 1;
  used.backward /= unit;
  used.weight /= unit;
  used.transfer /= unit;
  if (kind != PipelineScheduleKind::ZeroBubbleH1) {
    used.backward += used.weight;
    used.weight = 0;
  }
  std::optional<PipelineSchedule> best =
      replayBest(kind, stages, microbatches, chunks, used, error);
  if (!best)
    return best;
  best->makespan *= unit;
  for (double &b : best->busy)
    b *= unit;
  for (auto &stage : best->order)
    for (TimedAction &t : stage) {
      t.start *= unit;
      t.end *= unit;
    }
  return best;
}

static std::optional<PipelineSchedule>
replayBest(PipelineScheduleKind kind, int64_t stages, int64_t microbatches,
           int64_t chunks, const PipelineCosts &used, std::string &error) {
  if (kind != PipelineScheduleKind::Interleaved || chunks == 1)
    return Replay(kind, stages, microbatches, chunks, used, microbatches,
                  /*strict=*/false)
        .run(error);
  std::optional<PipelineSchedule> best;
  for (int64_t group = stages; group <= microbatches; ++group)
    for (bool strict : {true, false}) {
      std::optional<PipelineSchedule> s =
          Replay(kind, stages, microbatches, chunks, used, group, strict)
              .run(error);
      if (s && (!best || s->makespan < best->makespan - 1e-9))
        best = std::move(s);
    }
  return best;
}
