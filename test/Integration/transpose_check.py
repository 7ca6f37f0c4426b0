#!/usr/bin/env python3
"""The transposes of the redistribution primitives, numerically, on MPI.

  transpose_check.py MESH [--ids PERMUTATION] [--all-cotangents] [--native]
                     [--dist-opt PATH]

For every single-axis redistribution A between two distributions of a rank-2
tensor on MESH (all_gather, reduce_scatter, allreduce, all_to_all, all_slice,
make_partial; partial sums only, every other one issued asynchronously) and
each cotangent distribution tried for its result, the program holds
x = X in A's operand distribution and g = G in the cotangent's, with X and G
closed-form global tensors, and builds the transpose t = A^T g with
dist::buildTranspose (dist-opt --test-dist-transpose). Every process checks
  - <g, A x> = <A^T g, x> = <G, X> (global inner products, exact in f32), and
  - its local block of t against G's block in the distribution that
    Redistribution.h promises (no gather: a closed-form check),
and prints its count of failures per case; all must be zero.
"""
import argparse
import subprocess
import sys

import numpy as np

import dist
import textir
from reshard_matrix import Program, distributions


def states(mesh, dims, partial):
    """The per-axis states of a distribution: ('S', dim), ('P',) or ('R',)."""
    out = []
    for a in range(len(mesh)):
        if a in dims:
            out.append(("S", dims.index(a)))
        elif a in partial:
            out.append(("P",))
        else:
            out.append(("R",))
    return out


def from_states(st):
    dims = [-1, -1]
    partial = {}
    for a, s in enumerate(st):
        if s[0] == "S":
            if dims[s[1]] != -1:
                return None
            dims[s[1]] = a
        elif s[0] == "P":
            partial[a] = "sum"
    return tuple(dims), partial


def primitive(before, after):
    """The op that changes one axis from `before` to `after`."""
    kinds = {
        ("S", "R"): "all_gather",
        ("P", "S"): "reduce_scatter",
        ("P", "R"): "allreduce",
        ("S", "S"): "all_to_all",
        ("R", "S"): "all_slice",
        ("R", "P"): "make_partial",
        ("S", "P"): "make_partial",
    }
    return kinds.get((before[0], after[0]))


def transpose_states(operand, cot, axis):
    """Redistribution.h's promise for the operand's cotangent."""
    st = list(cot)
    st[axis] = ("R",)
    if operand[axis][0] == "S":
        st[axis] = operand[axis]
    elif cot[axis][0] == "P":
        st[axis] = ("P",)
    return from_states(st)


class TransposeProgram(Program):
    def __init__(self, mesh, ids, shape):
        super().__init__(mesh, ids, shape)
        i, j = np.meshgrid(range(shape[0]), range(shape[1]), indexing="ij")
        self.G = ((i * 7 + j * 3) % 5 - 2).astype(np.float32)
        self.X = (i * shape[1] + j + 1).astype(np.float32)
        rows = ", ".join("[" + ", ".join(f"{v:.1f}" for v in r) + "]" for r in self.G)
        self.g_text = f"dense<[{rows}]>"

    def begin(self):
        super().begin()
        self.emit(f"%G = arith.constant {self.g_text} : {self.ttype(self.shape)}")

    def replicated(self, value, dims, partial):
        r = self.fresh("rep")
        self.emit(
            f"{r} = dist.reshard {value} : "
            f"{self.ttype(self.local(dims), self.enc(dims, partial))} -> "
            f"{self.ttype(self.shape, self.enc([-1, -1], {}))}"
        )
        p = self.fresh("plain")
        self.emit(
            f"{p} = tensor.cast {r} : "
            f"{self.ttype(self.shape, self.enc([-1, -1], {}))} to "
            f"{self.ttype(self.shape)}"
        )
        return p

    def dot(self, a, b):
        ty = self.ttype(self.shape)
        m = self.fresh("mul")
        self.emit(f"{m} = arith.mulf {a}, {b} : {ty}")
        return self.sum_all(m, ty)

    def differs(self, a, b):
        c = self.fresh("ne")
        self.emit(f"{c} = arith.cmpf one, {a}, {b} : f32")
        f = self.fresh("nef")
        self.emit(f"{f} = arith.uitofp {c} : i1 to f32")
        return f

    def add(self, a, b):
        c = self.fresh("acc")
        self.emit(f"{c} = arith.addf {a}, {b} : f32")
        return c


def cases(mesh, all_cotangents):
    dists = distributions(mesh, ["sum"])
    out = []
    for d1 in dists:
        s1 = states(mesh, *d1)
        for d2 in dists:
            s2 = states(mesh, *d2)
            changed = [a for a in range(len(mesh)) if s1[a] != s2[a]]
            if len(changed) != 1:
                continue
            axis = changed[0]
            op = primitive(s1[axis], s2[axis])
            if op is None:
                continue
            natural = [("R",) if s[0] == "P" else s for s in s2]
            tries = (
                dists
                if all_cotangents
                else [
                    from_states(natural),
                    from_states(
                        [("P",) if a == axis and s[0] == "R" else s for a, s in enumerate(natural)]
                    ),
                    from_states([("R",)] * len(mesh)),
                    from_states([("P",)] * len(mesh)),
                ]
            )
            seen = []
            for c2 in tries:
                if c2 is None or c2 in seen:
                    continue
                seen.append(c2)
                c1 = transpose_states(s1, states(mesh, *c2), axis)
                if c1 is not None:
                    out.append((op, axis, d1, d2, c2, c1))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mesh")
    parser.add_argument("--ids", default="")
    parser.add_argument("--all-cotangents", action="store_true")
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument(
        "--native", action="store_true", help="build one executable instead of a JIT per process"
    )
    parser.add_argument("--print", action="store_true")
    parser.add_argument("--dist-opt", default="dist-opt", help="the dist-opt to run")
    args = parser.parse_args()
    mesh = [int(s) for s in args.mesh.split(",")]
    ids = [int(s) for s in args.ids.split(",")] if args.ids else []
    procs = int(np.prod(mesh))
    size = int(np.lcm.reduce(mesh)) * 2
    shape = [size, size]
    prog = TransposeProgram(mesh, ids, shape)
    todo = cases(mesh, args.all_cotangents)
    expected_dot = float((prog.G * prog.X).sum())
    for n, (op, axis, (d1, p1), (d2, p2), (cd2, cp2), (cd1, cp1)) in enumerate(todo):
        prog.begin()
        x = prog.source(d1, p1)
        g = prog.source(cd2, cp2, "%G")
        t1 = prog.ttype(prog.local(d1), prog.enc(d1, p1))
        t2 = prog.ttype(prog.local(d2), prog.enc(d2, p2))
        tc2 = prog.ttype(prog.local(cd2), prog.enc(cd2, cp2))
        tc1 = prog.ttype(prog.local(cd1), prog.enc(cd1, cp1))
        attrs = " reduce = sum" if op in ("allreduce", "reduce_scatter", "make_partial") else ""
        async_ = op not in ("all_slice", "make_partial") and n % 2 == 1
        y = prog.fresh("y")
        if async_:
            f = prog.fresh("f")
            prog.emit(
                f"{f} = dist.{op} {x} on #mesh axes = [{axis}]{attrs} stream = mp "
                f": {t1} -> !dist.future<{t2}>"
            )
            prog.emit(f"{y} = dist.wait {f} : !dist.future<{t2}>")
        else:
            prog.emit(f"{y} = dist.{op} {x} on #mesh axes = [{axis}]{attrs} : {t1} -> {t2}")
        t = prog.fresh("t")
        prog.emit(f'{t} = "test.transpose"({y}, {g}) : ({t2}, {tc2}) -> {tc1}')
        lhs = prog.dot(prog.replicated(g, cd2, cp2), prog.replicated(y, d2, p2))
        rhs = prog.dot(prog.replicated(t, cd1, cp1), prog.replicated(x, d1, p1))
        want = prog.fresh("want")
        prog.emit(f"{want} = arith.constant {expected_dot:.1f} : f32")
        bad = prog.add(prog.differs(lhs, rhs), prog.differs(lhs, want))
        block = prog.block(cd1, "%G")
        bad = prog.add(bad, prog.check(t, cd1, cp1, block))
        prog.end(bad)
    # test.transpose is not a registered op: dist-opt replaces it first.
    lowered = subprocess.run(
        [args.dist_opt, "--allow-unregistered-dialect", "--test-dist-transpose", "-"],
        input=prog.text(),
        capture_output=True,
        text=True,
    )
    if lowered.returncode != 0:
        sys.stderr.write(lowered.stderr)
        print("FAILED: dist-opt --test-dist-transpose")
        sys.exit(1)
    if args.print:
        print(lowered.stdout)
        return
    ranks = dist.run_on_mpi(lowered.stdout, procs, timeout=args.timeout, native=args.native)
    label = f"[{', '.join(map(str, mesh))}]" + (f" ids {ids}" if ids else "")
    bad = [
        (r, todo[i], int(c))
        for r, printed in enumerate(ranks)
        for i, c in enumerate(printed[0])
        if c != 0
    ]
    for rank, (op, axis, d1, d2, c2, c1), c in bad[:20]:
        print(
            f"FAILED: on {label}, rank {rank}: {op} on axis {axis} {d1} -> {d2}, "
            f"cotangent {c2} -> {c1}: {c} checks failed"
        )
    ops = sorted({c[0] for c in todo})
    status = "ok" if not bad else "FAILED"
    textir.finish(
        not bad,
        f"{status}: {len(todo)} transposes ({', '.join(ops)}) on mesh {label} "
        f"({procs} processes): <g, A x> = <A^T g, x> and A^T g = G blockwise",
    )


if __name__ == "__main__":
    main()
