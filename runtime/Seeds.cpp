//===- Seeds.cpp - the run seed of unseeded random ops --------------------===//
//
// A dropout without a seed (dist.seed 0) draws from the run seed dist-run
// passes in DIST_RUN_SEED: call n at one site gets the same seed on every
// process, a new one on every call, and a new set for a new run seed.
//
//===----------------------------------------------------------------------===//

#include "dist/Runtime/DistRuntime.h"

#include "RuntimeSupport.h"

#include <cerrno>
#include <cstdlib>
#include <unordered_map>

using namespace dist_runtime;

namespace {
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
} // namespace

extern "C" int64_t dist_random_seed(int64_t site) {
  // Calls so far, per site.
  static std::unordered_map<int64_t, uint64_t> calls;
  uint64_t call = calls[site]++;
  return static_cast<int64_t>(
      mix(mix(runSeed() ^ mix(static_cast<uint64_t>(site))) + call));
}
