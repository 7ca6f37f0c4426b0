//===- DistRuntime.cpp - non-blocking collectives for lowered dist code ---===//
//
// MLIR 22's mpi dialect has no non-blocking allreduce, and its isend/irecv/
// wait do not lower to LLVM. Asynchronous dist collectives therefore call
// these functions: the start returns a request handle, dist_wait completes
// it. Communicators and requests live in tables indexed by the handles, so
// the lowered code passes plain integers.
//
//===----------------------------------------------------------------------===//

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {
template <typename T> struct MemRef1D {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
};

std::vector<MPI_Comm> &comms() {
  static std::vector<MPI_Comm> table;
  return table;
}

std::vector<MPI_Request> &requests() {
  static std::vector<MPI_Request> table;
  return table;
}

void check(int status, const char *what) {
  if (status != MPI_SUCCESS) {
    std::fprintf(stderr, "dist runtime: %s failed (%d)\n", what, status);
    std::abort();
  }
}

/// The kinds of dist.allreduce, in ReductionKind order (avg is a sum the
/// caller scales).
MPI_Op reduction(int64_t kind) {
  switch (kind) {
  case 1:
    return MPI_MAX;
  case 2:
    return MPI_MIN;
  case 3:
    return MPI_PROD;
  default:
    return MPI_SUM;
  }
}

template <typename T>
int64_t start(MemRef1D<T> *send, MemRef1D<T> *recv, int64_t kind,
              int64_t comm, MPI_Datatype type) {
  MPI_Request request;
  check(MPI_Iallreduce(send->aligned + send->offset,
                       recv->aligned + recv->offset, int(send->size), type,
                       reduction(kind), comms().at(comm), &request),
        "MPI_Iallreduce");
  requests().push_back(request);
  return int64_t(requests().size()) - 1;
}
} // namespace

extern "C" {
/// MPI_Comm_split of MPI_COMM_WORLD; every process calls it in the same order.
int64_t dist_comm_split(int64_t color, int64_t key) {
  MPI_Comm comm;
  check(MPI_Comm_split(MPI_COMM_WORLD, int(color), int(key), &comm),
        "MPI_Comm_split");
  comms().push_back(comm);
  return int64_t(comms().size()) - 1;
}

// One C entry point per element type: the lowering calls
// dist_iallreduce_<suffix> with C-interface memref descriptors.
#define DIST_IALLREDUCE(SUFFIX, TYPE, MPI_TYPE)                                \
  int64_t _mlir_ciface_dist_iallreduce_##SUFFIX(                               \
      MemRef1D<TYPE> *send, MemRef1D<TYPE> *recv, int64_t kind,              \
      int64_t comm) {                                                          \
    return start(send, recv, kind, comm, MPI_TYPE);                            \
  }
DIST_IALLREDUCE(f32, float, MPI_FLOAT)
DIST_IALLREDUCE(f64, double, MPI_DOUBLE)
DIST_IALLREDUCE(i32, int32_t, MPI_INT32_T)
DIST_IALLREDUCE(i64, int64_t, MPI_INT64_T)
#undef DIST_IALLREDUCE

void dist_wait(int64_t request) {
  check(MPI_Wait(&requests().at(request), MPI_STATUS_IGNORE), "MPI_Wait");
}
}
