/*===- DistRuntime.h - the ABI between lowered dist code and the runtime -===*\
|*                                                                            *|
|* libdist_runtime implements what MLIR 22's mpi dialect cannot say: process  *|
|* group communicators that are freed again (there is no mpi.comm_free), and  *|
|* non-blocking allreduces with their completion (no mpi.iallreduce). The     *|
|* --convert-dist-to-mpi lowering declares these functions with matching      *|
|* MLIR types (given next to each prototype) and calls them; the runtime      *|
|* compiles against this header, so the two sides cannot drift apart.         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef DIST_RUNTIME_DISTRUNTIME_H
#define DIST_RUNTIME_DISTRUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Reductions, by name. The values are part of the ABI and never reordered;
 * they are unrelated to the order of the dialect's ReductionKind enum. */
enum DistReduction {
  DIST_REDUCE_SUM = 1,
  DIST_REDUCE_MAX = 2,
  DIST_REDUCE_MIN = 3,
  DIST_REDUCE_PROD = 4,
  /* A sum divided by the group size when the request completes. */
  DIST_REDUCE_AVG = 5
};

/* A request handle that is already complete: dist_wait returns at once. */
#define DIST_REQUEST_NONE ((int64_t)-1)

/* The descriptor of a `memref<?xT>` as MLIR's C interface passes it. */
typedef struct DistMemRef1D {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
} DistMemRef1D;

/* The communicator of this process's group `group`: the processes that
 * pass the same `color`, ordered by `key` (MPI_Comm_split of
 * MPI_COMM_WORLD). The first call for a group splits (every process must
 * make it, in the same order); later calls return the cached communicator.
 * The result is an MPI_Comm handle, usable as an `!mpi.comm`.
 *   MLIR: (i64, i64, i64) -> !mpi.comm */
int64_t dist_comm_get(int64_t group, int64_t color, int64_t key);

/* Starts a non-blocking allreduce of `send` into `recv` (same size) over
 * `comm` and returns its request handle. One entry point per element type.
 *   MLIR: (memref<?xT>, memref<?xT>, i64, !mpi.comm) -> i64,
 *         with llvm.emit_c_interface */
int64_t _mlir_ciface_dist_iallreduce_f32(DistMemRef1D *send, DistMemRef1D *recv,
                                         int64_t reduction, int64_t comm);
int64_t _mlir_ciface_dist_iallreduce_f64(DistMemRef1D *send, DistMemRef1D *recv,
                                         int64_t reduction, int64_t comm);
int64_t _mlir_ciface_dist_iallreduce_i32(DistMemRef1D *send, DistMemRef1D *recv,
                                         int64_t reduction, int64_t comm);
int64_t _mlir_ciface_dist_iallreduce_i64(DistMemRef1D *send, DistMemRef1D *recv,
                                         int64_t reduction, int64_t comm);

/* Completes `request` (DIST_REQUEST_NONE: nothing to do); for
 * DIST_REDUCE_AVG, divides the received values by the group size.
 *   MLIR: (i64) -> () */
void dist_wait(int64_t request);

/* Frees every communicator and checks that no request is pending. Called
 * right before MPI_Finalize. With DIST_RUNTIME_DEBUG=1 in the environment it
 * prints what it freed to stderr.
 *   MLIR: () -> () */
void dist_runtime_finalize(void);

#ifdef __cplusplus
}
#endif

/* The symbol names the lowering declares. */
#define DIST_RUNTIME_COMM_GET "dist_comm_get"
#define DIST_RUNTIME_IALLREDUCE_PREFIX "dist_iallreduce_"
#define DIST_RUNTIME_WAIT "dist_wait"
#define DIST_RUNTIME_FINALIZE "dist_runtime_finalize"

#endif /* DIST_RUNTIME_DISTRUNTIME_H */
