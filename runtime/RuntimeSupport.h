//===- RuntimeSupport.h - what the runtime's files share --------*- C++ -*-===//
//
// Internal to libdist_runtime (not installed): fatal errors, the process's
// identity, and the few calls one concern of the runtime makes into
// another. Each concern is a file of its own: communicators and requests
// (DistRuntime.cpp), fatal errors (Errors.cpp), the collective check
// (CollectiveCheck.cpp), run seeds (Seeds.cpp), the trace (Trace.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_RUNTIME_RUNTIMESUPPORT_H
#define DIST_RUNTIME_RUNTIMESUPPORT_H

#include <cstdint>
#include <string>

namespace dist_runtime {

/// Prints "dist runtime: rank R: <message>" and stops every process; the
/// message also goes to the trace state (see trace::state).
[[noreturn]] __attribute__((format(printf, 1, 2))) void
fatalf(const char *format, ...);
[[noreturn]] void fatal(const char *message, long long value);
/// fatal(what) unless `status` is MPI_SUCCESS.
void check(int status, const char *what);

/// Makes malloc keep what a step frees for the next step (Memory.cpp):
/// large buffers from the heap, which is never trimmed. Idempotent.
void keepFreedMemory();

/// This process's rank in MPI_COMM_WORLD, -1 before MPI_Init.
int worldRank();
/// Whether environment variable `name` is "1".
bool envFlag(const char *name);
/// The text of a site string the lowering passes (a location and what the
/// op does), "?" for none.
std::string siteText(const char *site, int64_t size);

/// How many collectives this process has entered (the trace's count and
/// the collective check's), and the site of the last one that no request
/// has taken yet (DistRuntime.cpp's requests take it as they start).
struct Entered {
  int64_t count = 0;
  const char *site = nullptr;
  int64_t siteSize = 0;
};
Entered &entered();

/// Gives the request started last its timeline entry: issued at `begin`
/// on `stream`, as `site` (DistRuntime.cpp; the trace calls it once the
/// issue has returned).
void noteIssued(const std::string &site, int64_t stream, double begin);

/// Whether a non-blocking collective or receive of this process is in
/// flight (started, not yet waited for).
bool requestsInFlight();
/// Lets MPI move the data of the requests in flight (DIST_RUNTIME_PROGRESS,
/// DistRuntime.cpp): the compute stream calls it between blocks of a
/// matrix product, since MPICH moves a non-blocking collective's data only
/// inside MPI calls.
void progress();
/// Whether the compute stream calls progress() (DIST_RUNTIME_PROGRESS=poll)
/// or not (=none, the default).
bool progressPolls();

/// The collective check's exchange at the end of the program
/// (CollectiveCheck.cpp).
void announceFinished();

namespace trace {
/// Replaces this process's state line (DIST_RUN_TRACE_DIR/rank.R), which
/// dist-run reports after a timeout or a failure.
void state(const std::string &text);
void closeState();

/// Whether this run records a timeline (DIST_RUN_EVENTS_DIR is set).
bool eventsOn();
double nowMicros();
/// The compute stream's interval running now begins at `t`; or ends there.
void startCompute(double t);
void closeCompute(double t);
/// One interval of the timeline; `site` is the site string of its op.
void record(std::string name, const char *category, int64_t tid, double begin,
            double end, std::string site);
/// The lane (trace thread) of an interval [begin, end) of `stream`.
int64_t streamLane(int64_t stream, double begin, double end);
/// A traced collective starts now: its site and stream.
void beginCollective(const std::string &site, int64_t stream);
/// Writes this process's timeline (at dist_runtime_finalize).
void writeEvents();
} // namespace trace

} // namespace dist_runtime

#endif // DIST_RUNTIME_RUNTIMESUPPORT_H
