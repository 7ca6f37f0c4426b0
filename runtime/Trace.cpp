//===- Trace.cpp - the runtime's trace: state line and timeline -----------===//
//
// Two records of a run, each only when dist-run asks for it:
// - the state line (DIST_RUN_TRACE_DIR/rank.R): the last collective this
//   process entered, rewritten in place, which dist-run reports after a
//   timeout or a failure;
// - the timeline (DIST_RUN_EVENTS_DIR/rank.R.json): the compute between
//   collectives, each collective, issue and wait, each asynchronous
//   collective on its stream, each traced function call, as Chrome trace
//   events in the format python/dist/run/trace.py defines (and dist-run
//   merges).
//
//===----------------------------------------------------------------------===//

#include "dist/Runtime/DistRuntime.h"

#include "RuntimeSupport.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unordered_map>
#include <utility>
#include <vector>

using namespace dist_runtime;

namespace {
/// One interval of the timeline, in microseconds of CLOCK_REALTIME (the
/// processes of one run share it on one machine; dist-run aligns hosts'
/// files at their earliest event).
struct Event {
  std::string name;
  const char *category;
  int64_t tid;
  double begin, end;
  // The site string of the op the interval belongs to ("" for compute and
  // function calls): its location becomes the event's fields.
  std::string site;
};

struct Trace {
  // The state line's file (-1: none or not yet opened).
  int stateFd = -1;
  bool stateOpened = false;
  // The timeline: the events so far; where the compute interval now
  // running began (negative: none); the collective being issued; per
  // stream, the end of the last interval on each lane (lanes keep
  // overlapping requests of one stream apart, so that each thread of the
  // trace nests); the calls of traced functions running now, innermost
  // last.
  std::vector<Event> events;
  double computeBegin = -1;
  std::string pendingSite;
  int64_t pendingStream = DIST_STREAM_COMPUTE;
  double pendingBegin = 0;
  std::unordered_map<int64_t, std::vector<double>> laneEnds;
  std::vector<std::pair<std::string, double>> calls;
};

Trace &traceData() {
  static Trace data;
  return data;
}

void appendJSONString(std::string &out, const std::string &text) {
  out += '"';
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
      out += buffer;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

/// The op location a site string begins with ("FILE:LINE:COL: what"; the
/// lowering puts it first in every one): the trace carries it as fields, so
/// that no reader parses names.
bool splitLocation(const std::string &name, std::string &file, long &line,
                   long &col) {
  for (size_t end = name.find(": "); end != std::string::npos;
       end = name.find(": ", end + 1)) {
    size_t colStart = name.rfind(':', end - 1);
    if (colStart == std::string::npos || colStart == 0)
      continue;
    size_t lineStart = name.rfind(':', colStart - 1);
    if (lineStart == std::string::npos)
      continue;
    auto number = [&](size_t from, size_t to, long &value) {
      if (from >= to || to - from > 9)
        return false;
      value = 0;
      for (size_t i = from; i < to; ++i) {
        if (name[i] < '0' || name[i] > '9')
          return false;
        value = value * 10 + (name[i] - '0');
      }
      return true;
    };
    if (number(lineStart + 1, colStart, line) &&
        number(colStart + 1, end, col)) {
      file = name.substr(0, lineStart);
      return true;
    }
  }
  return false;
}
} // namespace

void dist_runtime::trace::state(const std::string &text) {
  Trace &t = traceData();
  if (!t.stateOpened) {
    t.stateOpened = true;
    const char *dir = std::getenv("DIST_RUN_TRACE_DIR");
    if (dir && *dir) {
      std::string path =
          std::string(dir) + "/rank." + std::to_string(worldRank());
      t.stateFd =
          ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (t.stateFd < 0)
        fatalf("cannot write the trace file %s: %s", path.c_str(),
               std::strerror(errno));
    }
  }
  if (t.stateFd < 0)
    return;
  // A fixed length, written in place with one pwrite, so that a reader
  // (dist-run after a timeout) sees either the old or the new state, never
  // a mix.
  constexpr size_t kLine = 1024;
  std::string line = text.substr(0, kLine - 1);
  line.resize(kLine - 1, ' ');
  line += '\n';
  if (::pwrite(t.stateFd, line.data(), line.size(), 0) !=
      static_cast<ssize_t>(line.size()))
    fatalf("cannot write the trace file: %s", std::strerror(errno));
}

void dist_runtime::trace::closeState() {
  Trace &t = traceData();
  if (t.stateFd >= 0) {
    ::close(t.stateFd);
    t.stateFd = -1;
  }
}

bool dist_runtime::trace::eventsOn() {
  static const bool on = [] {
    const char *dir = std::getenv("DIST_RUN_EVENTS_DIR");
    return dir && *dir;
  }();
  return on;
}

double dist_runtime::trace::nowMicros() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

void dist_runtime::trace::startCompute(double t) {
  traceData().computeBegin = t;
}

void dist_runtime::trace::closeCompute(double t) {
  Trace &data = traceData();
  if (data.computeBegin >= 0 && t > data.computeBegin)
    data.events.push_back({"compute", "compute", 0, data.computeBegin, t, ""});
  data.computeBegin = -1;
}

void dist_runtime::trace::record(std::string name, const char *category,
                                 int64_t tid, double begin, double end,
                                 std::string site) {
  traceData().events.push_back(
      {std::move(name), category, tid, begin, end, std::move(site)});
}

int64_t dist_runtime::trace::streamLane(int64_t stream, double begin,
                                        double end) {
  // stream * 100 + the first lane whose last interval has ended by `begin`.
  std::vector<double> &lanes = traceData().laneEnds[stream];
  size_t lane = 0;
  while (lane < lanes.size() && lanes[lane] > begin)
    ++lane;
  if (lane == lanes.size())
    lanes.push_back(end);
  else
    lanes[lane] = end;
  return stream * 100 + static_cast<int64_t>(lane);
}

void dist_runtime::trace::beginCollective(const std::string &site,
                                          int64_t stream) {
  // The group check, if on, counts as part of the collective.
  Trace &data = traceData();
  double t = nowMicros();
  closeCompute(t);
  data.pendingSite = site;
  data.pendingStream = stream;
  data.pendingBegin = t;
}

void dist_runtime::trace::writeEvents() {
  Trace &data = traceData();
  closeCompute(nowMicros());
  int rank = worldRank();
  std::string out = "[\n";
  char buffer[256];
  auto meta = [&](const char *name, int64_t tid, const std::string &value) {
    std::snprintf(buffer, sizeof(buffer),
                  "{\"ph\": \"M\", \"name\": \"%s\", \"pid\": %d, "
                  "\"tid\": %lld, \"args\": {\"name\": ",
                  name, rank, static_cast<long long>(tid));
    out += buffer;
    appendJSONString(out, value);
    out += "}},\n";
  };
  meta("process_name", 0, "rank " + std::to_string(rank));
  // The lanes are named where the ranks' files are merged (trace.py), from
  // the dialect's stream names.
  std::snprintf(buffer, sizeof(buffer),
                "{\"ph\": \"M\", \"name\": \"dist_collectives\", \"pid\": "
                "%d, \"tid\": 0, \"args\": {\"count\": %lld}}",
                rank, static_cast<long long>(entered().count));
  out += buffer;
  for (const Event &event : data.events) {
    out += ",\n{\"name\": ";
    appendJSONString(out, event.name);
    std::snprintf(buffer, sizeof(buffer),
                  ", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, "
                  "\"dur\": %.3f, \"pid\": %d, \"tid\": %lld",
                  event.category, event.begin, event.end - event.begin, rank,
                  static_cast<long long>(event.tid));
    out += buffer;
    std::string file;
    long line = 0, col = 0;
    if (splitLocation(event.site, file, line, col)) {
      out += ", \"args\": {\"file\": ";
      appendJSONString(out, file);
      std::snprintf(buffer, sizeof(buffer), ", \"line\": %ld, \"col\": %ld}",
                    line, col);
      out += buffer;
    }
    out += "}";
  }
  out += "\n]\n";
  std::string path = std::string(std::getenv("DIST_RUN_EVENTS_DIR")) +
                     "/rank." + std::to_string(rank) + ".json";
  FILE *file = std::fopen(path.c_str(), "w");
  if (!file)
    fatalf("cannot write the timeline to %s: %s", path.c_str(),
           std::strerror(errno));
  bool ok = std::fwrite(out.data(), 1, out.size(), file) == out.size();
  if (std::fclose(file) != 0 || !ok)
    fatalf("cannot write the timeline to %s", path.c_str());
}

extern "C" {
void _mlir_ciface_dist_trace_function(DistMemRef1D *name, int64_t begin) {
  if (!trace::eventsOn())
    return;
  Trace &data = traceData();
  double t = trace::nowMicros();
  trace::closeCompute(t);
  data.computeBegin = t;
  if (begin) {
    const char *text = static_cast<const char *>(name->aligned) + name->offset;
    data.calls.emplace_back(siteText(text, name->size), t);
    return;
  }
  if (data.calls.empty())
    fatalf("a traced function returned that was not entered");
  data.events.push_back({data.calls.back().first, "function", 0,
                         data.calls.back().second, t, ""});
  data.calls.pop_back();
}

void dist_trace_collective_end(void) {
  if (!trace::eventsOn())
    return;
  Trace &data = traceData();
  double t = trace::nowMicros();
  if (data.pendingStream == DIST_STREAM_COMPUTE) {
    data.events.push_back({data.pendingSite, "collective", 0, data.pendingBegin,
                           t, data.pendingSite});
  } else {
    data.events.push_back({"issue " + data.pendingSite, "issue", 0,
                           data.pendingBegin, t, data.pendingSite});
    noteIssued(data.pendingSite, data.pendingStream, data.pendingBegin);
  }
  data.computeBegin = t;
}
}
