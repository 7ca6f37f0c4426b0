#!/usr/bin/env python3
"""Writes what completion makes of every test and example input, so that a
change of completion's code can be shown to change none of it (issue 41's
"byte-identical before and after").

    scripts/completion-snapshot.py BUILD_DIR OUT_DIR
    scripts/completion-snapshot.py BUILD_DIR OUT_DIR --compare BEFORE_DIR

For each `.mlir` file under test/ and examples/ and each configuration below,
OUT_DIR gets one file holding dist-opt's exit status, its stdout and its
stderr (diagnostics and remarks, with their locations). With --compare the
script lists every file that differs from BEFORE_DIR and exits 1 if any does.
"""

import argparse
import filecmp
import os
import pathlib
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Completion alone with each of its options, with locations printed (the
# reshards' locations are part of what it decides), and inside the pipeline.
# The op a diagnostic shows ("see current operation") is left out: it is the
# IR at the moment the diagnostic is emitted, not what completion decides
# (completion emits its remarks once its decisions are written; until
# issue 41 it emitted each half-way through).
COMMON = ["--mlir-print-op-on-diagnostic=false"]
CONFIGS = {
    "complete": ["--dist-complete", "--mlir-print-debuginfo"],
    "all-functions": ["--dist-complete=all-functions=true"],
    "replicate-unknown": ["--dist-complete=replicate-unknown-ops=true"],
    "no-remarks": ["--dist-complete=remarks=false"],
    "auto-parallel": ["--dist-auto-parallel=remarks=true"],
}


def inputs():
    for top in ("test", "examples"):
        yield from sorted((ROOT / top).rglob("*.mlir"))


def snapshot(dist_opt, path, name, flags, out_dir):
    rel = path.relative_to(ROOT)
    target = out_dir / name / (str(rel).replace(os.sep, "__") + ".txt")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        run = subprocess.run(
            [dist_opt, "--split-input-file", *COMMON, *flags, str(rel)],
            cwd=ROOT,
            capture_output=True,
            timeout=300,
        )
        text = b"exit %d\n--- stdout\n%s--- stderr\n%s" % (
            run.returncode,
            run.stdout,
            run.stderr,
        )
    except subprocess.TimeoutExpired:
        text = b"timeout\n"
    target.write_bytes(text)
    return target.relative_to(out_dir)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("out")
    parser.add_argument("--compare", metavar="BEFORE_DIR")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    dist_opt = str(pathlib.Path(args.build).resolve() / "bin" / "dist-opt")
    out_dir = pathlib.Path(args.out).resolve()
    with ThreadPoolExecutor(args.jobs) as pool:
        written = list(
            pool.map(
                lambda job: snapshot(dist_opt, job[0], job[1], job[2], out_dir),
                [(path, name, flags) for path in inputs() for name, flags in CONFIGS.items()],
            )
        )
    print(f"completion-snapshot: {len(written)} outputs in {out_dir}")
    if not args.compare:
        return 0
    before = pathlib.Path(args.compare).resolve()
    differ = [
        rel
        for rel in written
        if not (before / rel).exists()
        or not filecmp.cmp(before / rel, out_dir / rel, shallow=False)
    ]
    missing = [
        p.relative_to(before)
        for p in before.rglob("*.txt")
        if p.relative_to(before) not in set(written)
    ]
    for rel in differ:
        print(f"differs: {rel}")
    for rel in missing:
        print(f"missing: {rel}")
    print(
        f"completion-snapshot: {len(written) - len(differ)} identical, "
        f"{len(differ)} differ, {len(missing)} missing"
    )
    return 1 if differ or missing else 0


if __name__ == "__main__":
    sys.exit(main())
