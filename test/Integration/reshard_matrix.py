#!/usr/bin/env python3
"""Every reshard between the distributions of a rank-2 tensor, on MPI.

  reshard_matrix.py MESH [--kinds sum,max] [--ids PERMUTATION] [--native]
                         [--limit N]

MESH is a mesh shape ("2,4"). The distributions are every dims mapping of a
rank-2 tensor on it, and on each axis that maps no dim: replicated or
partial with each kind in --kinds. For every ordered pair (from, to) the
program builds this process's piece of a closed-form global tensor
X[i, j] = i * W + j + 1 in `from` (the partial terms are exact: over a sum
axis of n processes, coordinate 0 holds x - (n - 1) and the others 1; over
a max axis the others hold x - 1 - c), reshards it to `to`
(--dist-lower-reshard plans it, the MPI lowering runs it), completes a
partial result with allreduces in ascending axis order, and compares its
local block with the block of X that `to` gives this process: no gather.
Every process prints its count of mismatching elements per pair; all must
be zero.
"""
import argparse
import itertools
import sys

import numpy as np

import dist
import textir


def distributions(mesh, kinds):
    """Every distribution of a rank-2 tensor on `mesh`, each partial axis
    with each of `kinds`."""
    out = []
    for dims, free in textir.distributions(2, len(mesh)):
        if len(free) != len([a for a in range(len(mesh)) if a not in dims]):
            continue
        for states in itertools.product([None, *kinds], repeat=len(free)):
            partial = {a: k for a, k in zip(free, states) if k}
            out.append((tuple(dims), partial))
    return out


class Program(textir.Body):
    def __init__(self, mesh, ids, shape):
        super().__init__(mesh)
        self.mesh, self.shape = mesh, shape
        text = ", ".join(map(str, mesh))
        ids_text = f", process_ids = [{', '.join(map(str, ids))}]" if ids else ""
        self.head = f"#mesh = #dist.mesh<shape = [{text}]{ids_text}>\n"
        glob = np.arange(shape[0] * shape[1], dtype=np.float32).reshape(shape) + 1
        rows = ", ".join("[" + ", ".join(f"{v:.1f}" for v in r) + "]" for r in glob)
        self.glob_text = f"dense<[{rows}]>"
        self.functions = []
        self.counts = 0

    def begin(self):
        """Starts the function of one case: small functions keep the JIT's
        compile time linear in the number of cases."""
        self.lines = []
        for a in range(len(self.mesh)):
            self.emit(f"%crd{a} = dist.process_coord #mesh axis = {a}")
            self.emit(f"%crdi{a} = arith.index_cast %crd{a} : index to i32")
            self.emit(f"%crdf{a} = arith.sitofp %crdi{a} : i32 to f32")
        self.emit(f"%X = arith.constant {self.glob_text} : {self.ttype(self.shape)}")
        self.emit("%zero = arith.constant 0 : index")
        self.emit("%f0 = arith.constant dense<0.0> : tensor<f32>")

    def end(self, count):
        name = f"@case{len(self.functions)}"
        self.functions.append(
            f"func.func private {name}() -> f32 {{\n"
            + "\n".join(self.lines)
            + f"\n  return {count} : f32\n}}\n"
        )

    def local(self, dims):
        return self.local_shape(self.shape, dims)

    def block(self, dims, glob="%X"):
        """This process's block of the global constant `glob` (X) under
        `dims`, plain."""
        return self.slice_of(glob, self.shape, self.local(dims), dims)

    def source(self, dims, partial, glob="%X"):
        """The encoded piece of `glob` (X) in (dims, partial): partial terms made
        for the outermost (last) axis first, so that reducing in ascending
        axis order gives X back."""
        local = self.local(dims)
        t = self.block(dims, glob)
        ty = self.ttype(local)
        for a, kind in sorted(partial.items(), reverse=True):
            n = self.mesh[a]
            first = self.fresh("first")
            self.emit(f"{first} = arith.cmpi eq, %crd{a}, %zero : index")
            if kind == "sum":
                held = self.fresh()
                self.emit(f"{held} = arith.subf {t}, {self.splat(float(n - 1), local)} : {ty}")
                other = self.splat(1.0, local)
            else:
                held = t
                c = self.fresh("cs")
                self.emit(f"{c} = tensor.splat %crdf{a} : {ty}")
                d = self.fresh()
                self.emit(f"{d} = arith.addf {c}, {self.splat(1.0, local)} : {ty}")
                other = self.fresh()
                op = "subf" if kind == "max" else "addf"
                self.emit(f"{other} = arith.{op} {t}, {d} : {ty}")
            r = self.fresh()
            self.emit(f"{r} = arith.select {first}, {held}, {other} : {ty}")
            t = r
        e = self.fresh("src")
        self.emit(
            f"{e} = tensor.cast {t} : {ty} to " f"{self.ttype(local, self.enc(dims, partial))}"
        )
        return e

    def check(self, value, dims, partial, expected):
        """Appends the count of elements of `value` (in dims, partial) that
        differ from `expected` (this process's complete block)."""
        local = self.local(dims)
        ty = self.ttype(local)
        p = self.fresh("p")
        self.emit(
            f"{p} = tensor.cast {value} : " f"{self.ttype(local, self.enc(dims, partial))} to {ty}"
        )
        for a, kind in sorted(partial.items()):
            q = self.fresh("p")
            self.emit(
                f"{q} = dist.allreduce {p} on #mesh axes = [{a}] " f"reduce = {kind} : {ty} -> {ty}"
            )
            p = q
        ne = self.fresh("ne")
        self.emit(f"{ne} = arith.cmpf one, {p}, {expected} : {ty}")
        nef = self.fresh("nef")
        self.emit(f"{nef} = arith.uitofp {ne} : {ty.replace('xf32', 'xi1')} to {ty}")
        return self.sum_all(nef, ty)

    def sum_all(self, value, ty):
        """The f32 sum of every element of the rank-2 `value` of type `ty`."""
        s = self.fresh("sum")
        self.emit(
            f"{s} = linalg.reduce ins({value} : {ty}) outs(%f0 : tensor<f32>) "
            "dimensions = [0, 1]"
        )
        self.emit("    (%in: f32, %acc: f32) {")
        self.emit("      %add = arith.addf %in, %acc : f32")
        self.emit("      linalg.yield %add : f32")
        self.emit("    }")
        c = self.fresh("count")
        self.emit(f"{c} = tensor.extract {s}[] : tensor<f32>")
        return c

    def text(self):
        n = len(self.functions)
        body = [f"  %c{i} = func.call @case{i}() : () -> f32" for i in range(n)]
        body.append(
            f"  %counts = tensor.from_elements "
            f"{', '.join(f'%c{i}' for i in range(n))} : tensor<{n}xf32>"
        )
        body.append(
            f"  %buf = bufferization.to_buffer %counts : tensor<{n}xf32> " f"to memref<{n}xf32>"
        )
        body.append(f"  %u = memref.cast %buf : memref<{n}xf32> to memref<*xf32>")
        body.append("  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()")
        return (
            self.head
            + "func.func private @printMemrefF32(memref<*xf32>)\n"
            + "".join(self.functions)
            + "func.func @main() {\n"
            + "\n".join(body)
            + "\n  return\n}\n"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mesh")
    parser.add_argument("--kinds", default="sum,max")
    parser.add_argument("--ids", default="")
    parser.add_argument("--native", action="store_true")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument(
        "--every", type=int, default=1, help="run every N-th pair only (a fixed sample)"
    )
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument(
        "--print", action="store_true", help="print the program instead of running it"
    )
    args = parser.parse_args()
    mesh = [int(s) for s in args.mesh.split(",")]
    ids = [int(s) for s in args.ids.split(",")] if args.ids else []
    kinds = [k for k in args.kinds.split(",") if k]
    procs = int(np.prod(mesh))
    size = int(np.lcm.reduce(mesh)) * 2
    shape = [size, size]
    dists = distributions(mesh, kinds)
    pairs = [(a, b) for a in dists for b in dists]
    pairs = pairs[:: args.every]
    if args.limit:
        pairs = pairs[: args.limit]
    prog = Program(mesh, ids, shape)
    for (dims, partial), (tdims, tpartial) in pairs:
        prog.begin()
        src = prog.source(dims, partial)
        expected = prog.block(tdims)
        r = prog.let(
            "r",
            f"dist.reshard {src} : "
            f"{prog.ttype(prog.local(dims), prog.enc(dims, partial))} -> "
            f"{prog.ttype(prog.local(tdims), prog.enc(tdims, tpartial))}",
        )
        prog.end(prog.check(r, tdims, tpartial, expected))
    if args.print:
        print(prog.text())
        return
    ranks = dist.run_on_mpi(prog.text(), procs, native=args.native, timeout=args.timeout)
    bad = []
    for rank, printed in enumerate(ranks):
        counts = printed[0]
        for i, c in enumerate(counts):
            if c != 0:
                bad.append((rank, pairs[i], int(c)))
    label = f"[{', '.join(map(str, mesh))}]" + (f" ids {ids}" if ids else "")
    for rank, ((d, p), (td, tp)), c in bad[:20]:
        print(f"FAILED: on {label}, rank {rank}: {d} {p} -> {td} {tp}: " f"{c} elements differ")
    status = "ok" if not bad else "FAILED"
    print(
        f"{status}: {len(pairs)} reshards between {len(dists)} distributions "
        f"on mesh {label} ({procs} processes), each process's block equal "
        f"to the closed form"
    )
    sys.exit(0 if not bad else 1)


if __name__ == "__main__":
    main()
