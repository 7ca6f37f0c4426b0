//===- TraceSvg.cpp - drawing a run trace as SVG --------------------------===//

#include "dist/Support/TraceSvg.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::dist;
using llvm::StringRef;

namespace {
constexpr int kWidth = 1100, kLabel = 190, kLane = 18, kGap = 4;
constexpr const char *kCompute = "#4c8bd6", *kExposed = "#d64c4c",
                     *kIssue = "#f0a33c", *kOnStream = "#4caf50",
                     *kOther = "#888";
/// Lanes from this tid on belong to a communication stream (trace.py's
/// LANES_PER_STREAM).
constexpr int64_t kFirstStreamLane = 100;

/// A process's lanes (by tid) and its name and summary.
struct Process {
  std::string name, summary;
  std::map<int64_t, std::string> threadNames;
  std::map<int64_t, std::vector<TraceInterval>> lanes;
};

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
/// tick labels in us, or in ms from 5 ms on.
void printTimeAxis(llvm::raw_ostream &out, int y, int x0, double scale,
                   double span) {
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

const char *fillOf(const TraceInterval &interval, int64_t tid) {
  if (tid >= kFirstStreamLane)
    return kOnStream;
  StringRef category = interval.category;
  if (category == "compute")
    return kCompute;
  if (category == "collective" || category == "wait")
    return kExposed;
  if (category == "issue")
    return kIssue;
  return kOther;
}

llvm::Error malformed(const llvm::Twine &why) {
  return llvm::createStringError(why);
}

/// The processes of `trace`: their names and summaries, their lanes' names
/// and intervals; `end` the end of the last interval.
llvm::Expected<std::map<int64_t, Process>>
readProcesses(const llvm::json::Value &trace, double &end) {
  llvm::Expected<std::vector<TraceInterval>> intervals =
      readTraceIntervals(trace);
  if (!intervals)
    return intervals.takeError();
  std::map<int64_t, Process> processes;
  end = 0;
  for (TraceInterval &interval : *intervals) {
    end = std::max(end, interval.end);
    int64_t rank = interval.rank, thread = interval.thread;
    processes[rank].lanes[thread].push_back(std::move(interval));
  }
  for (const llvm::json::Value &value :
       *trace.getAsObject()->getArray("traceEvents")) {
    const llvm::json::Object *event = value.getAsObject();
    if (!event || event->getString("ph") != "M")
      continue;
    std::optional<int64_t> pid = event->getInteger("pid");
    std::optional<int64_t> tid = event->getInteger("tid");
    std::optional<StringRef> kind = event->getString("name");
    const llvm::json::Object *args = event->getObject("args");
    std::optional<StringRef> name =
        args ? args->getString("name") : std::nullopt;
    if (!pid || !kind || !name)
      continue;
    if (*kind == "process_name") {
      processes[*pid].name = name->str();
      if (std::optional<StringRef> summary = args->getString("summary"))
        processes[*pid].summary = summary->str();
    } else if (*kind == "thread_name" && tid) {
      processes[*pid].threadNames[*tid] = name->str();
    }
  }
  return processes;
}
} // namespace

llvm::Error mlir::dist::renderTraceSvg(const llvm::json::Value &trace,
                                       llvm::raw_ostream &os) {
  double end = 0;
  llvm::Expected<std::map<int64_t, Process>> processes =
      readProcesses(trace, end);
  if (!processes)
    return processes.takeError();
  if (!(end > 0))
    end = 1;
  double scale = (kWidth - kLabel - 20) / end;
  std::string body;
  llvm::raw_string_ostream out(body);
  int y = 40;
  for (auto &[pid, process] : *processes) {
    if (process.lanes.empty())
      continue;
    std::string name =
        process.name.empty() ? "rank " + std::to_string(pid) : process.name;
    out << llvm::formatv("<g class=\"process\" data-name=\"{0}\">\n",
                         xmlEscape(name));
    out << llvm::formatv("<text x=\"10\" y=\"{0}\" font-weight=\"bold\">{1}",
                         y + 12, xmlEscape(name));
    if (!process.summary.empty())
      out << ": " << xmlEscape(process.summary);
    out << "</text>\n";
    y += 20;
    for (auto &[tid, intervals] : process.lanes) {
      auto named = process.threadNames.find(tid);
      std::string thread = named != process.threadNames.end()
                               ? named->second
                               : "thread " + std::to_string(tid);
      out << llvm::formatv("<text x=\"10\" y=\"{0}\">{1}</text>\n",
                           y + kLane - 5, xmlEscape(thread));
      out << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" "
                           "stroke=\"#ddd\"/>\n",
                           kLabel, y + kLane / 2, kWidth - 20);
      for (const TraceInterval &interval : intervals) {
        double x = kLabel + interval.begin * scale;
        double width = std::max((interval.end - interval.begin) * scale, 0.5);
        std::string tip =
            llvm::formatv("{0}: {1:f3} us at {2:f3} us", interval.name,
                          interval.end - interval.begin, interval.begin)
                .str();
        if (interval.category == "function") {
          // A call spans the bars of its body: a thin bracket above them.
          out << llvm::formatv("<rect x=\"{0:f2}\" y=\"{1}\" width=\"{2:f2}\" "
                               "height=\"2\" fill=\"#333\" class=\"function\">"
                               "<title>@{3}</title></rect>\n",
                               x, y - 3, width, xmlEscape(tip));
          continue;
        }
        out << llvm::formatv(
            "<rect x=\"{0:f2}\" y=\"{1}\" width=\"{2:f2}\" height=\"{3}\" "
            "fill=\"{4}\" stroke=\"white\" stroke-width=\"0.5\" "
            "class=\"{5}\"><title>{6}</title></rect>\n",
            x, y, width, kLane, fillOf(interval, tid),
            xmlEscape(interval.category), xmlEscape(tip));
      }
      y += kLane + kGap;
    }
    out << "</g>\n";
    y += 8;
  }
  printTimeAxis(out, y, kLabel, scale, end);
  y += 30;

  const llvm::json::Object *root = trace.getAsObject();
  std::string title = root->getString("title").value_or("dist-run trace").str();
  int height = y + 30;
  os << llvm::formatv(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
      "height=\"{1}\" font-family=\"sans-serif\" font-size=\"11\">\n",
      kWidth, height);
  os << llvm::formatv("<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
                      kWidth, height);
  os << llvm::formatv("<text x=\"10\" y=\"20\" font-size=\"14\">{0}</text>\n",
                      xmlEscape(title));
  os << body;
  int x = kLabel;
  for (auto [label, fill] :
       {std::pair{"compute", kCompute},
        std::pair{"exposed communication", kExposed},
        std::pair{"issue", kIssue},
        std::pair{"communication on a stream", kOnStream}}) {
    os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"12\" "
                        "height=\"12\" fill=\"{2}\"/>\n",
                        x, y, fill);
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">{2}</text>\n", x + 16,
                        y + 10, label);
    x += 40 + 7 * static_cast<int>(StringRef(label).size());
  }
  os << "</svg>\n";
  return llvm::Error::success();
}

llvm::Expected<std::vector<TraceInterval>>
mlir::dist::readTraceIntervals(const llvm::json::Value &trace) {
  const llvm::json::Object *root = trace.getAsObject();
  const llvm::json::Array *events =
      root ? root->getArray("traceEvents") : nullptr;
  if (!events)
    return malformed("no 'traceEvents' array (write one with dist-run "
                     "--trace)");
  // The format's version (python/dist/run/trace.py); a trace without one is
  // of the first.
  if (const llvm::json::Value *version = root->get("dist-trace");
      version && version->getAsInteger() != std::optional<int64_t>(1))
    return malformed("trace format version " +
                     llvm::formatv("{0}", *version).str() +
                     "; this dist reads version 1");
  std::vector<TraceInterval> intervals;
  for (auto [index, value] : llvm::enumerate(*events)) {
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
      return malformed("event " + llvm::Twine(index) +
                       " lacks a name, category, time, duration, process "
                       "or thread");
    intervals.push_back(
        {name->str(), category->str(), *pid, *tid, *ts, *ts + *dur});
  }
  return intervals;
}
