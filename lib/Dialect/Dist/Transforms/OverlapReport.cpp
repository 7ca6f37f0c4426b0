//===- OverlapReport.cpp - estimated schedule and exposed communication ---===//
//
// Implements --dist-overlap-report: replays each function's op order on a
// compute stream and one track per communication stream, with times from the
// shared cost model, and reports how much communication stays exposed.
//
//===----------------------------------------------------------------------===//

#include "dist/Analysis/CostModel.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

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

struct FunctionReport {
  std::string name;
  double compute = 0, comm = 0, exposed = 0, makespan = 0;
  SmallVector<Slice> slices;
};

constexpr unsigned kNumStreams = 4;

FunctionReport simulate(func::FuncOp func, const CostModel &model) {
  FunctionReport report;
  report.name = func.getName().str();
  double now = 0; // The compute stream's clock.
  double streamFree[kNumStreams] = {0, 0, 0, 0};
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
  os << llvm::formatv("{0,-24} {1,14} {2,12} {3,19} {4,8} {5,15}\n",
                      "function", "compute (us)", "comm (us)",
                      "exposed comm (us)", "hidden", "makespan (us)");
  for (const FunctionReport &r : reports) {
    // Rounding can leave exposed a hair above comm; nothing is hidden then.
    double hiddenFraction = r.comm > 0 ? std::max(0.0, r.comm - r.exposed) / r.comm : 0.0;
    std::string hidden =
        r.comm > 0 ? llvm::formatv("{0:f1}%", 100.0 * hiddenFraction).str()
                   : "-";
    os << llvm::formatv("{0,-24} {1,14:f3} {2,12:f3} {3,19:f3} {4,8} "
                        "{5,15:f3}\n",
                        "@" + r.name, r.compute, r.comm, r.exposed, hidden,
                        r.makespan);
  }
}

void printJson(raw_ostream &os, ArrayRef<FunctionReport> reports) {
  os << "{\"functions\": [";
  llvm::interleave(
      reports, os,
      [&](const FunctionReport &r) {
        os << llvm::formatv("{{\"name\": \"{0}\", \"compute_us\": {1:f3}, "
                            "\"comm_us\": {2:f3}, \"exposed_comm_us\": "
                            "{3:f3}, \"makespan_us\": {4:f3}}",
                            r.name, r.compute, r.comm, r.exposed, r.makespan);
      },
      ", ");
  os << "]}\n";
}

void printTrace(raw_ostream &os, ArrayRef<FunctionReport> reports) {
  static const char *trackNames[kNumStreams] = {"compute", "mp", "dp",
                                                "sharding"};
  os << "{\"traceEvents\": [\n";
  bool first = true;
  auto event = [&](const std::string &text) {
    os << (first ? "  " : ",\n  ") << text;
    first = false;
  };
  for (auto [index, r] : llvm::enumerate(reports)) {
    unsigned pid = index + 1;
    event(llvm::formatv("{{\"name\": \"process_name\", \"ph\": \"M\", "
                        "\"pid\": {0}, \"args\": {{\"name\": \"@{1}\"}}",
                        pid, r.name));
    for (unsigned track = 0; track < kNumStreams; ++track)
      event(llvm::formatv("{{\"name\": \"thread_name\", \"ph\": \"M\", "
                          "\"pid\": {0}, \"tid\": {1}, \"args\": {{\"name\": "
                          "\"{2}\"}}",
                          pid, track, trackNames[track]));
    for (const Slice &s : r.slices)
      event(llvm::formatv("{{\"name\": \"{0}\", \"cat\": \"{1}\", \"ph\": "
                          "\"X\", \"pid\": {2}, \"tid\": {3}, \"ts\": {4:f3}, "
                          "\"dur\": {5:f3}}",
                          s.name, s.category, pid, s.track, s.start,
                          s.duration));
  }
  os << "\n]}\n";
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
    return anchor->emitError("cannot write the overlap report: ") << error;
  print(file->os());
  file->keep();
  return success();
}

struct DistOverlapReportPass
    : public dist::impl::DistOverlapReportBase<DistOverlapReportPass> {
  using Base::Base;

  void runOnOperation() override {
    if (format != "table" && format != "json") {
      getOperation().emitError("unknown overlap report format '")
          << format << "'; expected table or json";
      return signalPassFailure();
    }
    CostModel model({peakTflops, linkLatencyUs, linkBandwidthGBps});
    SmallVector<FunctionReport> reports;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        reports.push_back(simulate(func, model));

    if (failed(writeTo(output, getOperation(), [&](raw_ostream &os) {
          if (format == "json")
            printJson(os, reports);
          else
            printTable(os, reports);
        })))
      return signalPassFailure();
    if (!traceFile.empty() &&
        failed(writeTo(traceFile, getOperation(),
                       [&](raw_ostream &os) { printTrace(os, reports); })))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
