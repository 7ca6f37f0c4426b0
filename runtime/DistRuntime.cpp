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

#include <cstdio>
#include <cstdlib>
#include <type_traits>
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
};

struct Runtime {
  std::vector<Communicator> comms;
  std::vector<Request> requests;
  std::vector<int64_t> freeRequests;
  int64_t commsCreated = 0, requestsStarted = 0, requestsCompleted = 0;
};

Runtime &runtime() {
  static Runtime state;
  return state;
}

[[noreturn]] void fatal(const char *message, long long value) {
  int rank = -1;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "dist runtime: rank %d: %s (%lld)\n", rank, message,
               value);
  std::fflush(stderr);
  if (initialized)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
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

template <typename T>
int64_t start(DistMemRef1D *send, DistMemRef1D *recv, int64_t reduction,
              int64_t commHandle, MPI_Datatype type) {
  if (send->size != recv->size || send->stride != 1 || recv->stride != 1)
    fatal("iallreduce buffers differ in size or are strided", send->size);
  Runtime &rt = runtime();
  Request entry;
  entry.active = true;
  entry.average = reduction == DIST_REDUCE_AVG;
  entry.recv = static_cast<T *>(recv->aligned) + recv->offset;
  entry.count = recv->size;
  entry.type = type;
  entry.comm = static_cast<MPI_Comm>(commHandle);
  if (entry.average && !std::is_floating_point<T>::value)
    fatal("an avg allreduce needs floating-point values", reduction);
  check(MPI_Iallreduce(static_cast<T *>(send->aligned) + send->offset,
                       entry.recv, static_cast<int>(send->size), type,
                       toMPI(reduction), entry.comm, &entry.request),
        "MPI_Iallreduce failed");
  ++rt.requestsStarted;
  if (!rt.freeRequests.empty()) {
    int64_t handle = rt.freeRequests.back();
    rt.freeRequests.pop_back();
    rt.requests[handle] = entry;
    return handle;
  }
  rt.requests.push_back(entry);
  return static_cast<int64_t>(rt.requests.size()) - 1;
}
} // namespace

extern "C" {
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

void dist_wait(int64_t handle) {
  if (handle == DIST_REQUEST_NONE)
    return;
  Runtime &rt = runtime();
  if (handle < 0 || static_cast<size_t>(handle) >= rt.requests.size() ||
      !rt.requests[handle].active)
    fatal("wait on an unknown or completed request", handle);
  Request &entry = rt.requests[handle];
  check(MPI_Wait(&entry.request, MPI_STATUS_IGNORE), "MPI_Wait failed");
  if (entry.average) {
    int size = 1;
    check(MPI_Comm_size(entry.comm, &size), "MPI_Comm_size failed");
    if (entry.type == MPI_FLOAT)
      divide<float>(entry.recv, entry.count, size);
    else
      divide<double>(entry.recv, entry.count, size);
  }
  entry = Request();
  rt.freeRequests.push_back(handle);
  ++rt.requestsCompleted;
}

void dist_runtime_finalize(void) {
  Runtime &rt = runtime();
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
}
