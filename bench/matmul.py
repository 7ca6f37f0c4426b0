#!/usr/bin/env python3
"""The rate of a lowered matmul chain against OpenBLAS called from numpy.

  PYTHONPATH=build/python_packages /usr/bin/python3 bench/matmul.py
      [--size 1024] [--chain 4] [--reps 5] [--matmul blas|loops]

The program is a chain of CHAIN f32 `dist.matmul`s of SIZE x SIZE
matrices in a function @chain, which @main calls REPS times; it runs on one
process with dist-run --trace, and each call's span is timed from the
trace. The peer is the same chain in numpy (Debian's OpenBLAS, one thread:
OPENBLAS_NUM_THREADS=1, as dist's runtime sets it), timed with
time.perf_counter. Prints the median GFLOP/s of the calls after the first
(which warms the caches and pages up) and the ratio.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import dist  # noqa: E402


def program(size, chain, reps):
    t = f"tensor<{size}x{size}xf32>"
    body = [f"  %m0 = dist.matmul %a, %b : {t}, {t} -> {t}"]
    for i in range(1, chain):
        body.append(f"  %m{i} = dist.matmul %m{i - 1}, %b : {t}, {t} -> {t}")
    calls = "\n".join(f"  %r{i} = call @chain(%a, %b) : ({t}, {t}) -> {t}" for i in range(reps))
    return f"""func.func private @printMemrefF32(memref<*xf32>)
func.func @chain(%a: {t}, %b: {t}) -> {t} {{
{chr(10).join(body)}
  return %m{chain - 1} : {t}
}}
func.func @main() {{
  %a = arith.constant dense<0.5> : {t}
  %b = arith.constant dense<0.0009765625> : {t}
{calls}
  %s = tensor.extract_slice %r{reps - 1}[0, 0] [1, 4] [1, 1] : {t} to tensor<1x4xf32>
  %m = bufferization.to_buffer %s : tensor<1x4xf32> to memref<1x4xf32>
  %u = memref.cast %m : memref<1x4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}}
"""


def dist_seconds(size, chain, reps, matmul):
    """The seconds of each call of @chain, from the run's trace, and the
    first four elements of the last call's result."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        [printed] = dist.run_on_mpi(
            program(size, chain, reps),
            1,
            trace=path,
            timeout=600,
            check_collectives=False,
            matmul=matmul,
        )
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    calls = sorted(
        (e for e in events if e.get("cat") == "function" and e.get("name") == "chain"),
        key=lambda e: e["ts"],
    )
    return [e["dur"] / 1e6 for e in calls], printed[0].flatten()


def numpy_seconds(size, chain, reps):
    a = np.full((size, size), 0.5, dtype=np.float32)
    b = np.full((size, size), 0.0009765625, dtype=np.float32)
    seconds = []
    for _ in range(reps):
        begin = time.perf_counter()
        m = a @ b
        for _ in range(chain - 1):
            m = m @ b
        seconds.append(time.perf_counter() - begin)
    return seconds, m[0, :4]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--chain", type=int, default=4)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--matmul", choices=["blas", "loops"], default="blas")
    args = parser.parse_args()
    if args.size < 1 or args.chain < 1 or args.reps < 2:
        sys.exit("matmul.py: --size and --chain must be positive, --reps at least 2")
    flops = 2.0 * args.size**3 * args.chain
    rate = lambda seconds: flops / statistics.median(seconds[1:]) / 1e9
    ours, got = dist_seconds(args.size, args.chain, args.reps, args.matmul)
    peer, want = numpy_seconds(args.size, args.chain, args.reps)
    if not np.allclose(got, want, rtol=1e-5):
        sys.exit(f"matmul.py: dist computed {got}, numpy {want}")
    ours, peer = rate(ours), rate(peer)
    print(
        f"chain of {args.chain} {args.size}^3 f32 matmuls, one process: "
        f"dist ({args.matmul}) {ours:.1f} GFLOP/s, numpy + OpenBLAS (1 thread) "
        f"{peer:.1f} GFLOP/s, ratio {ours / peer:.2f}"
    )


if __name__ == "__main__":
    main()
