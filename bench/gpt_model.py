#!/usr/bin/env python3
"""The compile time and memory of `--dist-auto-parallel` on the whole GPT
model (examples/gpt_model.py) as the layer count grows.

  PYTHONPATH=build/python_packages /usr/bin/python3 bench/gpt_model.py
      [--layers 1 8 32 96 192] [--layout dp-tp:2,4] [--reps 3]
      [--hidden 768] [--heads 12] [--ffn 3072] [--vocab 50257]
      [--seq 1024] [--batch 8]

For each layer count the step is generated once, then `dist-opt
--dist-auto-parallel` is run on it REPS times; a line gives the ops of the
program, the median wall time, the time per layer and the peak resident
memory of dist-opt (its maximum RSS). The defaults are GPT-2 small (hidden
768, 12 heads, vocabulary 50257, sequence 1024) on dp-tp [2, 4].
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
import gpt_model  # noqa: E402

DIST_OPT = os.path.join(HERE, "..", "build", "bin", "dist-opt")


def compile_once(path):
    """(seconds, peak RSS in MiB) of one dist-opt run."""
    start = time.perf_counter()
    # The child's own maximum RSS: run it under a fresh process whose
    # rusage counts it alone.
    code = (
        "import resource, subprocess, sys;"
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, DIST_OPT, path, "--dist-auto-parallel", "-o", os.devnull],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return time.perf_counter() - start, int(out) / 1024.0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layers", type=int, nargs="+", default=[1, 8, 32, 96, 192])
    p.add_argument("--layout", default="dp-tp:2,4")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--hidden", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--ffn", type=int, default=3072)
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--batch", type=int, default=8)
    args = p.parse_args()
    name, _, mesh = args.layout.partition(":")
    print(
        f"GPT model, hidden {args.hidden}, {args.heads} heads, FFN {args.ffn}, vocabulary "
        f"{args.vocab}, sequence {args.seq}, batch {args.batch}, {name} on [{mesh}]: "
        f"dist-opt --dist-auto-parallel, median of {args.reps}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.layers:
            sizes = dict(gpt_model.sizes_of(args), layers=n)
            L = gpt_model.ModelLayout(
                name, [int(x) for x in mesh.split(",")] if mesh else None, sizes, 0.1
            )
            text = gpt_model.build(L)
            path = os.path.join(tmp, f"model{n}.mlir")
            with open(path, "w") as f:
                f.write(text)
            ops = sum(1 for line in text.splitlines() if " = " in line or "linalg.yield" in line)
            runs = [compile_once(path) for _ in range(args.reps)]
            seconds = statistics.median(r[0] for r in runs)
            rss = max(r[1] for r in runs)
            print(
                f"  {n:3d} layers: {ops:6d} ops, {seconds:6.2f} s, {1000 * seconds / n:6.1f} ms per "
                f"layer, peak RSS {rss:6.1f} MiB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
