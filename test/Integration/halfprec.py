#!/usr/bin/env python3
"""Half-precision collectives and AMP unscaling, run on MPI.

  halfprec.py [--procs 2,4]

f16 and bf16 allreduces reduce in f32 and round once (MPICH has no f16
sums): every rank must print the f32 result rounded once to the type,
which an f16 accumulation would miss (on 4 processes, 2048 + 1 + 1 + 1 is
2048 in f16 steps but 2052 rounded once). The AMP
unscale of f16 gradients [1024, 2048] by a loss scale of 2^25 must give
[2^-15, 2^-14] (an f16 1/scale would be 0).
"""
import argparse
import sys

import numpy as np

import dist

# Rank 0 contributes FIRST, every other rank REST (all exact in f32).
FIRST = [2048.0, 1.0, -3.5, 0.099975586, 65504.0]
REST = [1.0, 0.0009765625, 0.25, 0.1, -1.0]


def to_bf16(values):
    """Round f32 values to bf16 (nearest, ties to even), as f32."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def round_to(elt, values):
    values = np.asarray(values, dtype=np.float32)
    if elt == "f16":
        return np.float16(values).astype(np.float32)
    return to_bf16(values)


def allreduce_program(elt, procs):
    n = len(FIRST)
    first = ", ".join(repr(v) for v in round_to(elt, FIRST))
    rest = ", ".join(repr(v) for v in round_to(elt, REST))
    result = f"tensor<{n}x{elt}, #dist.tensor<#mesh, [-1]>>"
    lines = [
        f'#mesh = #dist.mesh<shape = [{procs}], names = ["dp"]>',
        "func.func private @printMemrefF32(memref<*xf32>)",
        "func.func @main() {",
        "  %c = dist.process_coord #mesh axis = 0",
        "  %c0 = arith.constant 0 : index",
        "  %is0 = arith.cmpi eq, %c, %c0 : index",
        f"  %first = arith.constant dense<[{first}]> : tensor<{n}x{elt}>",
        f"  %rest = arith.constant dense<[{rest}]> : tensor<{n}x{elt}>",
        f"  %x = arith.select %is0, %first, %rest : tensor<{n}x{elt}>",
    ]
    for kind in ["sum", "max", "avg"]:
        partial = (
            f"tensor<{n}x{elt}, #dist.tensor<#mesh, [-1], partial = "
            f"[0 : {'max' if kind == 'max' else 'sum'}]>>"
        )
        lines += [
            f"  %{kind}_p = tensor.cast %x : tensor<{n}x{elt}> to {partial}",
            f"  %{kind} = dist.allreduce %{kind}_p on #mesh axes = [0] reduce = {kind}"
            f" : {partial} -> {result}",
            f"  %{kind}_plain = tensor.cast %{kind} : {result} to tensor<{n}x{elt}>",
            f"  %{kind}_f32 = arith.extf %{kind}_plain : tensor<{n}x{elt}> to tensor<{n}xf32>",
            f"  %{kind}_m = bufferization.to_buffer %{kind}_f32 : tensor<{n}xf32> to memref<{n}xf32>",
            f"  %{kind}_u = memref.cast %{kind}_m : memref<{n}xf32> to memref<*xf32>",
            f"  call @printMemrefF32(%{kind}_u) : (memref<*xf32>) -> ()",
        ]
    lines += ["  return", "}"]
    return "\n".join(lines) + "\n"


def expected(elt, procs):
    first = round_to(elt, FIRST).astype(np.float64)
    rest = round_to(elt, REST).astype(np.float64)
    total = first + (procs - 1) * rest
    return [
        round_to(elt, total),
        round_to(elt, np.maximum(first, rest)),
        round_to(elt, total / procs),
    ]


UNSCALE = """
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %g = arith.constant dense<[1024.0, 2048.0]> : tensor<2xf16>
  %s = arith.constant dense<33554432.0> : tensor<1xf32>
  %u, %inf = dist.check_finite_and_unscale %g scale %s : (tensor<2xf16>, tensor<1xf32>) -> (tensor<2xf16>, tensor<1xi1>)
  %w = arith.extf %u : tensor<2xf16> to tensor<2xf32>
  %m = bufferization.to_buffer %w : tensor<2xf32> to memref<2xf32>
  %c = memref.cast %m : memref<2xf32> to memref<*xf32>
  call @printMemrefF32(%c) : (memref<*xf32>) -> ()
  return
}
"""


def same(got, want):
    """Equal up to printMemrefF32's 6 significant digits: far below the
    relative step of f16 (2^-10) and bf16 (2^-7), so a value rounded
    differently does not pass."""
    return got.shape == want.shape and np.allclose(got, want, rtol=2e-5, atol=0)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--procs", default="2,4")
    args = parser.parse_args()
    ok = True
    for procs in [int(n) for n in args.procs.split(",")]:
        for elt in ["f16", "bf16"]:
            want = expected(elt, procs)
            ranks = dist.run_on_mpi(allreduce_program(elt, procs), procs)
            good = all(
                len(arrays) == 3 and all(same(a, b) for a, b in zip(arrays, want))
                for arrays in ranks
            )
            if not good:
                print(f"MISMATCH {elt}: got {ranks}\n  expected {want}")
            ok &= good
            print(
                f"{'ok' if good else 'FAILED'}: {elt} allreduce sum, max, avg "
                f"({procs} processes)"
            )
    got = dist.run_on_mpi(UNSCALE, 1)[0][0]
    good = same(got, np.array([2.0**-15, 2.0**-14], dtype=np.float32))
    print(f"{'ok' if good else 'FAILED'}: f16 unscale by 2^25 gives {got.tolist()}")
    ok &= good
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
