"""What the integration tests that write their programs as MLIR text share:
the spelling of types and encodings, a function body's SSA names and lines,
every distribution of a tensor, and the command line of a property test.

The tests that build programs with the dist builder share cases.Program
instead; text is for what the builder is not meant to make (dist.reshard
between arbitrary encodings, programs the verifier must reject).
"""
import argparse
import itertools
import random
import sys

import numpy as np


def fmt(x):
    """An f32 literal that round-trips."""
    return f"{float(x):.9e}"


def ttype(shape, enc=None, elt="f32"):
    """`tensor<AxBxELT[, ENC]>`."""
    t = "tensor<" + "x".join(map(str, shape)) + "x" + elt
    return t + (", " + enc if enc else "") + ">"


def enc(dims, partial):
    """The `#dist.tensor` encoding on `#mesh` of a dims mapping and partial
    axes (axis -> reduction kind)."""
    s = "#dist.tensor<#mesh, [" + ", ".join(map(str, dims)) + "]"
    if partial:
        s += ", partial = [" + ", ".join(f"{a} : {k}" for a, k in sorted(partial.items())) + "]"
    return s + ">"


def distributions(rank, mesh_rank):
    """Every distribution of a rank-`rank` tensor on a mesh of `mesh_rank`
    axes: a dims mapping (no axis twice) and a tuple of the axes it leaves
    free that hold partial values."""
    axes = list(range(mesh_rank))
    for dims in itertools.product([-1] + axes, repeat=rank):
        used = [a for a in dims if a >= 0]
        if len(used) != len(set(used)):
            continue
        free = [a for a in axes if a not in used]
        for n in range(len(free) + 1):
            for partial in itertools.combinations(free, n):
                yield list(dims), partial


def property_args(doc, seed, count, default):
    """The command line of a property test: --seed and --COUNT; returns the
    arguments and a Python and a numpy generator seeded alike."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument(f"--{count}", type=int, default=default)
    args = parser.parse_args()
    return args, random.Random(args.seed), np.random.default_rng(args.seed)


def finish(ok, summary):
    """Prints the property test's closing line and exits 0 when `ok`."""
    print(summary)
    sys.exit(0 if ok else 1)


class Body:
    """The lines of one function body on a mesh of shape `mesh_shape`, whose
    process coordinates are `%crd<axis>` (index)."""

    def __init__(self, mesh_shape):
        self.mesh_shape = list(mesh_shape)
        self.lines = []
        self.n = 0

    def emit(self, line):
        self.lines.append("  " + line)

    def fresh(self, stem="v"):
        self.n += 1
        return f"%{stem}{self.n}"

    def let(self, stem, rhs):
        """Emits `%NAME = rhs` with a fresh name from `stem`; the name."""
        name = self.fresh(stem)
        self.emit(f"{name} = {rhs}")
        return name

    ttype = staticmethod(ttype)
    enc = staticmethod(enc)

    def local_shape(self, gshape, dims):
        """The shard of a `gshape` tensor split by `dims`."""
        return [g // self.mesh_shape[a] if a >= 0 else g for g, a in zip(gshape, dims)]

    def splat(self, value, shape):
        c = self.let("s", f"arith.constant {fmt(value)} : f32")
        return self.let("s", f"tensor.splat {c} : {ttype(shape)}")

    def offsets(self, local, dims):
        """This process's offsets of a shard of shape `local` under `dims`."""
        offs = []
        for n, a in zip(local, dims):
            if a < 0:
                offs.append("0")
                continue
            k = self.let("k", f"arith.constant {n} : index")
            offs.append(self.let("o", f"arith.muli %crd{a}, {k} : index"))
        return offs

    def slice_of(self, glob, gshape, local, dims):
        """This process's block (plain) of the plain global tensor `glob`."""
        offs = ", ".join(self.offsets(local, dims))
        ones = ", ".join("1" for _ in gshape)
        return self.let(
            "b",
            f"tensor.extract_slice {glob}[{offs}] "
            f"[{', '.join(map(str, local))}] [{ones}] : "
            f"{ttype(gshape)} to {ttype(local)}",
        )
