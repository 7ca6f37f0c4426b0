#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (lit regression tests,
# example checks and the GoogleTest unit tests, all through lit). Ends with
# "tests: N passed, N failed" and exits non-zero if any test failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DIST_BUILD_DIR:-$root/build}
"$root/scripts/bootstrap.sh"

results="$build/test-results.json"
pyresults="$build/pytest-results.xml"
rm -f "$results" "$pyresults"
status=0
/usr/lib/llvm-22/bin/lit -sv -j "${DIST_JOBS:-2}" --output "$results" \
  "$build/test" "$build/test/Unit" || status=$?
# The Python package's tests (test/python), on the build tree's package.
pystatus=0
PYTHONPATH="$build/python_packages" DIST_BUILD_DIR="$build" \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider --junitxml="$pyresults" \
  "$root/test/python" || pystatus=$?

/usr/bin/python3 - "$results" "$status" "$pyresults" "$pystatus" <<'PY'
import json, sys
import xml.etree.ElementTree as ET
path, status, pypath, pystatus = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
try:
    tests = json.load(open(path))["tests"]
except (OSError, ValueError, KeyError):
    print("tests: 0 passed, 1 failed (lit produced no results)")
    sys.exit(1)
codes = [t["code"] for t in tests]
passed = sum(c in ("PASS", "XFAIL") for c in codes)
skipped = sum(c in ("UNSUPPORTED", "SKIPPED", "EXCLUDED") for c in codes)
failed = len(codes) - passed - skipped
try:
    suite = ET.parse(pypath).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    py_total = int(suite.get("tests"))
    py_failed = int(suite.get("failures")) + int(suite.get("errors"))
    py_skipped = int(suite.get("skipped"))
    passed += py_total - py_failed - py_skipped
    failed += py_failed
    skipped += py_skipped
except (OSError, ET.ParseError, AttributeError, TypeError):
    print("pytest produced no results")
    failed += 1
status = status or pystatus
line = f"tests: {passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
sys.exit(1 if failed or status or not passed else 0)
PY
