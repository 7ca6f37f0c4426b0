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
#include "llvm/Support/JSON.h"
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
        });
    });
  });
  os << "\n";
}

void printTrace(raw_ostream &os, ArrayRef<FunctionReport> reports) {
  static const char *trackNames[kNumStreams] = {"compute", "mp", "dp",
                                                "sharding"};
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
          metadata("thread_name", pid, track, trackNames[track]);
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
