#!/usr/bin/env python3
"""Run-time seeds of unseeded dropouts, on MPI.

  seeds.py [--procs 2]

Two unseeded dropouts of the same tensor, in a function called twice, and a
`dist.seed 0` shared by a dropout and its recomputation. Every rank must
draw the same masks (replicas agree); the two dropouts and the two calls
must draw different masks; the recomputation must draw its forward's mask;
the same run seed must repeat a run and another must not.
"""
import argparse
import sys

import numpy as np

import dist

N = 64
T = f"tensor<{N}xf32>"
PROGRAM = f"""
func.func private @printMemrefF32(memref<*xf32>)
func.func @step(%x: {T}) -> ({T}, {T}) {{
  %a = dist.dropout %x prob = 5.000000e-01 : {T} -> {T}
  %b = dist.dropout %x prob = 5.000000e-01 : {T} -> {T}
  return %a, %b : {T}, {T}
}}
func.func @print(%v: {T}) {{
  %m = bufferization.to_buffer %v : {T} to memref<{N}xf32>
  %u = memref.cast %m : memref<{N}xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}}
func.func @main() {{
  %x = arith.constant dense<1.0> : {T}
  %a0, %b0 = call @step(%x) : ({T}) -> ({T}, {T})
  %a1, %b1 = call @step(%x) : ({T}) -> ({T}, {T})
  %s = dist.seed 0 : tensor<1xi32>
  %f = dist.dropout %x seed(%s : tensor<1xi32>) prob = 5.000000e-01 : {T} -> {T}
  %r = dist.dropout %x seed(%s : tensor<1xi32>) prob = 5.000000e-01 : {T} -> {T}
  call @print(%a0) : ({T}) -> ()
  call @print(%b0) : ({T}) -> ()
  call @print(%a1) : ({T}) -> ()
  call @print(%b1) : ({T}) -> ()
  call @print(%f) : ({T}) -> ()
  call @print(%r) : ({T}) -> ()
  return
}}
"""


def report(ok, what):
    print(f"{'ok' if ok else 'FAILED'}: {what}")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--write", metavar="FILE", help="only write the program to FILE")
    args = parser.parse_args()
    if args.write:
        with open(args.write, "w") as f:
            f.write(PROGRAM)
        return
    ranks = dist.run_on_mpi(PROGRAM, args.procs, seed=12345)
    ok = report(all(len(r) == 6 for r in ranks), "six masks printed per rank")
    if not ok:
        sys.exit(1)
    masks = [[a != 0 for a in r] for r in ranks]
    first = masks[0]
    ok &= report(
        all(all(np.array_equal(a, b) for a, b in zip(m, first)) for m in masks),
        f"every rank draws the same masks ({args.procs} processes)",
    )
    a0, b0, a1, b1, f, r = first
    ok &= report(
        not np.array_equal(a0, b0) and not np.array_equal(a1, b1),
        "two dropouts of one tensor draw different masks",
    )
    ok &= report(
        not np.array_equal(a0, a1) and not np.array_equal(b0, b1), "the second call draws new masks"
    )
    ok &= report(np.array_equal(f, r), "a recomputation shares its forward's seed")
    ok &= report(all(16 <= int(m.sum()) <= 48 for m in first), "each mask keeps about half")
    again = dist.run_on_mpi(PROGRAM, args.procs, seed=12345)[0]
    ok &= report(
        all(np.array_equal(a, b) for a, b in zip(again, ranks[0])),
        "the same run seed repeats the run",
    )
    other = dist.run_on_mpi(PROGRAM, args.procs, seed=12346)[0]
    ok &= report(not np.array_equal(other[0] != 0, a0), "another run seed draws other masks")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
