//===- DistRuntime.cpp - communicators and non-blocking collectives -------===//
//
// The communicators and requests of include/dist/Runtime/DistRuntime.h (the
// trace, the collective check, run seeds and fatal errors are files of their
// own; see RuntimeSupport.h). Communicators live in a table indexed by the
// lowering's group ids, requests in a table indexed by the handles the
// lowered code passes around as plain integers; both are emptied by
// dist_runtime_finalize, so nothing MPI allocated outlives the program's
// MPI_Finalize.
//
//===----------------------------------------------------------------------===//

#include "dist/Runtime/DistRuntime.h"

#include "RuntimeSupport.h"

// The C interface is all the runtime uses.
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <vector>

// The lowering hands communicators over as the i64 that MLIR's MPI-to-LLVM
// conversion makes of an `!mpi.comm`, which holds MPICH's integer handle.
static_assert(std::is_integral<MPI_Comm>::value,
              "the runtime ABI assumes MPICH's integer communicator handles");

using namespace dist_runtime;

namespace {
struct Communicator {
  MPI_Comm comm = MPI_COMM_NULL;
  int64_t color = 0, key = 0;
};

/// A buffer the runtime owns, kept for the next request once its own is
/// done: a training step sends the same sizes every time.
struct SendBuffer {
  std::unique_ptr<unsigned char[]> bytes;
  size_t capacity = 0;
};

struct Request {
  MPI_Request request = MPI_REQUEST_NULL;
  bool active = false;
  // For DIST_REDUCE_AVG: what to divide once the data has arrived.
  bool average = false;
  void *recv = nullptr;
  int64_t count = 0;
  // What MPI sends: a copy of the caller's buffer, which the lowered code
  // may overwrite or free as soon as the start returns. Moved, never
  // copied, so that the pointer MPI holds stays valid.
  SendBuffer sendCopy;
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
  int64_t stream = DIST_STREAM_COMPUTE;
  // A receive: its wait is drawn, not its time in flight.
  bool receive = false;
};

struct Runtime {
  std::vector<Communicator> comms;
  std::vector<Request> requests;
  std::vector<int64_t> freeRequests;
  std::vector<SendBuffer> spareSendBuffers;
  int64_t commsCreated = 0, requestsStarted = 0, requestsCompleted = 0;
  // Calls of progress() (DIST_RUNTIME_PROGRESS=poll), for DIST_RUNTIME_DEBUG.
  int64_t progressCalls = 0;
  // The request started last (the trace gives it its timeline entry).
  int64_t lastRequest = -1;
};

Runtime &runtime() {
  static Runtime state;
  return state;
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
  Entered &e = entered();
  entry.traceNumber = e.count;
  entry.site = e.site;
  entry.siteSize = e.siteSize;
  e.site = nullptr;
  if (entry.average && !std::is_floating_point<T>::value)
    fatal("an avg reduction needs floating-point values", reduction);
  issue(entry);
  ++rt.requestsStarted;
  if (!rt.freeRequests.empty()) {
    int64_t handle = rt.freeRequests.back();
    rt.freeRequests.pop_back();
    rt.requests[handle] = std::move(entry);
    rt.lastRequest = handle;
    return handle;
  }
  rt.requests.push_back(std::move(entry));
  rt.lastRequest = static_cast<int64_t>(rt.requests.size()) - 1;
  return rt.lastRequest;
}

template <typename T> T *data(DistMemRef1D *buffer) {
  return static_cast<T *>(buffer->aligned) + buffer->offset;
}

/// A copy of `send`'s elements that `e` owns until its wait, in a spare
/// buffer when one is large enough.
template <typename T> const T *sendOf(DistMemRef1D *send, Request &e) {
  size_t bytes = static_cast<size_t>(send->size) * sizeof(T);
  std::vector<SendBuffer> &spares = runtime().spareSendBuffers;
  auto fits =
      std::find_if(spares.begin(), spares.end(),
                   [&](const SendBuffer &b) { return b.capacity >= bytes; });
  if (fits != spares.end()) {
    e.sendCopy = std::move(*fits);
    spares.erase(fits);
  } else {
    e.sendCopy.bytes.reset(new unsigned char[bytes ? bytes : 1]);
    e.sendCopy.capacity = bytes;
  }
  if (bytes)
    std::memcpy(e.sendCopy.bytes.get(), data<T>(send), bytes);
  return reinterpret_cast<const T *>(e.sendCopy.bytes.get());
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
    check(MPI_Iallreduce(sendOf<T>(send, e), e.recv,
                         static_cast<int>(send->size), type, toMPI(reduction),
                         e.comm, &e.request),
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
    check(MPI_Iallgather(sendOf<T>(send, e), count, type, e.recv, count, type,
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
    check(MPI_Ireduce_scatter_block(sendOf<T>(send, e), e.recv,
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
    check(MPI_Ialltoall(sendOf<T>(send, e), block, type, e.recv, block, type,
                        e.comm, &e.request),
          "MPI_Ialltoall failed");
  });
}

} // namespace

extern "C" {
void dist_check_world_size(int64_t expected) {
  // Right after MPI_Init: the timeline's first compute interval starts.
  if (trace::eventsOn())
    trace::startCompute(trace::nowMicros());
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
  trace::state("splitting MPI_COMM_WORLD for communicator group " +
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

} // extern "C"

namespace {
template <typename T>
void sendTo(DistMemRef1D *send, int64_t peer, int64_t tag, int64_t commHandle,
            MPI_Datatype type) {
  static const bool synchronous = [] {
    const char *value = std::getenv("DIST_RUNTIME_SSEND");
    return value && std::string(value) == "1";
  }();
  if (send->size > 0 && send->stride != 1)
    fatal("a send buffer must be contiguous", send->stride);
  if (send->size > INT32_MAX)
    fatal("a transfer of more than 2^31 - 1 elements", send->size);
  auto comm = static_cast<MPI_Comm>(commHandle);
  std::string what =
      "send to " + std::to_string(peer) + " tag " + std::to_string(tag);
  trace::state(what);
  double begin = 0;
  if (trace::eventsOn()) {
    begin = trace::nowMicros();
    trace::closeCompute(begin);
  }
  const T *values = data<T>(send);
  int count = static_cast<int>(send->size);
  if (synchronous)
    check(MPI_Ssend(values, count, type, static_cast<int>(peer),
                    static_cast<int>(tag), comm),
          "MPI_Ssend failed");
  else
    check(MPI_Send(values, count, type, static_cast<int>(peer),
                   static_cast<int>(tag), comm),
          "MPI_Send failed");
  if (trace::eventsOn()) {
    double end = trace::nowMicros();
    // Drawn as a wait: the compute stream stands until the peer receives.
    trace::record(what, "wait", 0, begin, end, what);
    trace::startCompute(end);
  }
}

template <typename T>
int64_t irecvFrom(DistMemRef1D *recv, int64_t peer, int64_t tag,
                  int64_t commHandle, MPI_Datatype type) {
  if (recv->size > INT32_MAX)
    fatal("a transfer of more than 2^31 - 1 elements", recv->size);
  return startRequest<T>(recv, 0, commHandle, type, [&](Request &e) {
    e.receive = true;
    e.eventName =
        "recv from " + std::to_string(peer) + " tag " + std::to_string(tag);
    if (trace::eventsOn())
      e.eventBegin = trace::nowMicros();
    check(MPI_Irecv(e.recv, static_cast<int>(e.count), type,
                    static_cast<int>(peer), static_cast<int>(tag), e.comm,
                    &e.request),
          "MPI_Irecv failed");
  });
}
} // namespace

extern "C" {
#define DIST_TRANSFER(SUFFIX, TYPE, MPI_TYPE)                                  \
  void _mlir_ciface_dist_send_##SUFFIX(DistMemRef1D *send, int64_t peer,       \
                                       int64_t tag, int64_t comm) {            \
    sendTo<TYPE>(send, peer, tag, comm, MPI_TYPE);                             \
  }                                                                            \
  int64_t _mlir_ciface_dist_irecv_##SUFFIX(DistMemRef1D *recv, int64_t peer,   \
                                           int64_t tag, int64_t comm) {        \
    return irecvFrom<TYPE>(recv, peer, tag, comm, MPI_TYPE);                   \
  }
DIST_TRANSFER(f32, float, MPI_FLOAT)
DIST_TRANSFER(f64, double, MPI_DOUBLE)
DIST_TRANSFER(i32, int32_t, MPI_INT32_T)
DIST_TRANSFER(i64, int64_t, MPI_INT64_T)
#undef DIST_TRANSFER
} // extern "C"

namespace {
template <typename T> void waitFor(int64_t handle, DistMemRef1D *recv) {
  if (handle == DIST_REQUEST_NONE)
    return;
  Runtime &rt = runtime();
  if (handle < 0 || static_cast<size_t>(handle) >= rt.requests.size() ||
      !rt.requests[handle].active)
    fatal("wait on an unknown or completed request", handle);
  Request &entry = rt.requests[handle];
  if (entry.recv != data<T>(recv) || entry.count != recv->size)
    fatal("wait with another receive buffer than the request was started "
          "with",
          handle);
  if (entry.site)
    trace::state("waiting for collective #" +
                 std::to_string(entry.traceNumber) + ": " +
                 siteText(entry.site, entry.siteSize));
  double waitBegin = 0;
  if (entry.eventBegin >= 0) {
    waitBegin = trace::nowMicros();
    trace::closeCompute(waitBegin);
  }
  MPI_Status status;
  check(MPI_Wait(&entry.request, &status), "MPI_Wait failed");
  if (entry.receive) {
    // A longer message than the buffer stops MPI itself (a truncation). A
    // shorter one would leave the rest of the buffer as it was: two
    // programs that disagree on a transfer (the compiler checks one
    // program's sends against its receives) stop here instead.
    int received = 0;
    check(MPI_Get_count(&status, entry.type, &received),
          "MPI_Get_count failed");
    if (received != entry.count)
      fatalf("%s: received %d elements, expected %lld", entry.eventName.c_str(),
             received, static_cast<long long>(entry.count));
  }
  if (entry.average) {
    int size = 1;
    check(MPI_Comm_size(entry.comm, &size), "MPI_Comm_size failed");
    if (entry.type == MPI_FLOAT)
      divide<float>(entry.recv, entry.count, size);
    else
      divide<double>(entry.recv, entry.count, size);
  }
  if (entry.eventBegin >= 0) {
    double waitEnd = trace::nowMicros();
    trace::record("wait " + entry.eventName, "wait", 0, waitBegin, waitEnd,
                  entry.eventName);
    if (!entry.receive)
      trace::record(entry.eventName, "collective",
                    trace::streamLane(entry.stream, entry.eventBegin, waitEnd),
                    entry.eventBegin, waitEnd, entry.eventName);
    trace::startCompute(waitEnd);
  }
  rt.spareSendBuffers.push_back(std::move(entry.sendCopy));
  entry = Request();
  rt.freeRequests.push_back(handle);
  ++rt.requestsCompleted;
}
} // namespace

extern "C" {
#define DIST_WAIT(SUFFIX, TYPE)                                                \
  void _mlir_ciface_dist_wait_##SUFFIX(int64_t request, DistMemRef1D *recv) {  \
    waitFor<TYPE>(request, recv);                                              \
  }
DIST_WAIT(f32, float)
DIST_WAIT(f64, double)
DIST_WAIT(i32, int32_t)
DIST_WAIT(i64, int64_t)
#undef DIST_WAIT

} // extern "C"

namespace {
/// With DIST_RUNTIME_SKIP_FINALIZE=1: once every process has finished (a
/// barrier), this one exits with status 0 instead of returning to
/// MPI_Finalize. UCX's TCP transport may stop progressing while it flushes
/// an endpoint at finalize, and one process then waits forever for a peer
/// that has gone on to the launcher's final barrier (openucx/ucx#8738;
/// about one run in ten on the emulated cluster). Past the barrier every
/// process's work and output are complete: there is nothing left to
/// flush but the output streams.
void exitInsteadOfFinalize() {
  if (!envFlag("DIST_RUNTIME_SKIP_FINALIZE"))
    return;
  check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier (before exit) failed");
  std::fflush(nullptr);
  std::cout.flush();
  std::cerr.flush();
  _exit(0);
}
} // namespace

extern "C" {
void dist_runtime_finalize(void) {
  Runtime &rt = runtime();
  // Said first: a process that waits for this one may stop the run while
  // this one takes the others' messages.
  trace::state("finished after " + std::to_string(entered().count) +
               " collectives");
  if (envFlag("DIST_RUNTIME_CHECK"))
    announceFinished();
  if (trace::eventsOn())
    trace::writeEvents();
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
  rt.spareSendBuffers.clear();
  trace::closeState();
  rt.freeRequests.clear();
  const char *debug = std::getenv("DIST_RUNTIME_DEBUG");
  if (debug && debug[0] == '1') {
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr,
                 "dist runtime: rank %d: %lld communicators created, %lld "
                 "freed; %lld requests started, %lld completed; %lld "
                 "progress calls\n",
                 rank, static_cast<long long>(rt.commsCreated),
                 static_cast<long long>(freed),
                 static_cast<long long>(rt.requestsStarted),
                 static_cast<long long>(rt.requestsCompleted),
                 static_cast<long long>(rt.progressCalls));
  }
  exitInsteadOfFinalize();
}

void _mlir_ciface_dist_index_error(DistMemRef1D *site, int64_t id,
                                   int64_t rows) {
  std::string where = siteText(
      static_cast<const char *>(site->aligned) + site->offset, site->size);
  fatalf("%s: id %lld is outside the table's rows [0, %lld)", where.c_str(),
         static_cast<long long>(id), static_cast<long long>(rows));
}
}

bool dist_runtime::requestsInFlight() {
  Runtime &rt = runtime();
  return rt.requestsStarted != rt.requestsCompleted;
}

bool dist_runtime::progressPolls() {
  // Off by default: on this machine's shared memory the cut product costs
  // more than the overlap gains (docs/benchmarks.md, "Progress").
  static const bool polls = [] {
    const char *value = std::getenv("DIST_RUNTIME_PROGRESS");
    if (!value || !*value || std::string(value) == "none")
      return false;
    if (std::string(value) == "poll")
      return true;
    fatalf("DIST_RUNTIME_PROGRESS=%s: expected poll or none", value);
  }();
  return polls;
}

void dist_runtime::progress() {
  // A probe runs MPICH's progress engine, which moves every request's data,
  // without completing a request (the wait still gets its status).
  ++runtime().progressCalls;
  int flag = 0;
  check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                   MPI_STATUS_IGNORE),
        "MPI_Iprobe (progress) failed");
}

void dist_runtime::noteIssued(const std::string &site, int64_t stream,
                              double begin) {
  Runtime &rt = runtime();
  if (rt.lastRequest < 0 ||
      static_cast<size_t>(rt.lastRequest) >= rt.requests.size())
    return;
  Request &request = rt.requests[rt.lastRequest];
  request.eventBegin = begin;
  request.eventName = site;
  request.stream = stream;
}
