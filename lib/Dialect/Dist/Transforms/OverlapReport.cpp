//===- OverlapReport.cpp - estimated schedule and exposed communication ---===//
//
// Implements --dist-overlap-report: replays each function's op order on a
// compute stream and one track per communication stream, with times from the
// shared cost model, and reports how much communication stays exposed.
//
//===----------------------------------------------------------------------===//

#include "dist/Analysis/CostModel.h"
#include "dist/Analysis/ReshardPlan.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/Transforms/CompletedPass.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"
#include "dist/Support/TraceSvg.h"

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
  llvm::StringLiteral category; // A category of the run trace format.
  unsigned track; // The StreamKind value; 0 is the compute stream.
  double start, duration;
  Location loc;
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

/// The collectives of one kind a call issues: how many, and the bytes per
/// process of their tensors (the cost model's measure: an allreduce's
/// operand, a reduce-scatter's operand, an all-gather's gathered result).
struct Traffic {
  int64_t count = 0, bytes = 0;
};

struct FunctionReport {
  std::string name;
  double compute = 0, comm = 0, exposed = 0, makespan = 0;
  SmallVector<Slice> slices;
  std::optional<Measured> measured;
  /// By op name (dist.allreduce, ...), in name order.
  std::map<std::string, Traffic> traffic;
  /// The most bytes of tensors a process holds at once, from the types:
  /// each value of the body from its op to its last use in the body's
  /// order, arguments apart (`argumentBytes`).
  int64_t peakLiveBytes = 0, argumentBytes = 0;
  /// The optimizer states a process holds (the arguments marked
  /// dist.state), and what it would hold unsharded: its shard of each
  /// state's parameter, or the state itself without one.
  int64_t stateBytes = 0, unshardedStateBytes = 0;

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

int64_t bytesOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 0;
  return CostModel::tensorBytes(tensor).value_or(0);
}

/// Peak live tensor bytes of `func`'s entry block: a value is held from its
/// op to the op (in the entry block) that holds its last use. Values of
/// nested regions count as their op's while it runs.
void measureMemory(func::FuncOp func, FunctionReport &report) {
  Block &entry = func.getFunctionBody().front();
  llvm::DenseMap<Attribute, int64_t> paramBytes;
  for (BlockArgument arg : entry.getArguments()) {
    report.argumentBytes += bytesOf(arg.getType());
    if (Attribute name =
            func.getArgAttr(arg.getArgNumber(), DistDialect::kParamAttrName))
      paramBytes[name] = bytesOf(arg.getType());
  }
  for (BlockArgument arg : entry.getArguments())
    if (Attribute name =
            func.getArgAttr(arg.getArgNumber(), DistDialect::kStateAttrName)) {
      int64_t bytes = bytesOf(arg.getType());
      report.stateBytes += bytes;
      auto param = paramBytes.find(name);
      report.unshardedStateBytes +=
          param == paramBytes.end() ? bytes : param->second;
    }
  llvm::DenseMap<Operation *, int64_t> position;
  int64_t n = 0;
  for (Operation &op : entry)
    position[&op] = n++;
  // Bytes that start (+) and stop (-) being held after each position.
  SmallVector<int64_t> delta(n + 1, 0);
  for (Operation &op : entry) {
    int64_t def = position[&op];
    for (Value v : op.getResults()) {
      int64_t bytes = bytesOf(v.getType());
      if (!bytes)
        continue;
      int64_t last = def;
      for (Operation *user : v.getUsers())
        if (Operation *at = entry.findAncestorOpInBlock(*user))
          last = std::max(last, position.lookup(at));
      delta[def] += bytes;
      delta[last + 1] -= bytes;
    }
  }
  int64_t live = 0;
  for (int64_t i = 0; i < n; ++i) {
    live += delta[i];
    report.peakLiveBytes = std::max(report.peakLiveBytes, live);
  }
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

  // A collective of kind `kind` that moves `bytes` (the cost model's
  // measure) in `cost` us; runSync puts it on the compute stream.
  auto account = [&](StringRef kind, int64_t bytes, double cost) {
    report.comm += cost;
    Traffic &traffic = report.traffic[kind.str()];
    ++traffic.count;
    traffic.bytes += bytes;
  };
  auto runSync = [&](std::string name, double cost, Location loc) {
    report.slices.push_back({std::move(name), "collective", 0, now, cost, loc});
    report.exposed += cost;
    now += cost;
  };
  func.walk([&](Operation *op) {
    std::string name = op->getName().getStringRef().str();
    Location loc = op->getLoc();
    if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
      double cost = us(model.collectiveTime(op));
      account(name,
              std::max(bytesOf(collective.getInput().getType()),
                       bytesOf(collective.getResultTensorType())),
              cost);
      if (collective.isAsync()) {
        unsigned track = static_cast<unsigned>(*collective.getStream());
        double start = std::max(now, streamFree[track]);
        streamFree[track] = start + cost;
        doneAt[collective.getResult()] = start + cost;
        report.slices.push_back({name, "collective", track, start, cost, loc});
      } else {
        runSync(name, cost, loc);
      }
      return;
    }
    // A reshard not lowered yet costs what its plan's collectives will, in
    // the calling stream, as --dist-lower-reshard would issue them.
    if (auto reshard = dyn_cast<ReshardOp>(op)) {
      std::string whyNot;
      FailureOr<ReshardPlan> plan = planReshard(reshard, model, whyNot);
      if (failed(plan)) {
        reshard.emitWarning(
            "this reshard is not priced: it cannot be planned: ")
            << whyNot;
        return;
      }
      for (const ReshardStep &step : plan->steps) {
        if (!step.isCollective())
          continue;
        double cost = step.seconds * 1e6;
        StringRef stepName = getRedistributionOpName(step.kind);
        account(stepName, step.tensorBytes, cost);
        runSync(name + ": " + stepName.drop_front(5).str(), cost, loc);
      }
      return;
    }
    if (auto wait = dyn_cast<WaitOp>(op)) {
      double end = doneAt.lookup(wait.getFuture());
      if (end > now) {
        report.slices.push_back({name, "wait", 0, now, end - now, loc});
        report.exposed += end - now;
        now = end;
      }
      return;
    }
    if (std::optional<double> seconds = model.computeTime(op)) {
      double cost = us(seconds);
      report.slices.push_back({name, "compute", 0, now, cost, loc});
      report.compute += cost;
      now += cost;
    }
  });
  report.makespan = now;
  for (double free : streamFree)
    report.makespan = std::max(report.makespan, free);
  measureMemory(func, report);
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
  // What each call moves and holds, per process.
  auto mib = [](int64_t bytes) {
    if (bytes < 1024)
      return llvm::formatv("{0} B", bytes).str();
    if (bytes < 1024 * 1024)
      return llvm::formatv("{0:f1} KiB", bytes / 1024.0).str();
    return llvm::formatv("{0:f1} MiB", bytes / 1048576.0).str();
  };
  for (const FunctionReport &r : reports) {
    os << "@" << r.name << " per process: ";
    if (r.traffic.empty())
      os << "no collectives";
    llvm::interleaveComma(r.traffic, os, [&](const auto &kind) {
      os << kind.second.count << " x " << kind.first << " ("
         << mib(kind.second.bytes) << ")";
    });
    os << "; peak live tensors " << mib(r.peakLiveBytes) << ", arguments "
       << mib(r.argumentBytes);
    if (r.unshardedStateBytes)
      os << "; optimizer states " << mib(r.stateBytes) << " (unsharded "
         << mib(r.unshardedStateBytes) << ")";
    os << "\n";
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
          json.attributeObject("collectives", [&] {
            for (const auto &kind : r.traffic)
              json.attributeObject(kind.first, [&] {
                json.attribute("count", kind.second.count);
                json.attribute("bytes", kind.second.bytes);
              });
          });
          json.attribute("peak_live_bytes", r.peakLiveBytes);
          json.attribute("argument_bytes", r.argumentBytes);
          json.attribute("state_bytes", r.stateBytes);
          json.attribute("unsharded_state_bytes", r.unshardedStateBytes);
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

/// The lane of `track` in the run trace format: 0 for the compute stream,
/// STREAM * 100 for the first lane of a communication stream.
int64_t laneOf(unsigned track) { return int64_t(track) * 100; }

/// The estimated schedules in the run trace format (python/dist/run/trace.py),
/// a process per function: its name and figures, a lane per stream it uses,
/// a function interval over its makespan and an interval per slice, located
/// at its op.
void printTrace(raw_ostream &os, ArrayRef<FunctionReport> reports) {
  llvm::json::OStream json(os);
  auto metadata = [&](StringRef kind, int64_t pid, std::optional<int64_t> tid,
                      StringRef value, StringRef summary = "") {
    json.object([&] {
      json.attribute("name", kind);
      json.attribute("ph", "M");
      json.attribute("pid", pid);
      if (tid)
        json.attribute("tid", *tid);
      json.attributeObject("args", [&] {
        json.attribute("name", value);
        if (!summary.empty())
          json.attribute("summary", summary);
      });
    });
  };
  auto interval = [&](StringRef name, StringRef category, int64_t pid,
                      int64_t tid, double start, double duration,
                      std::optional<Location> loc) {
    json.object([&] {
      json.attribute("name", name);
      json.attribute("cat", category);
      json.attribute("ph", "X");
      json.attribute("pid", pid);
      json.attribute("tid", tid);
      microseconds(json, "ts", start);
      microseconds(json, "dur", duration);
      // A pass that rewrites an op fuses its location with others (the
      // matmul-grad split, completion's reshards): the source line is in it.
      auto file =
          loc ? (*loc)->findInstanceOf<FileLineColLoc>() : FileLineColLoc();
      if (!file)
        return;
      json.attributeObject("args", [&] {
        json.attribute("file", file.getFilename().getValue());
        json.attribute("line", int64_t(file.getLine()));
        json.attribute("col", int64_t(file.getColumn()));
      });
    });
  };
  json.object([&] {
    json.attribute("dist-trace", 1);
    json.attribute("displayTimeUnit", "ms");
    json.attribute("title", "dist-overlap-report: estimated schedule");
    json.attributeArray("traceEvents", [&] {
      for (auto [pid, r] : llvm::enumerate(reports)) {
        std::string summary =
            llvm::formatv("makespan {0:f3} us, exposed communication {1:f3} "
                          "of {2:f3} us",
                          r.makespan, r.exposed, r.comm)
                .str();
        metadata("process_name", pid, std::nullopt, "@" + r.name, summary);
        SmallVector<unsigned> tracks;
        for (const Slice &slice : r.slices)
          if (!llvm::is_contained(tracks, slice.track))
            tracks.push_back(slice.track);
        for (unsigned track : tracks)
          metadata("thread_name", pid, laneOf(track),
                   trackName(track) + " stream");
        if (!r.slices.empty())
          interval(r.name, "function", pid, 0, 0, r.makespan, std::nullopt);
        for (const Slice &slice : r.slices)
          interval(slice.name, slice.category, pid, laneOf(slice.track),
                   slice.start, slice.duration, slice.loc);
      }
    });
  });
  os << "\n";
}

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
  llvm::Expected<std::vector<TraceInterval>> read = readTraceIntervals(*json);
  if (!read)
    return error() << llvm::toString(read.takeError());
  std::vector<TraceInterval> &intervals = *read;
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

/// The estimated schedules as an SVG picture: the trace printTrace writes,
/// drawn as a run's trace is.
void printSvg(raw_ostream &os, ArrayRef<FunctionReport> reports) {
  std::string text;
  llvm::raw_string_ostream trace(text);
  printTrace(trace, reports);
  // printTrace writes what the drawer reads.
  llvm::cantFail(renderTraceSvg(llvm::cantFail(llvm::json::parse(text)), os));
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
    : public CompletedPass<
          dist::impl::DistOverlapReportBase<DistOverlapReportPass>> {
  using CompletedPass::CompletedPass;

  void runOnCompleted(ModuleOp module) override {
    if (format != "table" && format != "json") {
      mlir::emitError(module.getLoc(), "unknown overlap report format '")
          << format << "'; expected table or json";
      return signalPassFailure();
    }
    CostModelOptions constants;
    constants.peakTflops = peakTflops;
    constants.linkLatencyUs = linkLatencyUs;
    constants.linkBandwidthGBps = linkBandwidthGBps;
    constants.memoryBandwidthGBps = memoryBandwidthGBps;
    FailureOr<CostModelOptions> costOptions =
        CostModelOptions::fromPassOptions(constants, costModelFile, module);
    if (failed(costOptions))
      return signalPassFailure();
    CostModel model(*costOptions);
    std::vector<FunctionReport> reports;
    for (auto func : module.getOps<func::FuncOp>())
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

    if (failed(writeTo(output, module, [&](raw_ostream &os) {
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
        failed(writeTo(svgFile, module,
                       [&](raw_ostream &os) { printSvg(os, reports); })))
      return signalPassFailure();
    if (!traceFile.empty() &&
        failed(writeTo(traceFile, module,
                       [&](raw_ostream &os) { printTrace(os, reports); })))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
