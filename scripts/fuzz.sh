#!/usr/bin/env bash
# Runs every dist-fuzz target of a sanitizer build for a bounded time on the
# seed corpus (the tests' and examples' programs, split at "// -----"), with
# the dialect's dictionary. Prints a line per target with its executions and
# its verdict (scripts/results.py decides it: passed, upstream or failed) and
# exits non-zero if any target failed: a crash with a frame in dist's code, a
# sanitizer report, a leak or a timeout. A crash whose every frame is in
# LLVM/MLIR is shown with its input but fails nothing. The input of a finding
# is kept in BUILD/fuzz/findings.
#
#   scripts/fuzz.sh BUILD_DIR [SECONDS_PER_TARGET [TARGET...]]
#
# SECONDS_PER_TARGET defaults to 20; naming targets (dist-fuzz-parse, ...)
# runs only those, as the longer campaigns in docs/reliability.md do.
# An input that runs longer than DIST_FUZZ_TIMEOUT seconds (default 10) is
# a finding; the timer is wall-clock time, so a campaign that shares the
# machine with other work raises it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$1
seconds=${2:-20}
shift $(($# < 2 ? $# : 2))
targets=()
for name in "$@"; do
  if [ ! -e "$build/bin/$name" ]; then
    echo "fuzz: no target $name in $build/bin" >&2
    exit 2
  fi
  targets+=("$build/bin/$name")
done
[ ${#targets[@]} -gt 0 ] || targets=("$build"/bin/dist-fuzz-*)
work="$build/fuzz"
seeds="$work/seeds"
mkdir -p "$work/findings" "$seeds"

/usr/bin/python3 - "$root" "$seeds" <<'PY'
import glob, os, re, sys
root, out = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(f"{root}/test/**/*.mlir", recursive=True) +
               glob.glob(f"{root}/examples/**/*.mlir", recursive=True))
# MLIR 22's parsers of linalg.reduce, transpose and broadcast crash on a
# malformed dimension list (a null attribute into NamedAttrList::set, in
# libMLIR itself). dist's parse recovers such a crash (ParserCrashGuard.h),
# but at the price of a search for its place and of what the crashed parser
# leaks: seeds with those ops would spend the fuzzers' time on that upstream
# crash, so they are left out, and the report says how many; the fuzzers
# test dist's code.
# So is linalg.generic with an integer among its iterator types, which
# ASan's allocator ends the process on (upstream-parser-crash-generic.mlir).
upstream_crashes = re.compile(
    r"linalg\.(reduce|transpose|broadcast)\b|iterator_types = \[[^\]]*[0-9]"
)
n = left_out = 0
for path in files:
    text = open(path, errors="replace").read()
    for i, chunk in enumerate(text.split("// -----")):
        if not chunk.strip():
            continue
        if upstream_crashes.search(chunk):
            left_out += 1
            continue
        with open(os.path.join(out, f"{n:05d}.mlir"), "w") as f:
            f.write(chunk)
        n += 1
print(
    f"fuzz: {n} seed inputs from {len(files)} files; {left_out} left out "
    "(they hold linalg.reduce, transpose or broadcast, whose MLIR 22 parsers "
    "crash on a malformed dimension list, or a linalg.generic whose iterator "
    "types hold an integer)",
    file=sys.stderr,
)
PY

# Leaks are findings; Debian's LLVM is not instrumented, so its own
# poisoning annotations are ignored.
export ASAN_OPTIONS="detect_leaks=1:allow_user_poisoning=false:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The build links the sanitizers' shared runtime; libFuzzer's static part
# comes first in the link, so the runtime is preloaded to come first.
preload=$(/usr/lib/llvm-22/bin/clang++ -print-runtime-dir)/libclang_rt.asan-x86_64.so
# The report's first lines, its stack, and the input that caused it (so
# that a finding on a CI machine can be reproduced from the log alone).
report() {
  grep -m3 -E "ERROR|runtime error|deadly signal|Timeout|leak" "$1" || true
  grep -E '^ *#[0-9]+ 0x' "$1" | head -25 || true
  local input
  input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$1" | tail -1)
  if [ -n "$input" ] && [ -f "$input" ]; then
    echo "fuzz: input ($(wc -c < "$input") bytes, base64):"
    head -c 8192 "$input" | base64
  fi
}
status=0
for link in "${targets[@]}"; do
  target=$(basename "$link")
  corpus="$work/corpus/$target"
  mkdir -p "$corpus"
  log="$work/$target.log"
  rc=0
  # The corpus grows across runs (new coverage is kept), the seeds stay.
  LD_PRELOAD=$preload "$link" "$corpus" "$seeds" -dict="$root/tools/dist-fuzz/dist.dict" \
    -max_total_time="$seconds" -timeout="${DIST_FUZZ_TIMEOUT:-10}" -rss_limit_mb=4096 \
    -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$work/findings/$target-" > "$log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  # The verdict (passed, upstream or failed) is decided by results.py, the
  # one rule that scripts/test.sh's summary counts too.
  verdict=$(/usr/bin/python3 "$root/scripts/results.py" fuzz-verdict "$log" "$rc" "$root")
  case $verdict in
  passed) echo "fuzz: $target: ${runs:-?} executions, passed, 0 findings" ;;
  upstream)
    # Every frame of the report is in LLVM/MLIR's own libraries: an
    # upstream bug that dist cannot fix, shown with its input.
    echo "fuzz: $target: ${runs:-?} executions, upstream finding (no frame in dist's code); see $log"
    report "$log" ;;
  *)
    echo "fuzz: $target: ${runs:-?} executions, failed: FINDING (exit $rc); see $log"
    report "$log"
    status=1 ;;
  esac
done
exit $status
