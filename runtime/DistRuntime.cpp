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

int64_t _mlir_ciface_dist_iallreduce_f32(MemRef1D<float> *send,
                                         MemRef1D<float> *recv, int64_t kind,
                                         int64_t comm) {
  return start(send, recv, kind, comm, MPI_FLOAT);
}

int64_t _mlir_ciface_dist_iallreduce_f64(MemRef1D<double> *send,
                                         MemRef1D<double> *recv, int64_t kind,
                                         int64_t comm) {
  return start(send, recv, kind, comm, MPI_DOUBLE);
}

int64_t _mlir_ciface_dist_iallreduce_i32(MemRef1D<int32_t> *send,
                                         MemRef1D<int32_t> *recv, int64_t kind,
                                         int64_t comm) {
  return start(send, recv, kind, comm, MPI_INT32_T);
}

int64_t _mlir_ciface_dist_iallreduce_i64(MemRef1D<int64_t> *send,
                                         MemRef1D<int64_t> *recv, int64_t kind,
                                         int64_t comm) {
  return start(send, recv, kind, comm, MPI_INT64_T);
}

void dist_wait(int64_t request) {
  check(MPI_Wait(&requests().at(request), MPI_STATUS_IGNORE), "MPI_Wait");
}
}
