#!/usr/bin/env python3
"""The one place that decides what passed and what failed in a test run.

  results.py fuzz-verdict LOG EXIT SRC_ROOT   the verdict on a libFuzzer log
  results.py summary RESULTS_DIR         the closing lines of scripts/test.sh

A fuzz target's verdict is one of three words, printed by scripts/fuzz.sh on
its line (``fuzz: TARGET: N executions, VERDICT ...``) and counted here:

  passed    the fuzzer exited 0: no finding;
  upstream  a crash whose stack has frames and none of them is dist's code
            (a parser of an upstream op, say): shown with its input, counted
            apart, and not a failure, since dist cannot fix it;
  failed    any other finding: a frame in dist's code, a sanitizer report
            without a stack, a leak, a timeout, an out-of-memory.

The summary counts lit and pytest results per build tree and the fuzz
verdicts, prints "tests: N passed, N failed[, N skipped]" and exits non-zero
when anything failed, a suite exited non-zero, or nothing ran.
"""

import json
import os
import re
import sys
import xml.etree.ElementTree as ET

VERDICTS = ("passed", "upstream", "failed")

# Frames every input passes through that say nothing about where a crash is:
# the fuzz driver, libFuzzer, the sanitizer runtime, the C and C++ runtime.
_NEUTRAL_FRAME = re.compile(
    r"dist-fuzz\.cpp| in fuzzer::| in (malloc|calloc|realloc|operator new)"
    r"|libFuzzer|compiler-rt|libclang_rt|libc\.so|libstdc\+\+"
)
# dist's way into MLIR's parser (parseInput's limits and crash guard, the
# parseSourceFile templates it instantiates): neutral too, but only as
# callers of MLIR's own parseSourceFile, so that a crash under them, in an
# upstream op's parser, is upstream's, and one in them is dist's.
_PARSER_ENTRY = re.compile(r" in mlir::parse(Asm)?SourceFile\(.*libMLIR")
_PARSE_PATH_FRAME = re.compile(
    r"/lib/Support/(InputLimits|ParserCrashGuard)\.cpp:|mlir/Parser/Parser\.h:"
    r"|STLFunctionalExtras\.h:| in llvm::CrashRecoveryContext::"
)
_FRAME = re.compile(r"^ *#[0-9]+ 0x")


def _is_dist_frame(frame, src_root):
    # dist's code is linked into the fuzz binary; LLVM's is in libMLIR.so.
    return (
        re.search(re.escape(src_root.rstrip("/")) + r"/(lib|include|tools)/", frame) is not None
        or "mlir::dist::" in frame
        or re.search(r"/dist-fuzz(-[a-z-]+)?\+0x", frame) is not None
    )


def fuzz_verdict(log_text, exit_code, src_root):
    """The verdict on a libFuzzer run that exited `exit_code`."""
    if exit_code == 0:
        return "passed"
    frames = [
        line
        for line in log_text.splitlines()
        if _FRAME.match(line) and not _NEUTRAL_FRAME.search(line)
    ]
    entry = next((i for i, f in enumerate(frames) if _PARSER_ENTRY.search(f)), None)
    if entry is not None:
        frames = frames[: entry + 1] + [
            f for f in frames[entry + 1 :] if not _PARSE_PATH_FRAME.search(f)
        ]
    if frames and not any(_is_dist_frame(f, src_root) for f in frames):
        return "upstream"
    return "failed"


def _fuzz_line_verdict(line):
    """The verdict word on a line of scripts/fuzz.sh's output, or None."""
    m = re.match(r"fuzz: dist-fuzz-\S+: \S+ executions, (\w+)\b", line)
    return m.group(1) if m and m.group(1) in VERDICTS else None


def _status(results, name):
    try:
        with open(os.path.join(results, name)) as f:
            return int(f.read())
    except (OSError, ValueError):
        return 1


def summary(results):
    """Prints the closing lines; returns the exit status."""
    passed = failed = skipped = 0
    bad_status = False
    out = []
    for label in ("build", "sanitizers"):
        if not os.path.exists(os.path.join(results, f"{label}.lit.status")):
            continue
        p = f = s = 0
        try:
            with open(os.path.join(results, f"{label}.lit.json")) as fp:
                codes = [t["code"] for t in json.load(fp)["tests"]]
            p = sum(c in ("PASS", "XFAIL") for c in codes)
            s = sum(c in ("UNSUPPORTED", "SKIPPED", "EXCLUDED") for c in codes)
            f = len(codes) - p - s
        except (OSError, ValueError, KeyError, TypeError):
            out.append(f"{label}: lit produced no results")
            f += 1
        try:
            suite = ET.parse(os.path.join(results, f"{label}.pytest.xml")).getroot()
            suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
            total = int(suite.get("tests"))
            pf = int(suite.get("failures")) + int(suite.get("errors"))
            ps = int(suite.get("skipped"))
            p, f, s = p + total - pf - ps, f + pf, s + ps
        except (OSError, ET.ParseError, AttributeError, TypeError, ValueError):
            out.append(f"{label}: pytest produced no results")
            f += 1
        bad_status |= bool(
            _status(results, f"{label}.lit.status") or _status(results, f"{label}.pytest.status")
        )
        out.append(f"{label}: {p} passed, {f} failed" + (f", {s} skipped" if s else ""))
        passed, failed, skipped = passed + p, failed + f, skipped + s

    if os.path.exists(os.path.join(results, "fuzz.status")):
        counts = dict.fromkeys(VERDICTS, 0)
        try:
            with open(os.path.join(results, "fuzz.txt"), errors="replace") as fp:
                for line in fp:
                    if line.startswith("fuzz: dist-fuzz-"):
                        # A target line without a verdict word is a failure:
                        # nothing may pass by not saying.
                        counts[_fuzz_line_verdict(line) or "failed"] += 1
        except OSError:
            pass
        if not any(counts.values()):
            out.append("fuzz: no target ran")
            counts["failed"] = 1
        # fuzz.sh exits non-zero exactly when a target failed; a status that
        # disagrees with the lines is itself a failure.
        if bool(_status(results, "fuzz.status")) != bool(counts["failed"]):
            out.append("fuzz: fuzz.sh's exit status disagrees with its verdicts")
            bad_status = True
        line = f"fuzz targets: {counts['passed']} passed, {counts['failed']} failed"
        if counts["upstream"]:
            line += f", {counts['upstream']} upstream"
        out.append(line)
        # An upstream finding is no failure of dist's: its target counts as
        # passed in the total, and the fuzz line shows it apart.
        passed += counts["passed"] + counts["upstream"]
        failed += counts["failed"]

    line = f"tests: {passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    out.append(line)
    print("\n".join(out))
    return 1 if failed or bad_status or not passed else 0


def main(argv):
    if len(argv) == 5 and argv[1] == "fuzz-verdict":
        log, code, src_root = argv[2], int(argv[3]), argv[4]
        try:
            with open(log, errors="replace") as fp:
                text = fp.read()
        except OSError:
            text = ""
        print(fuzz_verdict(text, code, src_root))
        return 0
    if len(argv) == 3 and argv[1] == "summary":
        return summary(argv[2])
    print(
        "usage: results.py fuzz-verdict LOG EXIT SRC_ROOT | summary RESULTS_DIR",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
