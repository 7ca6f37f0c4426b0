#!/usr/bin/env python3
"""Numerical equivalence of dist rewrites on a real MPI runtime.

  cases.py CASE [--procs 2,4]

Each case is built here, with the dist Python package's program builder,
for any process count: a serial reference (one process, global shapes, no
communication) and an SPMD program that cuts its shard out of the same
global constants, runs the annotated step, and gathers every result back to
its global shape (each shard is inserted into zeros and summed over the axes
that split it), so every rank prints global values. The SPMD program runs
before and after the rewrite under test (dist.run_on_mpi), and the outputs
of every rank must match the reference within rtol 1e-4 / atol 1e-5.
"""
import argparse
import math
import sys

import numpy as np

import dist

RTOL, ATOL = 1e-4, 1e-5


def values(n, salt):
    """Deterministic values in [-1, 1] with a few distinct magnitudes."""
    return [((i * 37 + salt * 11) % 17 - 8) / 8.0 for i in range(n)]


class Program:
    """A module with @main under construction, on an optional mesh."""

    def __init__(self, ctx, mesh_shape=None, names=None):
        self.ctx = ctx
        self.module = dist.Module.create(ctx)
        self.mesh = (dist.Mesh(mesh_shape, names=names, context=ctx)
                     if mesh_shape else None)
        self.main = None
        self.coords = {}

    def start_main(self):
        self.main = self.module.function("main")
        return self.main

    def t(self, shape, elt="f32", dims=None, partial=None):
        """A tensor type, distributed on the mesh when `dims` is given."""
        d = None
        if dims is not None:
            d = dist.TensorDist(self.mesh, dims, partial or {})
        return dist.TensorType(shape, elt, d, context=self.ctx)

    def const(self, shape, vals, elt="f32"):
        return self.main.constant(np.array(vals).reshape(shape), self.t(shape, elt))

    def coord(self, axis):
        if axis not in self.coords:
            self.coords[axis] = self.main.process_coord(self.mesh, axis)
        return self.coords[axis]

    def offsets(self, local, dims):
        f = self.main
        return [0 if a < 0 else f.arith("muli", self.coord(a), f.index(size))
                for size, a in zip(local, dims)]

    def shard(self, glob, gshape, dims, elt="f32"):
        """The local shard of global tensor `glob`, with its encoding."""
        local = [g // self.mesh.shape[a] if a >= 0 else g
                 for g, a in zip(gshape, dims)]
        s = self.main.extract_slice(glob, self.offsets(local, dims), local)
        return self.main.cast(s, self.t(local, elt, dims)), local

    def gather(self, value, local, dims, elt="f32"):
        """The global tensor from every process's shard (replicated)."""
        f = self.main
        plain = f.cast(value, self.t(local, elt))
        if all(a < 0 for a in dims):
            return plain
        gshape = [l * self.mesh.shape[a] if a >= 0 else l
                  for l, a in zip(local, dims)]
        zero = f.constant(np.zeros(gshape), self.t(gshape, elt))
        ins = f.insert_slice(plain, zero, self.offsets(local, dims))
        axes = sorted(a for a in dims if a >= 0)
        return f.allreduce(ins, self.mesh, axes, "sum")

    def print(self, value, shape, elt="f32"):
        if elt != "f32":
            value = self.main.arith("uitofp", value,
                                    result_type=self.t(shape))
        self.main.print(value)

    def finish(self):
        self.main.return_()
        self.module.verify()
        return self.module


#===------------------------------------------------------------------------===#
# Cases
#===------------------------------------------------------------------------===#

def mlp(ctx, procs, rank3):
    """Column- then row-parallel linear, forward and backward; the column
    matmul_grad's dX allreduce is what --dist-matmul-grad-overlap moves."""
    lead = [2, 2] if rank3 else [4]
    H, F = 4, 8
    xs, gs, hs = lead + [H], lead + [H], lead + [F]
    vals = {"x": values(math.prod(xs), 1), "w1": values(H * F, 2),
            "w2": values(F * H, 3), "g": values(math.prod(gs), 4)}

    def body(p, spmd):
        f = p.start_main()
        x = p.const(xs, vals["x"]); w1 = p.const([H, F], vals["w1"])
        w2 = p.const([F, H], vals["w2"]); g = p.const(gs, vals["g"])
        r = [-1] * len(lead)
        if spmd:
            x, _ = p.shard(x, xs, r + [-1]); g, _ = p.shard(g, gs, r + [-1])
            w1, w1l = p.shard(w1, [H, F], [-1, 0])
            w2, w2l = p.shard(w2, [F, H], [0, -1])
            h = f.matmul(x, w1, dist=dist.TensorDist(p.mesh, r + [0]))
            op = f.matmul(h, w2, dist=dist.TensorDist(p.mesh, r + [-1],
                                                      {0: "sum"}))
            o = f.allreduce(op, p.mesh, [0])
        else:
            h = f.matmul(x, w1)
            o = f.matmul(h, w2)
        dh, dw2 = f.matmul_grad(h, w2, g)
        dxp, dw1 = f.matmul_grad(x, w1, dh, x_grad_dist=op.type.dist
                                 if spmd else "like")
        if spmd:
            dx = f.allreduce(dxp, p.mesh, [0])
            o, dx = p.gather(o, xs, r + [-1]), p.gather(dx, xs, r + [-1])
            dw1 = p.gather(dw1, w1l, [-1, 0]); dw2 = p.gather(dw2, w2l, [0, -1])
        else:
            dx = dxp
        for v, s in [(o, xs), (dx, xs), (dw1, [H, F]), (dw2, [F, H])]:
            p.print(v, s)
        return p.finish()

    serial = body(Program(ctx), False)
    spmd = body(Program(ctx, [procs], ["mp"]), True)
    return serial, spmd


def embedding(ctx, dp, mp):
    """Vocab-parallel embedding forward and backward on a [dp, mp] mesh; the
    table is perturbed on non-root dp replicas, so only the startup
    broadcast makes them agree."""
    B, S, V, D = 4, 3, 8, 3
    ids = [(i * 5 + 3) % V for i in range(B * S)]
    w = values(V * D, 5)
    dout = values(B * S * D, 6)

    serial = Program(ctx)
    f = serial.start_main()
    i = serial.const([B, S], ids, "i64"); W = serial.const([V, D], w)
    G = serial.const([B, S, D], [v / dp for v in dout])
    serial.print(f.embedding(i, W), [B, S, D])
    serial.print(f.embedding_grad(i, W, G), [V, D])
    serial = serial.finish()

    p = Program(ctx, [dp, mp], ["dp", "mp"])
    IDS = p.t([B // dp, S], "i64", [0, -1])
    WL = p.t([V // mp, D], "f32", [1, -1])
    GL = p.t([B // dp, S, D], "f32", [0, -1, -1])
    startup = p.module.function("startup", [(WL, {"dist.param": "w"})],
                                markers={"dist.startup": True})
    startup.return_(startup.arguments[0], result_markers=[{"dist.param": "w"}])
    step = p.module.function("step", [IDS, (WL, {"dist.param": "w"}), GL])
    sid, sw, sg = step.arguments
    step.return_(step.embedding(sid, sw, dist=GL.dist),
                 step.embedding_grad(sid, sw, sg))

    f = p.start_main()
    i = p.const([B, S], ids, "i64"); W = p.const([V, D], w)
    G = p.const([B, S, D], dout)
    il, _ = p.shard(i, [B, S], [0, -1], "i64")
    wl, _ = p.shard(W, [V, D], [1, -1])
    gl, _ = p.shard(G, [B, S, D], [0, -1, -1])
    # Replicas along dp start from different tables, as after a local init.
    ci = f.arith("index_cast", p.coord(0), result_type=dist.Type.parse("i32", ctx))
    cf = f.arith("sitofp", ci, result_type=dist.Type.parse("f32", ctx))
    pert = f.arith("addf", wl, f.splat(cf, WL))
    ws = f.call("startup", [pert], [WL])[0]
    e, dw = f.call("step", [il, ws, gl], [GL, WL])
    p.print(p.gather(e, [B // dp, S, D], [0, -1, -1]), [B, S, D])
    p.print(p.gather(dw, [V // mp, D], [1, -1]), [V, D])
    return serial, p.finish()


def dropout(ctx, procs):
    """A dropout and its recomputation in the backward: the recomputed mask
    must be the forward one on every process (and the serial one)."""
    R, C = 4, 8
    x = [v + 2.0 for v in values(R * C, 7)]  # nonzero, so zeros mark drops

    def body(p, spmd):
        f = p.start_main()
        X = p.const([R, C], x)
        if spmd:
            X, local = p.shard(X, [R, C], [-1, 0])
        y = f.dropout(X, 0.5, fix_seed=7, id="d")
        # The serial reference states the intent: the same seed.
        z = f.dropout(X, 0.5, fix_seed=None if spmd else 7, recompute_of="d")
        if spmd:
            y, z = p.gather(y, local, [-1, 0]), p.gather(z, local, [-1, 0])
        p.print(y, [R, C]); p.print(z, [R, C])
        return p.finish()

    return body(Program(ctx), False), body(Program(ctx, [procs], ["mp"]), True)


def amp(ctx, procs):
    """An AMP step over one gradient, rewritten in process by
    --dist-amp-check-finite; process 1 holds an inf. main calls the step."""
    p = Program(ctx, [procs], ["dp"])
    G = p.t([4], "f32", [-1])
    LS = dist.TensorType([1], "f32", context=ctx)
    step = p.module.function("step", [G, (LS, {"dist.loss_scale": True})])
    step.return_(step.arguments[0], result_markers=[{"dist.grad": "p"}])
    p.module.run("dist-amp-check-finite")

    F = p.t([1], "i1", [-1])
    f = p.start_main()
    g = p.const([4], [1.0, 2.0, 3.0, 4.0])
    is1 = f.arith("cmpi", p.coord(0), f.index(1), predicate="eq",
                  result_type=dist.Type.parse("i1", ctx))
    inf = f.constant(np.array([np.inf, 2.0, 3.0, 4.0]), p.t([4]))
    bad = f.arith("select", is1, inf, g, result_type=p.t([4]))
    ls = f.constant(np.array([2.0]), LS)
    r = f.call("step", [f.cast(bad, G), ls], [G, F])
    p.print(f.cast(r[1], p.t([1], "i1")), [1], "i1")
    return p.finish()


#===------------------------------------------------------------------------===#
# Running and comparing
#===------------------------------------------------------------------------===#

def run(module, procs, flags=""):
    ranks = dist.run_on_mpi(module, procs, pass_flags=flags)
    return [[a.reshape(-1) for a in arrays] for arrays in ranks]


def close(a, b):
    return a.shape == b.shape and np.allclose(a, b, rtol=RTOL, atol=ATOL)


def check(name, reference, ranks):
    ok = True
    for r, arrays in enumerate(ranks):
        if len(arrays) != len(reference) or not all(
                close(a, b) for a, b in zip(arrays, reference)):
            print(f"MISMATCH {name}: rank {r}\n  got      {arrays}\n"
                  f"  expected {reference}")
            ok = False
    print(f"{'ok' if ok else 'FAILED'}: {name} ({len(ranks)} processes)")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("case", choices=["mlp", "mlp3", "embedding", "dropout", "amp"])
    parser.add_argument("--procs", default="2,4")
    args = parser.parse_args()
    ctx = dist.Context()
    ok = True
    for procs in [int(n) for n in args.procs.split(",")]:
        if args.case in ("mlp", "mlp3"):
            serial, spmd = mlp(ctx, procs, args.case == "mlp3")
            ref = run(serial, 1)[0]
            for label, flags in [("before", ""), ("overlap", "--dist-matmul-grad-overlap"),
                                 ("auto-parallel", "--dist-auto-parallel")]:
                ok &= check(f"{args.case} {label}", ref, run(spmd, procs, flags))
        elif args.case == "embedding":
            dp, mp = (1, 2) if procs == 2 else (2, 2)
            serial, spmd = embedding(ctx, dp, mp)
            ref = run(serial, 1)[0]
            for label, flags in [("parallel-embedding", "--dist-parallel-embedding"),
                                 ("auto-parallel", "--dist-auto-parallel")]:
                ok &= check(f"embedding [{dp}, {mp}] {label}", ref,
                            run(spmd, procs, flags))
        elif args.case == "dropout":
            serial, spmd = dropout(ctx, procs)
            ref = run(serial, 1)[0]
            if not np.array_equal(ref[0], ref[1]):
                sys.exit("FAIL: the serial reference's recomputed mask differs")
            # The MPI lowering first, then the rest: the dropout still draws
            # the mask of its global elements.
            for label, flags in [("dropout seed", "--dist-dropout-seed"),
                                 ("dropout seed, mpi lowered first",
                                  "--dist-dropout-seed --convert-dist-to-mpi")]:
                ranks = run(spmd, procs, flags)
                ok &= check(label, ref, ranks)
                ok &= all(np.array_equal(arrays[0], arrays[1]) for arrays in ranks)
        elif args.case == "amp":
            # Only process 1 saw the inf; every process must say found_inf.
            ok &= check("amp found_inf", [np.array([1.0])], run(amp(ctx, procs), procs))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
