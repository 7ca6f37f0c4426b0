//===- OverlapReport.cpp - estimated schedule and exposed communication ---===//
//
// Implements --dist-overlap-report: replays each function's op order on a
// compute stream and one track per communication stream, with times from the
// shared cost model, and reports how much communication stays exposed.
//
//===----------------------------------------------------------------------===//

#include "dist/Analysis/CostModel.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/DistRules.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTOVERLAPREPORT
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;
using namespace mlir::dist;

namespace {
/// One slice of the estimated schedule, in microseconds.
struct Slice {
  std::string name;
  llvm::StringLiteral category;
  unsigned track; // The StreamKind value; 0 is the compute stream.
  double start, duration;
};

/// Compute, communication, exposed communication and makespan, in
/// microseconds.
struct Figures {
  double compute = 0, comm = 0, exposed = 0, makespan = 0;
};

/// A function's figures per call as measured on the slowest of `ranks`
/// ranks that called it.
struct Measured {
  Figures figures;
  int64_t calls = 0, ranks = 0;
};

struct FunctionReport {
  std::string name;
  double compute = 0, comm = 0, exposed = 0, makespan = 0;
  SmallVector<Slice> slices;
  std::optional<Measured> measured;

  Figures predicted() const { return {compute, comm, exposed, makespan}; }
};

/// The estimate's error relative to the measurement, in percent; nothing
/// when nothing was measured.
std::optional<double> errorPercent(double predicted, double measured) {
  if (measured <= 0)
    return std::nullopt;
  return 100.0 * (predicted - measured) / measured;
}

/// One track per StreamKind, named as the IR spells it.
constexpr unsigned kNumStreams = getMaxEnumValForStreamKind() + 1;
std::string trackName(unsigned track) {
  return stringifyStreamKind(static_cast<StreamKind>(track)).str();
}

FunctionReport simulate(func::FuncOp func, const CostModel &model) {
  FunctionReport report;
  report.name = func.getName().str();
  double now = 0; // The compute stream's clock.
  double streamFree[kNumStreams] = {};
  llvm::DenseMap<Value, double> doneAt;
  auto us = [](std::optional<double> seconds) {
    return seconds.value_or(0.0) * 1e6;
  };

  func.walk([&](Operation *op) {
    std::string name = op->getName().getStringRef().str();
    if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
      double cost = us(model.collectiveTime(op));
      report.comm += cost;
      if (collective.isAsync()) {
        unsigned track = static_cast<unsigned>(*collective.getStream());
        double start = std::max(now, streamFree[track]);
        streamFree[track] = start + cost;
        doneAt[collective.getResult()] = start + cost;
        report.slices.push_back({name, "comm", track, start, cost});
      } else {
        report.slices.push_back({name, "comm", 0, now, cost});
        report.exposed += cost;
        now += cost;
      }
      return;
    }
    if (auto wait = dyn_cast<WaitOp>(op)) {
      double end = doneAt.lookup(wait.getFuture());
      if (end > now) {
        report.slices.push_back({name, "stall", 0, now, end - now});
        report.exposed += end - now;
        now = end;
      }
      return;
    }
    if (std::optional<double> seconds = model.computeTime(op)) {
      double cost = us(seconds);
      report.slices.push_back({name, "compute", 0, now, cost});
      report.compute += cost;
      now += cost;
    }
  });
  report.makespan = now;
  for (double free : streamFree)
    report.makespan = std::max(report.makespan, free);
  return report;
}

void printTable(raw_ostream &os, ArrayRef<FunctionReport> reports) {
  os << llvm::formatv("{0,-24} {1,14} {2,12} {3,19} {4,8} {5,15}\n", "function",
                      "compute (us)", "comm (us)", "exposed comm (us)",
                      "hidden", "makespan (us)");
  for (const FunctionReport &r : reports) {
    // Rounding can leave exposed a hair above comm; nothing is hidden then.
    double hiddenFraction =
        r.comm > 0 ? std::max(0.0, r.comm - r.exposed) / r.comm : 0.0;
    std::string hidden =
        r.comm > 0 ? llvm::formatv("{0:f1}%", 100.0 * hiddenFraction).str()
                   : "-";
    os << llvm::formatv("{0,-24} {1,14:f3} {2,12:f3} {3,19:f3} {4,8} "
                        "{5,15:f3}\n",
                        "@" + r.name, r.compute, r.comm, r.exposed, hidden,
                        r.makespan);
  }
}

/// A number in microseconds with three decimals (llvm::json would print 17
/// significant digits); never NaN or infinite, since the cost model's
/// options are checked.
void microseconds(llvm::json::OStream &json, llvm::StringRef key,
                  double value) {
  json.attributeBegin(key);
  json.rawValue([&](raw_ostream &os) { os << llvm::formatv("{0:f3}", value); });
  json.attributeEnd();
}

void printJson(raw_ostream &os, ArrayRef<FunctionReport> reports) {
  llvm::json::OStream json(os);
  json.object([&] {
    json.attributeArray("functions", [&] {
      for (const FunctionReport &r : reports)
        json.object([&] {
          json.attribute("name", r.name);
          microseconds(json, "compute_us", r.compute);
          microseconds(json, "comm_us", r.comm);
          microseconds(json, "exposed_comm_us", r.exposed);
          microseconds(json, "makespan_us", r.makespan);
          if (!r.measured)
            return;
          const Figures &m = r.measured->figures;
          json.attributeObject("measured", [&] {
            microseconds(json, "compute_us", m.compute);
            microseconds(json, "comm_us", m.comm);
            microseconds(json, "exposed_comm_us", m.exposed);
            microseconds(json, "makespan_us", m.makespan);
            json.attribute("calls", r.measured->calls);
            json.attribute("ranks", r.measured->ranks);
          });
          json.attributeObject("error_pct", [&] {
            Figures p = r.predicted();
            for (auto [key, predicted, measured] :
                 {std::tuple{"compute", p.compute, m.compute},
                  std::tuple{"comm", p.comm, m.comm},
                  std::tuple{"exposed_comm", p.exposed, m.exposed},
                  std::tuple{"makespan", p.makespan, m.makespan}}) {
              if (std::optional<double> error =
                      errorPercent(predicted, measured)) {
                json.attributeBegin(key);
                json.rawValue([&](raw_ostream &os) {
                  os << llvm::formatv("{0:f1}", *error);
                });
                json.attributeEnd();
              } else {
                json.attribute(key, nullptr);
              }
            }
          });
        });
    });
  });
  os << "\n";
}

void printTrace(raw_ostream &os, ArrayRef<FunctionReport> reports) {
  llvm::json::OStream json(os);
  auto metadata = [&](StringRef name, int64_t pid, std::optional<int64_t> tid,
                      StringRef value) {
    json.object([&] {
      json.attribute("name", name);
      json.attribute("ph", "M");
      json.attribute("pid", pid);
      if (tid)
        json.attribute("tid", *tid);
      json.attributeObject("args", [&] { json.attribute("name", value); });
    });
  };
  json.object([&] {
    json.attributeArray("traceEvents", [&] {
      for (auto [index, r] : llvm::enumerate(reports)) {
        int64_t pid = index + 1;
        metadata("process_name", pid, std::nullopt, "@" + r.name);
        for (unsigned track = 0; track < kNumStreams; ++track)
          metadata("thread_name", pid, track, trackName(track));
        for (const Slice &slice : r.slices)
          json.object([&] {
            json.attribute("name", slice.name);
            json.attribute("cat", slice.category);
            json.attribute("ph", "X");
            json.attribute("pid", pid);
            json.attribute("tid", int64_t(slice.track));
            microseconds(json, "ts", slice.start);
            microseconds(json, "dur", slice.duration);
          });
      }
    });
  });
  os << "\n";
}

/// One timed interval of a dist-run trace.
struct TraceInterval {
  std::string name, category;
  int64_t rank, thread;
  double begin, end;
};

/// The measured figures per function name in the dist-run --trace file at
/// `path` (see the pass description); diagnostics point at the file.
FailureOr<llvm::StringMap<Measured>> readMeasuredTrace(StringRef path,
                                                       MLIRContext *context) {
  Location fileLoc = FileLineColLoc::get(context, path, 0, 0);
  auto error = [&] { return emitError(fileLoc) << "invalid measured trace: "; };
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return emitError(fileLoc)
           << "cannot read the measured trace: " << buffer.getError().message();
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return error() << llvm::toString(json.takeError());
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Array *events =
      root ? root->getArray("traceEvents") : nullptr;
  if (!events)
    return error() << "no 'traceEvents' array (write one with dist-run "
                      "--trace)";
  // The format's version (python/dist/run/trace.py); a trace without one is
  // of the first.
  if (const llvm::json::Value *version = root->get("dist-trace");
      version && version->getAsInteger() != std::optional<int64_t>(1))
    return error() << "trace format version "
                   << llvm::formatv("{0}", *version).str()
                   << "; this dist reads version 1";
  std::vector<TraceInterval> intervals;
  for (const llvm::json::Value &value : *events) {
    const llvm::json::Object *event = value.getAsObject();
    if (!event || event->getString("ph") != "X")
      continue;
    std::optional<StringRef> name = event->getString("name");
    std::optional<StringRef> category = event->getString("cat");
    std::optional<double> ts = event->getNumber("ts");
    std::optional<double> dur = event->getNumber("dur");
    std::optional<int64_t> pid = event->getInteger("pid");
    std::optional<int64_t> tid = event->getInteger("tid");
    if (!name || !category || !ts || !dur || !pid || !tid ||
        !std::isfinite(*ts) || !std::isfinite(*dur) || *dur < 0)
      return error() << "event " << intervals.size()
                     << " lacks a name, category, time, duration, process "
                        "or thread";
    intervals.push_back(
        {name->str(), category->str(), *pid, *tid, *ts, *ts + *dur});
  }
  // Per function and rank: calls, and the totals of their spans and of the
  // compute stream's time in collectives, issues and waits within them.
  struct Totals {
    int64_t calls = 0;
    double span = 0, exposed = 0;
  };
  std::map<std::pair<std::string, int64_t>, Totals> totals;
  constexpr double kSlack = 1e-3; // Rounding of the trace's times.
  // The compute stream's communication, by rank and start, so that each
  // call looks only at what starts within it (a long run has many calls).
  std::vector<const TraceInterval *> comm;
  for (const TraceInterval &e : intervals)
    if (e.thread == 0 && (e.category == "collective" || e.category == "issue" ||
                          e.category == "wait"))
      comm.push_back(&e);
  auto byRankAndBegin = [](const TraceInterval *a, const TraceInterval *b) {
    return std::pair(a->rank, a->begin) < std::pair(b->rank, b->begin);
  };
  llvm::sort(comm, byRankAndBegin);
  for (const TraceInterval &call : intervals) {
    if (call.category != "function" || call.thread != 0)
      continue;
    Totals &t = totals[{call.name, call.rank}];
    ++t.calls;
    t.span += call.end - call.begin;
    TraceInterval from{"", "", call.rank, 0, call.begin - kSlack, 0};
    for (auto it = llvm::lower_bound(comm, &from, byRankAndBegin);
         it != comm.end() && (*it)->rank == call.rank &&
         (*it)->begin <= call.end + kSlack;
         ++it)
      if ((*it)->end <= call.end + kSlack)
        t.exposed += (*it)->end - (*it)->begin;
  }
  if (totals.empty())
    return error() << "no function calls in the trace (record one with "
                      "dist-run --trace)";
  llvm::StringMap<Measured> measured;
  for (const auto &[key, t] : totals) {
    Measured &m = measured[key.first];
    ++m.ranks;
    double span = t.span / t.calls;
    if (m.ranks > 1 && span <= m.figures.makespan)
      continue;
    double exposed = t.exposed / t.calls;
    m.calls = t.calls;
    m.figures = {span - exposed, exposed, exposed, span};
  }
  return measured;
}

/// The side-by-side table of the functions the trace measured.
void printMeasuredTable(raw_ostream &os, ArrayRef<FunctionReport> reports,
                        StringRef tracePath) {
  os << "measured in " << tracePath << " (per call, slowest rank):\n";
  os << llvm::formatv("{0,-24} {1,-14} {2,15} {3,15} {4,8}\n", "function", "",
                      "estimate (us)", "measured (us)", "error");
  for (const FunctionReport &r : reports) {
    // Calls are not estimated: a function that only calls others (the
    // entry) has nothing to compare.
    if (!r.measured || r.slices.empty())
      continue;
    Figures p = r.predicted(), m = r.measured->figures;
    for (auto [what, predicted, measured] :
         {std::tuple{"compute", p.compute, m.compute},
          std::tuple{"comm", p.comm, m.comm},
          std::tuple{"exposed comm", p.exposed, m.exposed},
          std::tuple{"makespan", p.makespan, m.makespan}}) {
      std::optional<double> error = errorPercent(predicted, measured);
      os << llvm::formatv(
          "{0,-24} {1,-14} {2,15:f3} {3,15:f3} {4,8}\n", "@" + r.name, what,
          predicted, measured,
          error ? llvm::formatv("{0}{1:f1}%", *error >= 0 ? "+" : "", *error)
                      .str()
                : "-");
    }
  }
}

/// `text` with XML's special characters escaped.
std::string xmlEscape(StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// A tick step for an axis of `span` us: 1, 2 or 5 times a power of ten,
/// giving four to ten ticks.
double tickStep(double span) {
  if (!(span > 0))
    return 1;
  double step = std::pow(10.0, std::floor(std::log10(span / 8)));
  for (double factor : {1.0, 2.0, 5.0, 10.0})
    if (span / (step * factor) <= 10)
      return step * factor;
  return step * 10;
}

/// A time axis from x0 (time 0) at `scale` px per us, up to `span` us, with
/// tick labels in us or ms.
void printTimeAxis(raw_ostream &out, int y, int x0, double scale, double span) {
  double step = tickStep(span);
  bool ms = span >= 5000;
  out << "<g class=\"axis\">\n";
  out << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2:f2}\" "
                       "y2=\"{1}\" stroke=\"#444\"/>\n",
                       x0, y, x0 + span * scale);
  for (int i = 0; i * step <= span * (1 + 1e-9); ++i) {
    double t = i * step, x = x0 + t * scale;
    out << llvm::formatv("<line x1=\"{0:f2}\" y1=\"{1}\" x2=\"{0:f2}\" "
                         "y2=\"{2}\" stroke=\"#444\"/>\n",
                         x, y, y + 4);
    out << llvm::formatv("<text x=\"{0:f2}\" y=\"{1}\" "
                         "text-anchor=\"middle\">",
                         x, y + 15)
        << llvm::format("%g", ms ? t / 1000 : t) << (ms ? " ms" : " us")
        << "</text>\n";
  }
  out << "</g>\n";
}

/// The estimated schedules as an SVG picture: per function, a lane per
/// stream it uses, all on one time scale (the longest makespan fills the
/// width) with a time axis under each function; colours as in dist.timeline
/// (compute blue, exposed communication red, communication on a stream
/// green).
void printSvg(raw_ostream &os, ArrayRef<FunctionReport> reports) {
  constexpr int kWidth = 1100, kLabel = 190, kLane = 18, kGap = 4;
  double longest = 0;
  for (const FunctionReport &r : reports)
    if (!r.slices.empty())
      longest = std::max(longest, r.makespan);
  double scale = longest > 0 ? (kWidth - kLabel - 20) / longest : 0;
  auto color = [](const Slice &slice) {
    if (slice.track != 0)
      return "#4caf50";
    return slice.category == "compute" ? "#4c8bd6" : "#d64c4c";
  };
  std::string body;
  llvm::raw_string_ostream out(body);
  int y = 40;
  for (const FunctionReport &r : reports) {
    if (r.slices.empty())
      continue;
    SmallVector<unsigned> tracks;
    for (const Slice &slice : r.slices)
      if (!llvm::is_contained(tracks, slice.track))
        tracks.push_back(slice.track);
    llvm::sort(tracks);
    out << llvm::formatv("<g class=\"function\" data-name=\"{0}\">\n",
                         xmlEscape(r.name));
    out << llvm::formatv(
        "<text x=\"10\" y=\"{0}\" font-weight=\"bold\">@{1}: makespan "
        "{2:f3} us, exposed communication {3:f3} of {4:f3} us</text>\n",
        y + 12, xmlEscape(r.name), r.makespan, r.exposed, r.comm);
    y += 20;
    for (unsigned track : tracks) {
      out << llvm::formatv("<text x=\"10\" y=\"{0}\">{1} stream</text>\n",
                           y + kLane - 5, trackName(track));
      out << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" "
                           "stroke=\"#ddd\"/>\n",
                           kLabel, y + kLane / 2, kWidth - 20);
      for (const Slice &slice : r.slices) {
        if (slice.track != track)
          continue;
        out << llvm::formatv(
            "<rect x=\"{0:f2}\" y=\"{1}\" width=\"{2:f2}\" height=\"{3}\" "
            "fill=\"{4}\" stroke=\"white\" stroke-width=\"0.5\" "
            "class=\"{5}\"><title>{6}: {7:f3} us at {8:f3} "
            "us</title></rect>\n",
            kLabel + slice.start * scale, y,
            std::max(slice.duration * scale, 0.5), kLane, color(slice),
            slice.category, xmlEscape(slice.name), slice.duration, slice.start);
      }
      y += kLane + kGap;
    }
    printTimeAxis(out, y, kLabel, scale, longest);
    out << "</g>\n";
    y += 36;
  }
  int height = y + 30;
  os << llvm::formatv(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
      "height=\"{1}\" font-family=\"sans-serif\" font-size=\"11\">\n",
      kWidth, height);
  os << llvm::formatv("<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
                      kWidth, height);
  os << "<text x=\"10\" y=\"20\" font-size=\"14\">dist-overlap-report: "
        "estimated schedule</text>\n";
  os << body;
  int x = kLabel;
  for (auto [label, fill] :
       {std::pair{"compute", "#4c8bd6"},
        std::pair{"exposed communication", "#d64c4c"},
        std::pair{"communication on a stream", "#4caf50"}}) {
    os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"12\" "
                        "height=\"12\" fill=\"{2}\"/>\n",
                        x, y, fill);
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">{2}</text>\n", x + 16,
                        y + 10, label);
    x += 40 + 7 * static_cast<int>(StringRef(label).size());
  }
  os << "</svg>\n";
}

/// Writes through `print` to `path`, or to stderr for "-".
LogicalResult writeTo(StringRef path, Operation *anchor,
                      llvm::function_ref<void(raw_ostream &)> print) {
  if (path == "-") {
    print(llvm::errs());
    return success();
  }
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &error);
  if (!file)
    return mlir::emitError(anchor->getLoc(),
                           "cannot write the overlap report: ")
           << error;
  print(file->os());
  file->keep();
  return success();
}

struct DistOverlapReportPass
    : public dist::impl::DistOverlapReportBase<DistOverlapReportPass> {
  using Base::Base;

  void runOnOperation() override {
    // Its encodings are claims only once completion has decided them.
    if (failed(rules::requireCompleted(getOperation())))
      return signalPassFailure();
    if (format != "table" && format != "json") {
      mlir::emitError(getOperation().getLoc(),
                      "unknown overlap report format '")
          << format << "'; expected table or json";
      return signalPassFailure();
    }
    FailureOr<CostModelOptions> costOptions = CostModelOptions::fromPassOptions(
        peakTflops, linkLatencyUs, linkBandwidthGBps, costModelFile,
        getOperation());
    if (failed(costOptions))
      return signalPassFailure();
    CostModel model(*costOptions);
    SmallVector<FunctionReport> reports;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        reports.push_back(simulate(func, model));
    if (!measuredTrace.empty()) {
      FailureOr<llvm::StringMap<Measured>> measured =
          readMeasuredTrace(measuredTrace, &getContext());
      if (failed(measured))
        return signalPassFailure();
      for (FunctionReport &r : reports)
        if (auto it = measured->find(r.name); it != measured->end())
          r.measured = it->second;
    }

    if (failed(writeTo(output, getOperation(), [&](raw_ostream &os) {
          if (format == "json") {
            printJson(os, reports);
            return;
          }
          printTable(os, reports);
          if (!measuredTrace.empty())
            printMeasuredTable(os, reports, measuredTrace);
        })))
      return signalPassFailure();
    if (!svgFile.empty() &&
        failed(writeTo(svgFile, getOperation(),
                       [&](raw_ostream &os) { printSvg(os, reports); })))
      return signalPassFailure();
    if (!traceFile.empty() &&
        failed(writeTo(traceFile, getOperation(),
                       [&](raw_ostream &os) { printTrace(os, reports); })))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
