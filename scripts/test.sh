#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test:
#
#   1. the build (build/): the lit regression tests, example checks and
#      GoogleTest unit tests (all through lit), and the Python package's
#      tests;
#   2. the sanitizer build (build-san/, ASan + UBSan with every report fatal
#      and leak detection on): the same suites, then a bounded run of each
#      libFuzzer target (scripts/fuzz.sh, DIST_FUZZ_SECONDS each, default 20).
#
# Ends with "tests: N passed, N failed" (a fuzz target counts as a test) and
# exits non-zero if any test failed. DIST_SANITIZERS=0 skips stage 2.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DIST_BUILD_DIR:-$root/build}
san_build=${DIST_SAN_BUILD_DIR:-$root/build-san}
results_dir="$build/test-results"
rm -rf "$results_dir"
mkdir -p "$results_dir"

# run_suites BUILD_DIR LABEL [ENV...]: lit and pytest on one build tree; the
# statuses and result files go to $results_dir/LABEL.*.
run_suites() {
  local tree=$1 label=$2
  shift 2
  local status=0
  /usr/lib/llvm-22/bin/lit -sv -j "${DIST_JOBS:-2}" \
    --output "$results_dir/$label.lit.json" "$tree/test" "$tree/test/Unit" \
    || status=$?
  echo "$status" > "$results_dir/$label.lit.status"
  status=0
  env "$@" PYTHONPATH="$tree/python_packages" DIST_BUILD_DIR="$tree" \
    /usr/bin/python3 -m pytest -q -p no:cacheprovider \
    --junitxml="$results_dir/$label.pytest.xml" "$root/test/python" || status=$?
  echo "$status" > "$results_dir/$label.pytest.status"
}

"$root/scripts/bootstrap.sh"
run_suites "$build" build

if [ "${DIST_SANITIZERS:-1}" != 0 ]; then
  echo "test: the sanitizer build ($san_build)" >&2
  DIST_BUILD_DIR="$san_build" \
    DIST_CMAKE_ARGS="-DDIST_ENABLE_SANITIZERS=ON ${DIST_CMAKE_ARGS:-}" \
    "$root/scripts/bootstrap.sh"
  # python3 is not instrumented: it gets the sanitizers' runtime preloaded,
  # and its own allocations are not leak-checked (see test/lit.cfg.py).
  asan_rt="$(/usr/lib/llvm-22/bin/clang++ -print-runtime-dir)/libclang_rt.asan-x86_64.so"
  run_suites "$san_build" sanitizers LD_PRELOAD="$asan_rt" \
    ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=false \
    UCX_MEM_MMAP_HOOK_MODE=none \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  status=0
  "$root/scripts/fuzz.sh" "$san_build" "${DIST_FUZZ_SECONDS:-20}" \
    | tee "$results_dir/fuzz.txt" || status=$?
  echo "$status" > "$results_dir/fuzz.status"
fi

exec /usr/bin/python3 "$root/scripts/results.py" summary "$results_dir"
