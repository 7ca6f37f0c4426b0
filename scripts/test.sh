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

/usr/bin/python3 - "$results_dir" <<'PY'
import glob, json, os, sys
import xml.etree.ElementTree as ET

results = sys.argv[1]
passed = failed = skipped = 0
bad_status = False


def status(name):
    try:
        return int(open(os.path.join(results, name)).read())
    except (OSError, ValueError):
        return 1


for label in ("build", "sanitizers"):
    lit = os.path.join(results, f"{label}.lit.json")
    if not os.path.exists(os.path.join(results, f"{label}.lit.status")):
        continue
    p = f = s = 0
    try:
        codes = [t["code"] for t in json.load(open(lit))["tests"]]
        p = sum(c in ("PASS", "XFAIL") for c in codes)
        s = sum(c in ("UNSUPPORTED", "SKIPPED", "EXCLUDED") for c in codes)
        f = len(codes) - p - s
    except (OSError, ValueError, KeyError):
        print(f"{label}: lit produced no results")
        f += 1
    try:
        suite = ET.parse(os.path.join(results, f"{label}.pytest.xml")).getroot()
        suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
        total = int(suite.get("tests"))
        pf = int(suite.get("failures")) + int(suite.get("errors"))
        ps = int(suite.get("skipped"))
        p, f, s = p + total - pf - ps, f + pf, s + ps
    except (OSError, ET.ParseError, AttributeError, TypeError):
        print(f"{label}: pytest produced no results")
        f += 1
    bad_status |= bool(status(f"{label}.lit.status") or status(f"{label}.pytest.status"))
    print(f"{label}: {p} passed, {f} failed" + (f", {s} skipped" if s else ""))
    passed, failed, skipped = passed + p, failed + f, skipped + s

fuzz = os.path.join(results, "fuzz.txt")
if os.path.exists(os.path.join(results, "fuzz.status")):
    lines = [l for l in open(fuzz) if l.startswith("fuzz: dist-fuzz-")]
    p = sum(", 0 findings" in l for l in lines)
    f = len(lines) - p
    if not lines:
        print("fuzz: no target ran")
        f = 1
    bad_status |= bool(status("fuzz.status"))
    print(f"fuzz targets: {p} passed, {f} failed")
    passed, failed = passed + p, failed + f

line = f"tests: {passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
sys.exit(1 if failed or bad_status or not passed else 0)
PY
