#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (lit regression tests,
# example checks and the GoogleTest unit tests, all through lit). Ends with
# "tests: N passed, N failed" and exits non-zero if any test failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DIST_BUILD_DIR:-$root/build}
"$root/scripts/bootstrap.sh"

results="$build/test-results.json"
rm -f "$results"
status=0
/usr/lib/llvm-22/bin/lit -sv -j "${DIST_JOBS:-2}" --output "$results" \
  "$build/test" "$build/test/Unit" || status=$?

/usr/bin/python3 - "$results" "$status" <<'PY'
import json, sys
path, status = sys.argv[1], int(sys.argv[2])
try:
    tests = json.load(open(path))["tests"]
except (OSError, ValueError, KeyError):
    print("tests: 0 passed, 1 failed (lit produced no results)")
    sys.exit(1)
codes = [t["code"] for t in tests]
passed = sum(c in ("PASS", "XFAIL") for c in codes)
skipped = sum(c in ("UNSUPPORTED", "SKIPPED", "EXCLUDED") for c in codes)
failed = len(codes) - passed - skipped
line = f"tests: {passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
sys.exit(1 if failed or status or not passed else 0)
PY
