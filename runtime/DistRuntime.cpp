//===- DistRuntime.cpp - communicators and non-blocking collectives -------===//
//
// Implements include/dist/Runtime/DistRuntime.h. Communicators live in a
// table indexed by the lowering's group ids, requests in a table indexed by
// the handles the lowered code passes around as plain integers; both are
// emptied by dist_runtime_finalize, so nothing MPI allocated outlives the
// program's MPI_Finalize.
//
//===----------------------------------------------------------------------===//

#include "dist/Runtime/DistRuntime.h"

// The C interface is all the runtime uses.
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

// The lowering hands communicators over as the i64 that MLIR's MPI-to-LLVM
// conversion makes of an `!mpi.comm`, which holds MPICH's integer handle.
static_assert(std::is_integral<MPI_Comm>::value,
              "the runtime ABI assumes MPICH's integer communicator handles");

namespace {
struct Communicator {
  MPI_Comm comm = MPI_COMM_NULL;
  int64_t color = 0, key = 0;
};

struct Request {
  MPI_Request request = MPI_REQUEST_NULL;
  bool active = false;
  // For DIST_REDUCE_AVG: what to divide once the data has arrived.
  bool average = false;
  void *recv = nullptr;
  int64_t count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  // The trace entry of the collective that started it, if traced.
  int64_t traceNumber = -1;
  const char *site = nullptr;
  int64_t siteSize = 0;
  // Timeline: when it was issued (negative: not recorded), its description
  // and its stream.
  double eventBegin = -1;
  std::string eventName;
  int64_t stream = 0;
};

/// One interval of the timeline, in microseconds of CLOCK_REALTIME (the
/// processes of one run share it on one machine; dist-run aligns hosts'
/// files at their earliest event).
struct Event {
  std::string name;
  const char *category;
  int64_t tid;
  double begin, end;
};

struct Runtime {
  std::vector<Communicator> comms;
  std::vector<Request> requests;
  std::vector<int64_t> freeRequests;
  int64_t commsCreated = 0, requestsStarted = 0, requestsCompleted = 0;
  // Calls of dist_random_seed so far, per site.
  std::unordered_map<int64_t, uint64_t> seedCalls;
  // Tracing: the file the current state goes to (-1: none or not yet
  // opened), the number of collectives entered and the last one's site.
  int traceFd = -1;
  bool traceOpened = false;
  int64_t traced = 0;
  const char *lastSite = nullptr;
  int64_t lastSiteSize = 0;
  // Timeline (DIST_RUN_EVENTS_DIR set): the events so far; where the
  // compute interval now running began (negative: none); the collective
  // being issued; the request started last; per stream, the end of the last
  // interval on each lane (lanes keep overlapping requests of one stream
  // apart, so that each thread of the trace nests).
  std::vector<Event> events;
  double computeBegin = -1;
  std::string pendingSite;
  int64_t pendingStream = 0;
  double pendingBegin = 0;
  int64_t lastRequest = -1;
  std::unordered_map<int64_t, std::vector<double>> laneEnds;
  // The calls of traced functions running now, innermost last.
  std::vector<std::pair<std::string, double>> calls;
};

Runtime &runtime() {
  static Runtime state;
  return state;
}

int worldRank() {
  int rank = -1, initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

void traceState(const std::string &text);

/// Waits (at most a second) until whoever reads the pipe `fd` has read all of
/// it. A launcher (Hydra's proxy) that handles MPI_Abort before it drains a
/// rank's stderr pipe drops the rank's last words: under plain mpiexec, 3 of
/// 40 failing runs printed nothing (0 of 170 with this wait). Once the proxy
/// has read the message, it forwards it before the abort, over the same
/// connection.
void waitUntilRead(int fd) {
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISFIFO(info.st_mode))
    return;
  for (int waited = 0; waited < 1000; ++waited) {
    int unread = 0;
    if (::ioctl(fd, FIONREAD, &unread) != 0 || unread == 0)
      return;
    ::usleep(1000);
  }
}

/// Prints "dist runtime: rank R: <message>" and stops every process. The
/// message also goes to the trace file, if there is one, which dist-run
/// reports even where a launcher drops a rank's output.
[[noreturn]] __attribute__((format(printf, 1, 2))) void
fatalf(const char *format, ...) {
  static bool failing = false;
  // One write, so that the lines of processes that fail together do not
  // interleave.
  char message[2048];
  int length = std::snprintf(message, sizeof(message),
                             "dist runtime: rank %d: ", worldRank());
  va_list args;
  va_start(args, format);
  std::vsnprintf(message + length, sizeof(message) - length - 1, format, args);
  va_end(args);
  if (!failing) {
    failing = true; // traceState's own errors end up here.
    traceState(std::string("stopped the program: ") + (message + length));
  }
  std::strcat(message, "\n");
  std::fputs(message, stderr);
  std::fflush(stderr);
  std::fflush(stdout);
  waitUntilRead(STDOUT_FILENO);
  waitUntilRead(STDERR_FILENO);
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

[[noreturn]] void fatal(const char *message, long long value) {
  fatalf("%s (%lld)", message, value);
}

/// Whether environment variable `name` is "1".
bool envFlag(const char *name) {
  const char *value = std::getenv(name);
  return value && std::strcmp(value, "1") == 0;
}

/// Replaces this process's trace line with `text`. The line has a fixed
/// length and is written in place with one pwrite, so that a reader (dist-run
/// after a timeout) sees either the old or the new state, never a mix.
void traceState(const std::string &text) {
  Runtime &rt = runtime();
  if (!rt.traceOpened) {
    rt.traceOpened = true;
    const char *dir = std::getenv("DIST_RUN_TRACE_DIR");
    if (dir && *dir) {
      std::string path =
          std::string(dir) + "/rank." + std::to_string(worldRank());
      rt.traceFd =
          ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (rt.traceFd < 0)
        fatalf("cannot write the trace file %s: %s", path.c_str(),
               std::strerror(errno));
    }
  }
  if (rt.traceFd < 0)
    return;
  constexpr size_t kLine = 1024;
  std::string line = text.substr(0, kLine - 1);
  line.resize(kLine - 1, ' ');
  line += '\n';
  if (::pwrite(rt.traceFd, line.data(), line.size(), 0) !=
      static_cast<ssize_t>(line.size()))
    fatalf("cannot write the trace file: %s", std::strerror(errno));
}

std::string siteText(const char *site, int64_t size) {
  return site ? std::string(site, static_cast<size_t>(size)) : "?";
}

/// splitmix64's finaliser.
uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t runSeed() {
  static const uint64_t seed = [] {
    const char *text = std::getenv("DIST_RUN_SEED");
    if (!text || !*text)
      return uint64_t(0);
    char *end = nullptr;
    errno = 0;
    unsigned long long value = std::strtoull(text, &end, 10);
    if (errno || *end || text[0] == '-')
      fatalf("DIST_RUN_SEED=%s is not a seed (a decimal number below 2^64)",
             text);
    return uint64_t(value);
  }();
  return seed;
}

void check(int status, const char *what) {
  if (status != MPI_SUCCESS)
    fatal(what, status);
}

MPI_Op toMPI(int64_t reduction) {
  switch (reduction) {
  case DIST_REDUCE_SUM:
  case DIST_REDUCE_AVG:
    return MPI_SUM;
  case DIST_REDUCE_MAX:
    return MPI_MAX;
  case DIST_REDUCE_MIN:
    return MPI_MIN;
  case DIST_REDUCE_PROD:
    return MPI_PROD;
  default:
    fatal("unknown reduction", reduction);
  }
}

template <typename T> void divide(void *data, int64_t count, int groupSize) {
  T *values = static_cast<T *>(data);
  for (int64_t i = 0; i < count; ++i)
    values[i] /= static_cast<T>(groupSize);
}

/// Fills the parts of a request every collective shares, lets `issue`
/// start it, and files it under a handle.
template <typename T, typename Issue>
int64_t startRequest(DistMemRef1D *recv, int64_t reduction, int64_t commHandle,
                     MPI_Datatype type, Issue issue) {
  Runtime &rt = runtime();
  Request entry;
  entry.active = true;
  entry.average = reduction == DIST_REDUCE_AVG;
  entry.recv = static_cast<T *>(recv->aligned) + recv->offset;
  entry.count = recv->size;
  entry.type = type;
  entry.comm = static_cast<MPI_Comm>(commHandle);
  entry.traceNumber = rt.traced;
  entry.site = rt.lastSite;
  entry.siteSize = rt.lastSiteSize;
  rt.lastSite = nullptr;
  if (entry.average && !std::is_floating_point<T>::value)
    fatal("an avg reduction needs floating-point values", reduction);
  issue(entry);
  ++rt.requestsStarted;
  if (!rt.freeRequests.empty()) {
    int64_t handle = rt.freeRequests.back();
    rt.freeRequests.pop_back();
    rt.requests[handle] = entry;
    rt.lastRequest = handle;
    return handle;
  }
  rt.requests.push_back(entry);
  rt.lastRequest = static_cast<int64_t>(rt.requests.size()) - 1;
  return rt.lastRequest;
}

template <typename T> T *data(DistMemRef1D *buffer) {
  return static_cast<T *>(buffer->aligned) + buffer->offset;
}

int groupSizeOf(int64_t commHandle) {
  int size = 1;
  check(MPI_Comm_size(static_cast<MPI_Comm>(commHandle), &size),
        "MPI_Comm_size failed");
  return size;
}

template <typename T>
int64_t start(DistMemRef1D *send, DistMemRef1D *recv, int64_t reduction,
              int64_t commHandle, MPI_Datatype type) {
  if (send->size != recv->size || send->stride != 1 || recv->stride != 1)
    fatal("iallreduce buffers differ in size or are strided", send->size);
  return startRequest<T>(recv, reduction, commHandle, type, [&](Request &e) {
    check(MPI_Iallreduce(data<T>(send), e.recv, static_cast<int>(send->size),
                         type, toMPI(reduction), e.comm, &e.request),
          "MPI_Iallreduce failed");
  });
}

template <typename T>
int64_t startAllGather(DistMemRef1D *send, DistMemRef1D *recv,
                       int64_t commHandle, MPI_Datatype type) {
  int size = groupSizeOf(commHandle);
  if (send->size * size != recv->size || send->stride != 1 || recv->stride != 1)
    fatal("all-gather buffers do not hold the group's blocks", recv->size);
  return startRequest<T>(recv, 0, commHandle, type, [&](Request &e) {
    int count = static_cast<int>(send->size);
    check(MPI_Iallgather(data<T>(send), count, type, e.recv, count, type,
                         e.comm, &e.request),
          "MPI_Iallgather failed");
  });
}

template <typename T>
int64_t startReduceScatter(DistMemRef1D *send, DistMemRef1D *recv,
                           int64_t reduction, int64_t commHandle,
                           MPI_Datatype type) {
  int size = groupSizeOf(commHandle);
  if (recv->size * size != send->size || send->stride != 1 || recv->stride != 1)
    fatal("reduce-scatter buffers do not hold the group's blocks", send->size);
  return startRequest<T>(recv, reduction, commHandle, type, [&](Request &e) {
    check(MPI_Ireduce_scatter_block(data<T>(send), e.recv,
                                    static_cast<int>(recv->size), type,
                                    toMPI(reduction), e.comm, &e.request),
          "MPI_Ireduce_scatter_block failed");
  });
}

template <typename T>
int64_t startAllToAll(DistMemRef1D *send, DistMemRef1D *recv,
                      int64_t commHandle, MPI_Datatype type) {
  int size = groupSizeOf(commHandle);
  if (send->size != recv->size || send->size % size != 0 || send->stride != 1 ||
      recv->stride != 1)
    fatal("all-to-all buffers do not hold the group's blocks", send->size);
  return startRequest<T>(recv, 0, commHandle, type, [&](Request &e) {
    int block = static_cast<int>(send->size / size);
    check(MPI_Ialltoall(data<T>(send), block, type, e.recv, block, type, e.comm,
                        &e.request),
          "MPI_Ialltoall failed");
  });
}

/// Whether this run records a timeline (DIST_RUN_EVENTS_DIR is set).
bool eventsOn() {
  static const bool on = [] {
    const char *dir = std::getenv("DIST_RUN_EVENTS_DIR");
    return dir && *dir;
  }();
  return on;
}

double nowMicros() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/// Ends the compute interval running, if any, at `t`.
void closeCompute(double t) {
  Runtime &rt = runtime();
  if (rt.computeBegin >= 0 && t > rt.computeBegin)
    rt.events.push_back({"compute", "compute", 0, rt.computeBegin, t});
  rt.computeBegin = -1;
}

const char *streamName(int64_t stream) {
  switch (stream) {
  case 1:
    return "mp";
  case 2:
    return "dp";
  case 3:
    return "sharding";
  default:
    return "compute";
  }
}

/// The trace thread of an interval [begin, ...) of `stream`: stream * 100 +
/// the first lane whose last interval has ended by `begin`.
int64_t streamLane(int64_t stream, double begin, double end) {
  std::vector<double> &lanes = runtime().laneEnds[stream];
  size_t lane = 0;
  while (lane < lanes.size() && lanes[lane] > begin)
    ++lane;
  if (lane == lanes.size())
    lanes.push_back(end);
  else
    lanes[lane] = end;
  return stream * 100 + static_cast<int64_t>(lane);
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

/// Writes this process's timeline as a JSON array of Chrome trace events to
/// DIST_RUN_EVENTS_DIR/rank.R.json.
void writeEvents() {
  Runtime &rt = runtime();
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
  meta("thread_name", 0, "compute stream");
  for (auto &[stream, lanes] : rt.laneEnds)
    for (size_t lane = 0; lane < lanes.size(); ++lane)
      meta("thread_name", stream * 100 + static_cast<int64_t>(lane),
           std::string(streamName(stream)) + " stream" +
               (lane ? " (" + std::to_string(lane + 1) + ")" : ""));
  std::snprintf(buffer, sizeof(buffer),
                "{\"ph\": \"M\", \"name\": \"dist_collectives\", \"pid\": "
                "%d, \"tid\": 0, \"args\": {\"count\": %lld}}",
                rank, static_cast<long long>(rt.traced));
  out += buffer;
  for (const Event &event : rt.events) {
    out += ",\n{\"name\": ";
    appendJSONString(out, event.name);
    std::snprintf(buffer, sizeof(buffer),
                  ", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, "
                  "\"dur\": %.3f, \"pid\": %d, \"tid\": %lld}",
                  event.category, event.begin, event.end - event.begin, rank,
                  static_cast<long long>(event.tid));
    out += buffer;
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
/// The point-to-point tag of the message a process sends every other one
/// when it finishes the program with the collective check on (see
/// announceFinished); nothing else uses point-to-point on MPI_COMM_WORLD.
constexpr int kFinishedTag = 0x7d15;

/// The world ranks of the members of `group`, this process excluded.
std::vector<int> otherMembers(MPI_Comm group) {
  int size = 0, me = 0;
  MPI_Comm_size(group, &size);
  MPI_Comm_rank(group, &me);
  MPI_Group local, world;
  MPI_Comm_group(group, &local);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> ranks(size), worldRanks(size);
  for (int i = 0; i < size; ++i)
    ranks[i] = i;
  MPI_Group_translate_ranks(local, size, ranks.data(), world,
                            worldRanks.data());
  MPI_Group_free(&local);
  MPI_Group_free(&world);
  worldRanks.erase(worldRanks.begin() + me);
  return worldRanks;
}

/// The collective check's allreduce (max of `bounds`), which does not wait
/// for ever when a member of the group has finished the program instead:
/// while it is pending, the members' "finished" messages are looked for,
/// and one stops the program with a message that says so (a collective that
/// only some processes reach, which MPI would wait on until killed).
void awaitGroupCheck(int64_t bounds[4], MPI_Comm group, const char *site,
                     int64_t siteSize) {
  MPI_Request request;
  check(MPI_Iallreduce(MPI_IN_PLACE, bounds, 4, MPI_INT64_T, MPI_MAX, group,
                       &request),
        "MPI_Iallreduce (collective check) failed");
  std::vector<int> members;
  for (long polls = 0;; ++polls) {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE),
          "MPI_Test (collective check) failed");
    if (done)
      return;
    // Spin first (the check is short when the group agrees), then poll
    // gently: an oversubscribed machine needs the core for the others.
    if (polls < 2000)
      continue;
    if (members.empty())
      members = otherMembers(group);
    for (int member : members) {
      int arrived = 0;
      MPI_Status status;
      MPI_Iprobe(member, kFinishedTag, MPI_COMM_WORLD, &arrived, &status);
      if (!arrived)
        continue;
      long long collectives = 0;
      MPI_Recv(&collectives, 1, MPI_LONG_LONG, member, kFinishedTag,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      fatalf(
          "%s: rank %d, a member of its group, finished the program after %lld "
          "collectives without starting this one: the processes took "
          "different paths (a collective under control flow that depends "
          "on the process)",
          siteText(site, siteSize).c_str(), member, collectives);
    }
    ::usleep(polls < 20000 ? 10 : 200);
  }
}

/// Tells every other process that this one has finished, after how many
/// collectives, so that one still waiting in a collective check for it
/// stops instead of hanging; then takes the others' messages (each sends
/// them when it finishes), since an unmatched message makes UCX warn at
/// MPI_Finalize. A process that never finishes would hold MPI_Finalize up
/// anyway.
void announceFinished() {
  int size = 0, me = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  long long collectives = static_cast<long long>(runtime().traced);
  std::vector<MPI_Request> sends;
  for (int other = 0; other < size; ++other) {
    if (other == me)
      continue;
    sends.emplace_back();
    check(MPI_Isend(&collectives, 1, MPI_LONG_LONG, other, kFinishedTag,
                    MPI_COMM_WORLD, &sends.back()),
          "MPI_Isend (finished) failed");
  }
  for (int other = 0; other < size; ++other) {
    if (other == me)
      continue;
    long long theirs = 0;
    check(MPI_Recv(&theirs, 1, MPI_LONG_LONG, other, kFinishedTag,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "MPI_Recv (finished) failed");
  }
  check(MPI_Waitall(static_cast<int>(sends.size()), sends.data(),
                    MPI_STATUSES_IGNORE),
        "MPI_Waitall (finished) failed");
}
} // namespace

extern "C" {
void dist_check_world_size(int64_t expected) {
  // Right after MPI_Init: the timeline's first compute interval starts.
  if (eventsOn())
    runtime().computeBegin = nowMicros();
  int size = 0;
  check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size failed");
  if (size != expected)
    fatalf("the program was lowered for %lld processes (world-size) but "
           "runs on %d",
           static_cast<long long>(expected), size);
}

int64_t dist_comm_get(int64_t group, int64_t color, int64_t key) {
  Runtime &rt = runtime();
  if (group < 0 || group > (1 << 20))
    fatal("communicator group id out of range", group);
  if (static_cast<size_t>(group) >= rt.comms.size())
    rt.comms.resize(group + 1);
  Communicator &entry = rt.comms[group];
  if (entry.comm != MPI_COMM_NULL) {
    if (entry.color != color || entry.key != key)
      fatal("a communicator group was asked for with another color or key",
            group);
    return static_cast<int64_t>(entry.comm);
  }
  traceState("splitting MPI_COMM_WORLD for communicator group " +
             std::to_string(group) + " (color " + std::to_string(color) +
             ", key " + std::to_string(key) + ")");
  check(MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(color),
                       static_cast<int>(key), &entry.comm),
        "MPI_Comm_split failed");
  entry.color = color;
  entry.key = key;
  ++rt.commsCreated;
  return static_cast<int64_t>(entry.comm);
}

#define DIST_IALLREDUCE(SUFFIX, TYPE, MPI_TYPE)                                \
  int64_t _mlir_ciface_dist_iallreduce_##SUFFIX(                               \
      DistMemRef1D *send, DistMemRef1D *recv, int64_t reduction,               \
      int64_t comm) {                                                          \
    return start<TYPE>(send, recv, reduction, comm, MPI_TYPE);                 \
  }
DIST_IALLREDUCE(f32, float, MPI_FLOAT)
DIST_IALLREDUCE(f64, double, MPI_DOUBLE)
DIST_IALLREDUCE(i32, int32_t, MPI_INT32_T)
DIST_IALLREDUCE(i64, int64_t, MPI_INT64_T)
#undef DIST_IALLREDUCE

#define DIST_REDISTRIBUTE(SUFFIX, TYPE, MPI_TYPE)                              \
  int64_t _mlir_ciface_dist_iallgather_##SUFFIX(                               \
      DistMemRef1D *send, DistMemRef1D *recv, int64_t comm) {                  \
    return startAllGather<TYPE>(send, recv, comm, MPI_TYPE);                   \
  }                                                                            \
  int64_t _mlir_ciface_dist_ireduce_scatter_##SUFFIX(                          \
      DistMemRef1D *send, DistMemRef1D *recv, int64_t reduction,               \
      int64_t comm) {                                                          \
    return startReduceScatter<TYPE>(send, recv, reduction, comm, MPI_TYPE);    \
  }                                                                            \
  int64_t _mlir_ciface_dist_ialltoall_##SUFFIX(                                \
      DistMemRef1D *send, DistMemRef1D *recv, int64_t comm) {                  \
    return startAllToAll<TYPE>(send, recv, comm, MPI_TYPE);                    \
  }
DIST_REDISTRIBUTE(f32, float, MPI_FLOAT)
DIST_REDISTRIBUTE(f64, double, MPI_DOUBLE)
DIST_REDISTRIBUTE(i32, int32_t, MPI_INT32_T)
DIST_REDISTRIBUTE(i64, int64_t, MPI_INT64_T)
#undef DIST_REDISTRIBUTE

void dist_wait(int64_t handle) {
  if (handle == DIST_REQUEST_NONE)
    return;
  Runtime &rt = runtime();
  if (handle < 0 || static_cast<size_t>(handle) >= rt.requests.size() ||
      !rt.requests[handle].active)
    fatal("wait on an unknown or completed request", handle);
  Request &entry = rt.requests[handle];
  if (entry.site)
    traceState("waiting for collective #" + std::to_string(entry.traceNumber) +
               ": " + siteText(entry.site, entry.siteSize));
  double waitBegin = 0;
  if (entry.eventBegin >= 0) {
    waitBegin = nowMicros();
    closeCompute(waitBegin);
  }
  check(MPI_Wait(&entry.request, MPI_STATUS_IGNORE), "MPI_Wait failed");
  if (entry.average) {
    int size = 1;
    check(MPI_Comm_size(entry.comm, &size), "MPI_Comm_size failed");
    if (entry.type == MPI_FLOAT)
      divide<float>(entry.recv, entry.count, size);
    else
      divide<double>(entry.recv, entry.count, size);
  }
  if (entry.eventBegin >= 0) {
    double waitEnd = nowMicros();
    rt.events.push_back(
        {"wait " + entry.eventName, "wait", 0, waitBegin, waitEnd});
    rt.events.push_back({entry.eventName, "collective",
                         streamLane(entry.stream, entry.eventBegin, waitEnd),
                         entry.eventBegin, waitEnd});
    rt.computeBegin = waitEnd;
  }
  entry = Request();
  rt.freeRequests.push_back(handle);
  ++rt.requestsCompleted;
}

void dist_runtime_finalize(void) {
  Runtime &rt = runtime();
  // Said first: a process that waits for this one may stop the run while
  // this one takes the others' messages.
  traceState("finished after " + std::to_string(rt.traced) + " collectives");
  if (envFlag("DIST_RUNTIME_CHECK"))
    announceFinished();
  if (eventsOn())
    writeEvents();
  int64_t pending = rt.requestsStarted - rt.requestsCompleted;
  if (pending != 0)
    fatal("requests were never waited for", pending);
  int64_t freed = 0;
  for (Communicator &entry : rt.comms)
    if (entry.comm != MPI_COMM_NULL) {
      check(MPI_Comm_free(&entry.comm), "MPI_Comm_free failed");
      ++freed;
    }
  rt.comms.clear();
  rt.requests.clear();
  if (rt.traceFd >= 0) {
    ::close(rt.traceFd);
    rt.traceFd = -1;
  }
  rt.freeRequests.clear();
  const char *debug = std::getenv("DIST_RUNTIME_DEBUG");
  if (debug && debug[0] == '1') {
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr,
                 "dist runtime: rank %d: %lld communicators created, %lld "
                 "freed; %lld requests started, %lld completed\n",
                 rank, static_cast<long long>(rt.commsCreated),
                 static_cast<long long>(freed),
                 static_cast<long long>(rt.requestsStarted),
                 static_cast<long long>(rt.requestsCompleted));
  }
}

void _mlir_ciface_dist_index_error(DistMemRef1D *site, int64_t id,
                                   int64_t rows) {
  std::string where = siteText(
      static_cast<const char *>(site->aligned) + site->offset, site->size);
  fatalf("%s: id %lld is outside the table's rows [0, %lld)", where.c_str(),
         static_cast<long long>(id), static_cast<long long>(rows));
}

int64_t dist_random_seed(int64_t site) {
  uint64_t call = runtime().seedCalls[site]++;
  return static_cast<int64_t>(
      mix(mix(runSeed() ^ mix(static_cast<uint64_t>(site))) + call));
}

void _mlir_ciface_dist_trace_collective(DistMemRef1D *site, int64_t signature,
                                        int64_t count, int64_t stream,
                                        int64_t comm) {
  Runtime &rt = runtime();
  const char *text = static_cast<const char *>(site->aligned) + site->offset;
  if (eventsOn()) {
    // The group check below, if on, counts as part of the collective.
    double t = nowMicros();
    closeCompute(t);
    rt.pendingSite = siteText(text, site->size);
    rt.pendingStream = stream;
    rt.pendingBegin = t;
  }
  int64_t number = rt.traced++;
  rt.lastSite = text;
  rt.lastSiteSize = site->size;
  traceState("last entered collective #" + std::to_string(number) + ": " +
             siteText(text, site->size));
  if (!envFlag("DIST_RUNTIME_CHECK"))
    return;
  // One max-allreduce of (x, -x) gives every member the group's maximum and
  // minimum of each.
  int64_t bounds[4] = {signature, -signature, count, -count};
  MPI_Comm group = static_cast<MPI_Comm>(comm);
  awaitGroupCheck(bounds, group, text, site->size);
  if (bounds[0] == -bounds[1] && bounds[2] == -bounds[3])
    return;
  char message[1024];
  std::snprintf(message, sizeof(message),
                "%s: the processes of its group do not all start this "
                "collective here (element counts %lld to %lld)",
                siteText(text, site->size).c_str(),
                static_cast<long long>(-bounds[3]),
                static_cast<long long>(bounds[2]));
  traceState(std::string("stopped the program: ") + message);
  std::fprintf(stderr, "dist runtime: rank %d: %s\n", worldRank(), message);
  std::fflush(stderr);
  // Every member saw the mismatch and says where it stands before one of
  // them stops the program.
  MPI_Barrier(group);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

void _mlir_ciface_dist_trace_function(DistMemRef1D *name, int64_t begin) {
  if (!eventsOn())
    return;
  Runtime &rt = runtime();
  double t = nowMicros();
  closeCompute(t);
  rt.computeBegin = t;
  if (begin) {
    const char *text = static_cast<const char *>(name->aligned) + name->offset;
    rt.calls.emplace_back(siteText(text, name->size), t);
    return;
  }
  if (rt.calls.empty())
    fatalf("a traced function returned that was not entered");
  rt.events.push_back(
      {rt.calls.back().first, "function", 0, rt.calls.back().second, t});
  rt.calls.pop_back();
}

void dist_trace_collective_end(void) {
  if (!eventsOn())
    return;
  Runtime &rt = runtime();
  double t = nowMicros();
  if (rt.pendingStream == 0) {
    rt.events.push_back({rt.pendingSite, "collective", 0, rt.pendingBegin, t});
  } else {
    rt.events.push_back(
        {"issue " + rt.pendingSite, "issue", 0, rt.pendingBegin, t});
    if (rt.lastRequest >= 0 &&
        static_cast<size_t>(rt.lastRequest) < rt.requests.size()) {
      Request &request = rt.requests[rt.lastRequest];
      request.eventBegin = rt.pendingBegin;
      request.eventName = rt.pendingSite;
      request.stream = rt.pendingStream;
    }
  }
  rt.computeBegin = t;
}
}
