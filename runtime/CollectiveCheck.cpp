//===- CollectiveCheck.cpp - every process of a group starts the same one -===//
//
// With DIST_RUNTIME_CHECK=1, each traced collective first checks over its
// group that every member starts a collective of the same signature and
// element count, and stops the program with a message naming the op when
// not; a member that finished the program instead is noticed too (its
// "finished" message), so that a collective only some processes reach is an
// error, never a hang.
//
//===----------------------------------------------------------------------===//

#include "dist/Runtime/DistRuntime.h"

#include "RuntimeSupport.h"

#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace dist_runtime;

Entered &dist_runtime::entered() {
  static Entered state;
  return state;
}

namespace {
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

} // namespace

/// Tells every other process that this one has finished, after how many
/// collectives, so that one still waiting in a collective check for it
/// stops instead of hanging; then takes the others' messages (each sends
/// them when it finishes), since an unmatched message makes UCX warn at
/// MPI_Finalize. A process that never finishes would hold MPI_Finalize up
/// anyway.
void dist_runtime::announceFinished() {
  int size = 0, me = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  long long collectives = static_cast<long long>(entered().count);
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

extern "C" void _mlir_ciface_dist_trace_collective(DistMemRef1D *site,
                                                   int64_t signature,
                                                   int64_t count,
                                                   int64_t stream,
                                                   int64_t comm) {
  const char *text = static_cast<const char *>(site->aligned) + site->offset;
  if (trace::eventsOn())
    trace::beginCollective(siteText(text, site->size), stream);
  Entered &e = entered();
  int64_t number = e.count++;
  e.site = text;
  e.siteSize = site->size;
  trace::state("last entered collective #" + std::to_string(number) + ": " +
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
  // Every member saw the mismatch and is here: they tell each other what
  // they started, so that each message names the whole disagreement (the
  // kinds, reductions and element types the signature hides as well as the
  // counts).
  constexpr int kWidth = 384;
  int members = 0, position = 0;
  check(MPI_Comm_size(group, &members), "MPI_Comm_size (mismatch) failed");
  check(MPI_Comm_rank(group, &position), "MPI_Comm_rank (mismatch) failed");
  std::string mine = siteText(text, site->size);
  std::vector<char> own(kWidth, '\0'), all(size_t(members) * kWidth);
  std::memcpy(own.data(), mine.data(),
              std::min<size_t>(mine.size(), kWidth - 1));
  check(MPI_Allgather(own.data(), kWidth, MPI_CHAR, all.data(), kWidth,
                      MPI_CHAR, group),
        "MPI_Allgather (mismatch) failed");
  std::string started;
  for (int i = 0; i < members; ++i) {
    const char *what = &all[size_t(i) * kWidth];
    started += (i ? ", " : "") + std::string("position ") + std::to_string(i) +
               (i == position ? " (this one)" : "") + " started " +
               std::string(what, strnlen(what, kWidth));
  }
  char counts[96];
  if (bounds[2] != -bounds[3])
    std::snprintf(counts, sizeof(counts), "element counts %lld to %lld",
                  static_cast<long long>(-bounds[3]),
                  static_cast<long long>(bounds[2]));
  else
    std::snprintf(counts, sizeof(counts),
                  "the same element count, another collective");
  std::string full = mine +
                     ": the processes of its group do not all start "
                     "this collective here (" +
                     counts + "): " + started;
  char message[2048];
  std::snprintf(message, sizeof(message), "%s", full.c_str());
  trace::state(std::string("stopped the program: ") + message);
  std::fprintf(stderr, "dist runtime: rank %d: %s\n", worldRank(), message);
  std::fflush(stderr);
  // Every member saw the mismatch and says where it stands before one of
  // them stops the program.
  MPI_Barrier(group);
  MPI_Abort(MPI_COMM_WORLD, 1);
}
