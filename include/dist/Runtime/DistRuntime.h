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

/* The stream a traced collective is issued on, by number. The values are
 * part of the ABI and equal the dialect's StreamKind values (the lowering
 * checks that at compile time); names are the IR's spellings. */
enum DistStream {
  DIST_STREAM_COMPUTE = 0, /* "compute": a blocking collective */
  DIST_STREAM_MP = 1,      /* "mp" */
  DIST_STREAM_DP = 2,      /* "dp" */
  DIST_STREAM_SHARDING = 3 /* "sharding" */
};
#define DIST_NUM_STREAMS 4

/* A request handle that is already complete: dist_wait_* returns at once. */
#define DIST_REQUEST_NONE ((int64_t)-1)

/* The descriptor of a `memref<?xT>` as MLIR's C interface passes it. */
typedef struct DistMemRef1D {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
} DistMemRef1D;

/* The descriptor of a `memref<?x?xT, strided<[?, ?], offset: ?>>` as MLIR's
 * C interface passes it. */
typedef struct DistMemRef2D {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
} DistMemRef2D;

/* The communicator of this process's group `group`: the processes that
 * pass the same `color`, ordered by `key` (MPI_Comm_split of
 * MPI_COMM_WORLD). The first call for a group splits (every process must
 * make it, in the same order); later calls return the cached communicator.
 * The result is an MPI_Comm handle, usable as an `!mpi.comm`.
 *   MLIR: (i64, i64, i64) -> !mpi.comm */
int64_t dist_comm_get(int64_t group, int64_t color, int64_t key);

/* Starts a non-blocking allreduce of `send` into `recv` (same size) over
 * `comm` and returns its request handle. One entry point per element type.
 * Every start copies `send` first (into a buffer kept for the next start):
 * the caller may reuse or free it as soon as the call returns. `recv` is
 * written until the request's wait, which names it again, so that the
 * lowered code keeps it alive until then.
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

/* The redistributions, non-blocking, with the request of the allreduce:
 * - all-gather: `recv` (group size x `send`'s size) gets every member's
 *   `send`, in group order;
 * - reduce-scatter: `send` holds one block per member, in group order; the
 *   reduction of the members' block q is `recv` (one block) on member q;
 * - all-to-all: block q of `send` goes to member q, which receives it as its
 *   block p (p: the sender's position); `send` and `recv` have one size.
 *   MLIR: (memref<?xT>, memref<?xT>[, i64 reduction], !mpi.comm) -> i64,
 *         with llvm.emit_c_interface */
#define DIST_REDISTRIBUTE_DECLS(SUFFIX)                                        \
  int64_t _mlir_ciface_dist_iallgather_##SUFFIX(                               \
      DistMemRef1D *send, DistMemRef1D *recv, int64_t comm);                   \
  int64_t _mlir_ciface_dist_ireduce_scatter_##SUFFIX(                          \
      DistMemRef1D *send, DistMemRef1D *recv, int64_t reduction,               \
      int64_t comm);                                                           \
  int64_t _mlir_ciface_dist_ialltoall_##SUFFIX(                                \
      DistMemRef1D *send, DistMemRef1D *recv, int64_t comm);
DIST_REDISTRIBUTE_DECLS(f32)
DIST_REDISTRIBUTE_DECLS(f64)
DIST_REDISTRIBUTE_DECLS(i32)
DIST_REDISTRIBUTE_DECLS(i64)
#undef DIST_REDISTRIBUTE_DECLS

/* Completes `request` (DIST_REQUEST_NONE: nothing to do), whose receive
 * buffer is `recv` (another buffer stops the program with a message); for
 * DIST_REDUCE_AVG, divides the received values by the group size.
 *   MLIR: (i64, memref<?xT>) -> (), with llvm.emit_c_interface */
void _mlir_ciface_dist_wait_f32(int64_t request, DistMemRef1D *recv);
void _mlir_ciface_dist_wait_f64(int64_t request, DistMemRef1D *recv);
void _mlir_ciface_dist_wait_i32(int64_t request, DistMemRef1D *recv);
void _mlir_ciface_dist_wait_i64(int64_t request, DistMemRef1D *recv);

/* Point-to-point transfers between pipeline stages (dist.send, dist.recv).
 * `peer` is the other process's rank in `comm` (the group along the
 * pipeline axis, ordered by coordinate), `tag` the message's tag.
 * dist_send_* blocks until MPI may reuse `send`; with DIST_RUNTIME_SSEND=1
 * in the environment it uses MPI_Ssend, which returns only once the
 * receive is posted (the rendezvous the compile-time check assumes; the
 * tests run with it to expose an order that only buffering makes work).
 * dist_irecv_* posts a receive into `recv` and returns its request, which
 * dist_wait_* completes; a message of another length than `recv` stops
 * the program (a shorter one with the transfer named, a longer one in MPI).
 *   MLIR: (memref<?xT>, i64, i64, !mpi.comm) -> () and
 *         (memref<?xT>, i64, i64, !mpi.comm) -> i64,
 *         with llvm.emit_c_interface */
#define DIST_TRANSFER_DECLS(SUFFIX)                                            \
  void _mlir_ciface_dist_send_##SUFFIX(DistMemRef1D *send, int64_t peer,       \
                                       int64_t tag, int64_t comm);             \
  int64_t _mlir_ciface_dist_irecv_##SUFFIX(DistMemRef1D *recv, int64_t peer,   \
                                           int64_t tag, int64_t comm);
DIST_TRANSFER_DECLS(f32)
DIST_TRANSFER_DECLS(f64)
DIST_TRANSFER_DECLS(i32)
DIST_TRANSFER_DECLS(i64)
#undef DIST_TRANSFER_DECLS

/* Stops every process with a message unless MPI_COMM_WORLD has `expected`
 * processes: the program was lowered for that many (world-size), and on
 * another count its meshes would not match the processes. Called right after
 * MPI_Init by the entry of a program lowered with world-size set.
 *   MLIR: (i64) -> () */
void dist_check_world_size(int64_t expected);

/* Frees every communicator and checks that no request is pending. Called
 * right before MPI_Finalize. With DIST_RUNTIME_DEBUG=1 in the environment it
 * prints what it freed to stderr. With DIST_RUNTIME_SKIP_FINALIZE=1, once
 * every process has got here (a barrier over MPI_COMM_WORLD) it exits with
 * status 0 and MPI_Finalize is not called (UCX's TCP transport can hang
 * there).
 *   MLIR: () -> () */
void dist_runtime_finalize(void);

/* Stops every process with a message when a lookup finds an id outside
 * [0, rows): `site` (the bytes of a `memref<?xi8>`, no NUL) says where, as
 * "file:line:col: op-name". Called by the lowered embedding ops; does not
 * return.
 *   MLIR: (memref<?xi8>, i64, i64) -> (), with llvm.emit_c_interface */
void _mlir_ciface_dist_index_error(DistMemRef1D *site, int64_t id,
                                   int64_t rows);

/* The seed of an unseeded random op (`dist.seed 0`, or a dropout without a
 * seed): a hash of the run seed (DIST_RUN_SEED in the environment, a decimal
 * number; 0 when unset), of `site` (the op) and of how many times this
 * process asked for `site` before. Every process of an SPMD program makes
 * the same calls, so replicas agree; different ops and different calls of
 * one op get different seeds.
 *   MLIR: (i64) -> i64 */
int64_t dist_random_seed(int64_t site);

/* Called before every collective that communicates when the lowering traces
 * them (--convert-dist-to-mpi=trace-collectives=1). `site` describes the
 * collective ("file:line:col: dist.allreduce sum of 32 x f32 over mesh axes
 * [0]"), `signature` hashes what it computes and `count` is its element
 * count. With DIST_RUN_TRACE_DIR set, the runtime keeps the last collective
 * (or communicator split) each process entered in DIR/rank.R, a line that
 * is rewritten in place; with DIST_RUNTIME_CHECK=1, it first checks over
 * `comm` that every process of the group starts a collective of the same
 * signature and count, and stops the program with a message when not.
 * `stream` is DIST_STREAM_COMPUTE for a blocking collective, else the
 * DistStream it is issued on. With DIST_RUN_EVENTS_DIR set, the
 * runtime also records a timeline (see dist_trace_collective_end).
 *   MLIR: (memref<?xi8>, i64, i64, i64, !mpi.comm) -> (),
 *         with llvm.emit_c_interface */
void _mlir_ciface_dist_trace_collective(DistMemRef1D *site, int64_t signature,
                                        int64_t count, int64_t stream,
                                        int64_t comm);

/* Called right after the collective traced last was issued (blocking: has
 * completed), when the lowering records events
 * (--convert-dist-to-mpi=trace-events=1). With DIST_RUN_EVENTS_DIR set, each
 * process writes its timeline to DIR/rank.R.json at dist_runtime_finalize:
 * Chrome trace events for the compute between collectives, each blocking
 * collective, each issue and wait, and each asynchronous collective in
 * flight on its stream.
 *   MLIR: () -> () */
void dist_trace_collective_end(void);

/* Called at the start (begin = 1) and before each return (begin = 0) of
 * every function with a body when the lowering records events: the timeline
 * gets a "function" interval per call on the compute stream, named `name`,
 * and the compute intervals end at its ends, so that they nest in it.
 * --dist-overlap-report=measured-trace=FILE compares a function's intervals
 * with its estimate.
 *   MLIR: (memref<?xi8>, i64) -> (), with llvm.emit_c_interface */
void _mlir_ciface_dist_trace_function(DistMemRef1D *name, int64_t begin);

/* c = a * b (accumulate = 0) or c += a * b (accumulate = 1), with `a`
 * M x K, `b` K x N and `c` M x N, each with any strides (a copy makes a
 * layout BLAS cannot take contiguous; `c` must not overlap `a` or `b`).
 * Built with OpenBLAS, a cblas_sgemm/cblas_dgemm on one thread unless
 * OPENBLAS_NUM_THREADS or OMP_NUM_THREADS is set (an MPI process per core
 * is the usual run); without it, a loop nest. Sizes that do not agree stop
 * the program with a message. --dist-contractions-to-blas calls these.
 *   MLIR: (memref<?x?xT, strided<[?, ?], offset: ?>> x 3, i64) -> (),
 *         with llvm.emit_c_interface */
void _mlir_ciface_dist_gemm_f32(DistMemRef2D *a, DistMemRef2D *b,
                                DistMemRef2D *c, int64_t accumulate);
void _mlir_ciface_dist_gemm_f64(DistMemRef2D *a, DistMemRef2D *b,
                                DistMemRef2D *c, int64_t accumulate);

#ifdef __cplusplus
}
#endif

/* The symbol names the lowering declares. */
#define DIST_RUNTIME_COMM_GET "dist_comm_get"
#define DIST_RUNTIME_IALLREDUCE_PREFIX "dist_iallreduce_"
#define DIST_RUNTIME_IALLGATHER_PREFIX "dist_iallgather_"
#define DIST_RUNTIME_IREDUCE_SCATTER_PREFIX "dist_ireduce_scatter_"
#define DIST_RUNTIME_IALLTOALL_PREFIX "dist_ialltoall_"
#define DIST_RUNTIME_WAIT_PREFIX "dist_wait_"
#define DIST_RUNTIME_SEND_PREFIX "dist_send_"
#define DIST_RUNTIME_IRECV_PREFIX "dist_irecv_"
#define DIST_RUNTIME_FINALIZE "dist_runtime_finalize"
#define DIST_RUNTIME_CHECK_WORLD_SIZE "dist_check_world_size"
#define DIST_RUNTIME_INDEX_ERROR "dist_index_error"
#define DIST_RUNTIME_RANDOM_SEED "dist_random_seed"
#define DIST_RUNTIME_TRACE_COLLECTIVE "dist_trace_collective"
#define DIST_RUNTIME_TRACE_COLLECTIVE_END "dist_trace_collective_end"
#define DIST_RUNTIME_TRACE_FUNCTION "dist_trace_function"
#define DIST_RUNTIME_GEMM_PREFIX "dist_gemm_"

#endif /* DIST_RUNTIME_DISTRUNTIME_H */
