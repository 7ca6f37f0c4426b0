#!/usr/bin/env python3
"""The pipeline's cost relative to its floor, measured in back-to-back pairs.

  pairs.py [--ops 1000000] [--reps 4] [--dist-opt build/bin/dist-opt]

On a VM whose speed drifts between minutes, a ratio of medians taken minutes
apart mixes two machine speeds; here each rep runs the floor (parse, verify,
write) and then --dist-auto-parallel on the same input, for text and for
bytecode, and the ratio is taken within the pair. Prints one line per input
with every time, every ratio and their median.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ops", type=int, default=1000000)
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("--dist-opt", default=os.path.join(HERE, "..", "build", "bin", "dist-opt"))
    args = parser.parse_args()
    d = args.dist_opt
    with tempfile.TemporaryDirectory() as tmp:
        text = os.path.join(tmp, "step.mlir")
        bytecode = os.path.join(tmp, "step.mlirbc")
        out = os.path.join(tmp, "out")
        subprocess.run(
            [
                sys.executable,
                os.path.join(HERE, "gen.py"),
                "--ops",
                str(args.ops),
                "--shape",
                "one",
                "-o",
                text,
            ],
            check=True,
        )
        subprocess.run([d, text, "--emit-bytecode", "-o", bytecode], check=True)
        for name, floor, pipeline in [
            ("text", [d, text, "-o", out], [d, text, "--dist-auto-parallel", "-o", out]),
            (
                "bytecode",
                [d, bytecode, "--emit-bytecode", "-o", out],
                [d, bytecode, "--dist-auto-parallel", "--emit-bytecode", "-o", out],
            ),
        ]:
            floors, pipelines = [], []
            for _ in range(args.reps):
                floors.append(timed(floor))
                pipelines.append(timed(pipeline))
            ratios = [p / f for f, p in zip(floors, pipelines)]
            print(
                f"{name}: floor {', '.join(f'{t:.2f}' for t in floors)} s; pipeline "
                f"{', '.join(f'{t:.2f}' for t in pipelines)} s; ratios "
                f"{', '.join(f'{r:.2f}' for r in ratios)}; median "
                f"{statistics.median(ratios):.2f}x",
                flush=True,
            )


if __name__ == "__main__":
    main()
