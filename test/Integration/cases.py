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
import os
import subprocess
import sys
import tempfile

import numpy as np

import dist

RTOL, ATOL = 1e-4, 1e-5


def values(n, salt):
    """Deterministic values in [-1, 1] with a few distinct magnitudes."""
    return [((i * 37 + salt * 11) % 17 - 8) / 8.0 for i in range(n)]


class Program:
    """A module with @main under construction, on an optional mesh."""

    def __init__(self, ctx, mesh_shape=None, names=None, process_ids=None):
        self.ctx = ctx
        self.module = dist.Module.create(ctx)
        self.mesh = (
            dist.Mesh(mesh_shape, names=names, process_ids=process_ids, context=ctx)
            if mesh_shape
            else None
        )
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
        return [
            0 if a < 0 else f.arith("muli", self.coord(a), f.index(size))
            for size, a in zip(local, dims)
        ]

    def shard(self, glob, gshape, dims, elt="f32"):
        """The local shard of global tensor `glob`, with its encoding."""
        local = [g // self.mesh.shape[a] if a >= 0 else g for g, a in zip(gshape, dims)]
        s = self.main.extract_slice(glob, self.offsets(local, dims), local)
        return self.main.cast(s, self.t(local, elt, dims)), local

    def gather(self, value, local, dims, elt="f32"):
        """The global tensor from every process's shard (replicated)."""
        f = self.main
        plain = f.cast(value, self.t(local, elt))
        if all(a < 0 for a in dims):
            return plain
        gshape = [l * self.mesh.shape[a] if a >= 0 else l for l, a in zip(local, dims)]
        zero = f.constant(np.zeros(gshape), self.t(gshape, elt))
        ins = f.insert_slice(plain, zero, self.offsets(local, dims))
        axes = sorted(a for a in dims if a >= 0)
        return f.allreduce(ins, self.mesh, axes, "sum")

    def print(self, value, shape, elt="f32"):
        if elt != "f32":
            value = self.main.arith("uitofp", value, result_type=self.t(shape))
        self.main.print(value)

    def finish(self):
        self.main.return_()
        self.module.verify()
        return self.module


# ===------------------------------------------------------------------------===#
# Cases
# ===------------------------------------------------------------------------===#


def mlp(ctx, procs, rank3):
    """Column- then row-parallel linear, forward and backward; the column
    matmul_grad's dX allreduce is what --dist-matmul-grad-overlap moves."""
    lead = [2, 2] if rank3 else [4]
    H, F = 4, 8
    xs, gs = lead + [H], lead + [H]
    vals = {
        "x": values(math.prod(xs), 1),
        "w1": values(H * F, 2),
        "w2": values(F * H, 3),
        "g": values(math.prod(gs), 4),
    }

    def body(p, spmd):
        f = p.start_main()
        x = p.const(xs, vals["x"])
        w1 = p.const([H, F], vals["w1"])
        w2 = p.const([F, H], vals["w2"])
        g = p.const(gs, vals["g"])
        r = [-1] * len(lead)
        if spmd:
            x, _ = p.shard(x, xs, r + [-1])
            g, _ = p.shard(g, gs, r + [-1])
            w1, w1l = p.shard(w1, [H, F], [-1, 0])
            w2, w2l = p.shard(w2, [F, H], [0, -1])
            h = f.matmul(x, w1, dist=dist.TensorDist(p.mesh, r + [0]))
            op = f.matmul(h, w2, dist=dist.TensorDist(p.mesh, r + [-1], {0: "sum"}))
            o = f.allreduce(op, p.mesh, [0])
        else:
            h = f.matmul(x, w1)
            o = f.matmul(h, w2)
        dh, dw2 = f.matmul_grad(h, w2, g)
        dxp, dw1 = f.matmul_grad(x, w1, dh, x_grad_dist=op.type.dist if spmd else "like")
        if spmd:
            dx = f.allreduce(dxp, p.mesh, [0])
            o, dx = p.gather(o, xs, r + [-1]), p.gather(dx, xs, r + [-1])
            dw1 = p.gather(dw1, w1l, [-1, 0])
            dw2 = p.gather(dw2, w2l, [0, -1])
        else:
            dx = dxp
        for v, s in [(o, xs), (dx, xs), (dw1, [H, F]), (dw2, [F, H])]:
            p.print(v, s)
        return p.finish()

    serial = body(Program(ctx), False)
    spmd = body(Program(ctx, [procs], ["mp"]), True)
    return serial, spmd


def embedding(ctx, dp, mp, local_init=True):
    """Vocab-parallel embedding forward and backward on a [dp, mp] mesh; with
    `local_init`, the table is perturbed on non-root dp replicas, so only the
    startup broadcast makes them agree. (Such a program lies about its
    table, declared the same on every dp replica: the distribution check
    rejects it, so it runs only through --dist-parallel-embedding, which
    does not check; a checked program gets per-process initial values from
    outside, as function arguments.)"""
    B, S, V, D = 12, 2, 12, 3  # divisible by every mesh axis size up to 4
    ids = [(i * 5 + 3) % V for i in range(B * S)]
    w = values(V * D, 5)
    dout = values(B * S * D, 6)

    serial = Program(ctx)
    f = serial.start_main()
    i = serial.const([B, S], ids, "i64")
    W = serial.const([V, D], w)
    G = serial.const([B, S, D], [v / dp for v in dout])
    serial.print(f.embedding(i, W), [B, S, D])
    serial.print(f.embedding_grad(i, W, G), [V, D])
    serial = serial.finish()

    p = Program(ctx, [dp, mp], ["dp", "mp"])
    IDS = p.t([B // dp, S], "i64", [0, -1])
    WL = p.t([V // mp, D], "f32", [1, -1])
    GL = p.t([B // dp, S, D], "f32", [0, -1, -1])
    startup = p.module.function(
        "startup", [(WL, {"dist.param": "w"})], markers={"dist.startup": True}
    )
    startup.return_(startup.arguments[0], result_markers=[{"dist.param": "w"}])
    step = p.module.function("step", [IDS, (WL, {"dist.param": "w"}), GL])
    sid, sw, sg = step.arguments
    step.return_(step.embedding(sid, sw, dist=GL.dist), step.embedding_grad(sid, sw, sg))

    f = p.start_main()
    i = p.const([B, S], ids, "i64")
    W = p.const([V, D], w)
    G = p.const([B, S, D], dout)
    il, _ = p.shard(i, [B, S], [0, -1], "i64")
    wl, _ = p.shard(W, [V, D], [1, -1])
    gl, _ = p.shard(G, [B, S, D], [0, -1, -1])
    if local_init:
        # Replicas along dp start from different tables, as after a local
        # init.
        ci = f.arith("index_cast", p.coord(0), result_type=dist.Type.parse("i32", ctx))
        cf = f.arith("sitofp", ci, result_type=dist.Type.parse("f32", ctx))
        wl = f.arith("addf", wl, f.splat(cf, WL))
    ws = f.call("startup", [wl], [WL])[0]
    e, dw = f.call("step", [il, ws, gl], [GL, WL])
    p.print(p.gather(e, [B // dp, S, D], [0, -1, -1]), [B, S, D])
    p.print(p.gather(dw, [V // mp, D], [1, -1]), [V, D])
    return serial, p.finish()


def dropout(ctx, dp, mp):
    """Dropouts and their recomputations in the backward on a [dp, mp] mesh:
    `a` is split over mp and replicated over dp, `b` split over dp and
    replicated over mp. Every process prints the gathered global masks (they
    must be the serial ones: recomputation included) and then its own local
    shards of the forward masks, which main() compares across processes."""
    R, C = 6, 12
    xa = [v + 2.0 for v in values(R * C, 7)]  # nonzero, so zeros mark drops
    xb = [v + 2.0 for v in values(R * C, 8)]
    # Two probabilities other than 0.5 (where scaling the kept elements by
    # 1/p and by 1/(1-p) agree): check_dropout_values tells them apart.
    specs = [("a", xa, 7, [-1, 1], 0.3), ("b", xb, 8, [0, -1], 0.75)]

    def body(p, spmd):
        f = p.start_main()
        local_prints = []
        for name, x, seed, dims, prob in specs:
            X = p.const([R, C], x)
            if spmd:
                X, local = p.shard(X, [R, C], dims)
            y = f.dropout(X, prob, fix_seed=seed, id=name)
            # The serial reference states the intent: the same seed.
            z = f.dropout(X, prob, fix_seed=None if spmd else seed, recompute_of=name)
            if spmd:
                local_prints.append((f.cast(y, p.t(local)), local))
                y, z = p.gather(y, local, dims), p.gather(z, local, dims)
            p.print(y, [R, C])
            p.print(z, [R, C])
        for v, local in local_prints:
            p.print(v, local)
        return p.finish()

    serial = body(Program(ctx), False)
    spmd = body(Program(ctx, [dp, mp], ["dp", "mp"]), True)
    return serial, spmd, specs


def check_dropout_values(specs, ref):
    """Paddle's upscale-in-train, from the inputs rather than from another
    run of the same lowering: each output element is 0 or x / (1 - prob),
    and about 1 - prob of them are kept."""
    ok = True
    for i, (name, x, _, _, prob) in enumerate(specs):
        x = np.array(x, dtype=np.float32).reshape(ref[2 * i].shape)
        y = ref[2 * i]
        kept = y != 0
        # (printMemrefF32 prints six significant digits)
        scaled = np.allclose(y[kept], x[kept] / (1 - prob), rtol=1e-5)
        fraction = kept.mean()
        # 72 elements: a kept fraction within 0.2 of 1 - prob.
        if not scaled or abs(fraction - (1 - prob)) > 0.2:
            print(
                f"MISMATCH dropout {name}: prob {prob}: kept {fraction:.2f}, "
                f"scaled by 1/(1-p): {scaled}"
            )
            ok = False
    print(
        f"{'ok' if ok else 'FAILED'}: dropout values: kept elements scaled by "
        f"1/(1-p), about 1-p of them kept (p = "
        f"{', '.join(str(s[4]) for s in specs)})"
    )
    return ok


def check_local_masks(name, mesh, ranks, dims_list, first):
    """Shards of one value on processes that differ only along an axis that
    replicates it must be equal; on processes that differ along the axis that
    splits it they must differ (independent masks)."""
    ok = True
    for i, dims in enumerate(dims_list):
        split = [a for a in dims if a >= 0]
        for r in range(len(ranks)):
            for q in range(r + 1, len(ranks)):
                cr, cq = mesh.coord(r), mesh.coord(q)
                same = all(cr[a] == cq[a] for a in split)
                mr = ranks[r][first + i] == 0
                mq = ranks[q][first + i] == 0
                if same != bool(np.array_equal(mr, mq)):
                    print(
                        f"MISMATCH {name}: value {i} {dims}: ranks {r} and {q} "
                        f"({'should' if same else 'should not'} share a mask)"
                    )
                    ok = False
    print(f"{'ok' if ok else 'FAILED'}: {name} local masks ({len(ranks)} processes)")
    return ok


def amp(ctx, procs, infs, bad_value=np.inf):
    """An AMP step rewritten in process by --dist-amp-check-finite: the
    gradient `g` (`bad_value`, an inf or a NaN, on the processes whose
    coordinate is below `infs`),
    a later use of it (the update w - g, which must read the unscaled
    gradient) and found_inf. Every process prints all three."""
    p = Program(ctx, [procs], ["dp"])
    G = p.t([4], "f32", [-1])
    LS = dist.TensorType([1], "f32", context=ctx)
    step = p.module.function("step", [G, G, (LS, {"dist.loss_scale": True})])
    g, w, _ = step.arguments
    new = step.arith("subf", w, g)
    step.return_(g, new, result_markers=[{"dist.grad": "p"}, {}])
    p.module.run("dist-amp-check-finite")

    F = p.t([1], "i1", [-1])
    f = p.start_main()
    g = p.const([4], AMP_GRAD)
    w = p.const([4], AMP_WEIGHT)
    has_inf = f.arith(
        "cmpi", p.coord(0), f.index(infs), predicate="slt", result_type=dist.Type.parse("i1", ctx)
    )
    inf = f.constant(np.array([bad_value] + AMP_GRAD[1:]), p.t([4]))
    bad = f.arith("select", has_inf, inf, g, result_type=p.t([4]))
    ls = f.constant(np.array([AMP_SCALE]), LS)
    r = f.call("step", [f.cast(bad, G), f.cast(w, G), ls], [G, G, F])
    p.print(f.cast(r[0], p.t([4])), [4])
    p.print(f.cast(r[1], p.t([4])), [4])
    p.print(f.cast(r[2], p.t([1], "i1")), [1], "i1")
    return p.finish()


AMP_GRAD = [8.0, 2.0, 3.0, 4.0]
AMP_WEIGHT = [1.0, 1.0, 1.0, 1.0]
AMP_SCALE = 4.0


def amp_expected(rank, infs, bad_value=np.inf):
    """Paddle's check_finite_and_unscale: every gradient times 1/scale (an
    inf stays inf, a NaN NaN), found_inf the OR over all processes."""
    g = np.array(([bad_value] if rank < infs else AMP_GRAD[:1]) + AMP_GRAD[1:])
    u = g / AMP_SCALE
    return [u, np.array(AMP_WEIGHT) - u, np.array([1.0 if infs > 0 else 0.0])]


ASYNC_BASE = [1.0, -2.0, 0.5, 3.0]
ASYNC_STEP = [0.5, 1.0, -0.25, -2.0]


def collectives(ctx, procs):
    """Every reduction kind of dist.allreduce, asynchronous (on a stream,
    completed by dist.wait after unrelated work) and synchronous, over
    values that differ by process: x_r = base + r * step."""
    p = Program(ctx, [procs], ["mp"])
    f = p.start_main()
    ci = f.arith("index_cast", p.coord(0), result_type=dist.Type.parse("i32", ctx))
    cf = f.arith("sitofp", ci, result_type=dist.Type.parse("f32", ctx))
    x = f.arith(
        "addf",
        p.const([4], ASYNC_BASE),
        f.arith("mulf", f.splat(cf, p.t([4])), p.const([4], ASYNC_STEP)),
    )
    for kind in REDUCTIONS:
        part = f.cast(x, p.t([4], "f32", [-1], {0: "sum" if kind == "avg" else kind}))
        fut = f.allreduce(part, p.mesh, [0], kind, stream="mp")
        f.scale(x, 2.0)  # work between issue and completion
        a = f.wait(fut)
        s = f.allreduce(part, p.mesh, [0], kind)
        p.print(f.cast(a, p.t([4])), [4])
        p.print(f.cast(s, p.t([4])), [4])
    return p.finish()


REDUCTIONS = ["sum", "max", "min", "prod", "avg"]


def collectives_expected(procs):
    xs = np.array([[b + r * d for b, d in zip(ASYNC_BASE, ASYNC_STEP)] for r in range(procs)])
    out = []
    for red in [xs.sum(0), xs.max(0), xs.min(0), xs.prod(0), xs.mean(0)]:
        out += [red, red]
    return out


# World-rank order is the opposite of coordinate order in every group of
# this mesh: a communicator that orders its members by rank, not by their
# position along the axes, hands a broadcast another root.
GROUPS_MESH = ([2, 2], [3, 1, 2, 0])


def collectives_groups(ctx):
    """Collectives over one axis of a [2, 2] mesh (groups of two, smaller
    than the world) whose process ids are permuted, on v = 10 c0 + c1 + base:
    an avg over mp, a sum over dp, broadcasts from group positions 1 (over
    dp) and 0 (over mp), blocking and on a stream."""
    shape, ids = GROUPS_MESH
    p = Program(ctx, shape, ["dp", "mp"], ids)
    f = p.start_main()
    f32 = dist.Type.parse("f32", ctx)

    def scalar(axis):
        i = f.arith("index_cast", p.coord(axis), result_type=dist.Type.parse("i32", ctx))
        return f.arith("sitofp", i, result_type=f32)

    ten = f.constant(10.0, "f32")
    v = f.arith("addf", f.arith("mulf", scalar(0), ten), scalar(1))
    x = f.arith("addf", p.const([4], ASYNC_BASE), f.splat(v, p.t([4])))
    sums = lambda axis: p.t([4], "f32", [-1], {axis: "sum"})
    for stream in (None, "mp"):

        def done(value):
            return f.wait(value) if stream else value

        avg = done(f.allreduce(f.cast(x, sums(1)), p.mesh, [1], "avg", stream=stream))
        total = done(f.allreduce(f.cast(x, sums(0)), p.mesh, [0], "sum", stream=stream))
        b0 = done(f.broadcast(x, p.mesh, [0], root=1, stream=stream))
        b1 = done(f.broadcast(x, p.mesh, [1], root=0, stream=stream))
        for value in (avg, total, b0, b1):
            p.print(f.cast(value, p.t([4])), [4])
    return p.finish()


def collectives_groups_expected(ctx, rank):
    shape, ids = GROUPS_MESH
    c0, c1 = dist.Mesh(shape, process_ids=ids, context=ctx).coord(rank)
    x = lambda a, b: np.array(ASYNC_BASE) + 10 * a + b
    out = [(x(c0, 0) + x(c0, 1)) / 2, x(0, c1) + x(1, c1), x(1, c1), x(c0, 0)]
    return out + out


# ===------------------------------------------------------------------------===#
# Running and comparing
# ===------------------------------------------------------------------------===#

# Set by --native and --hosts: how the SPMD programs run.
NATIVE, HOSTS, MATMUL = False, None, "blas"
NATIVE_OK = [True]


def flat(ranks):
    return [[a.reshape(-1) for a in arrays] for arrays in ranks]


def run_native(module, procs, flags):
    """Builds the program with dist-compile and starts it the way a cluster
    would: plain mpiexec.mpich, a bare environment, nothing of LLVM on PATH
    (an empty directory), each rank's output to its own file."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = dist.build_native(
            module, procs, os.path.join(tmp, "step"), pass_flags=flags, matmul=MATMUL, verify=False
        )
        empty = os.path.join(tmp, "empty-path")
        os.mkdir(empty)
        cmd = [
            "/usr/bin/mpiexec.mpich",
            "-n",
            str(procs),
            "-outfile-pattern",
            os.path.join(tmp, "out.%r"),
        ]
        if HOSTS:
            cmd += ["-hosts", HOSTS]
        env = {"PATH": empty}
        if "MPIR_CVAR_NOLOCAL" in os.environ:
            env["MPIR_CVAR_NOLOCAL"] = os.environ["MPIR_CVAR_NOLOCAL"]
        done = subprocess.run(cmd + [exe], env=env, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            sys.exit(
                f"FAILED: the native executable exited {done.returncode}:\n"
                f"{done.stdout}{done.stderr}"
            )
        ranks = []
        for rank in range(procs):
            with open(os.path.join(tmp, f"out.{rank}")) as f:
                ranks.append(dist.parse_rank_output(f.read()))
        return ranks


def run(module, procs, flags=""):
    """Every rank's printed arrays; with --native the program also runs as
    a native executable under plain mpiexec (run_native), which must print
    exactly the same. The harness around the step cuts each process's
    shard out of global constants by its coordinates, which the
    distribution check cannot tell from values that really differ: the
    programs are lowered unchecked (verify=False); the rewrites themselves
    are checked by their passes' pipeline runs and the lit tests."""
    if procs == 1:
        return flat(dist.run_on_mpi(module, 1, pass_flags=flags, matmul=MATMUL, verify=False))
    ranks = flat(
        dist.run_on_mpi(module, procs, pass_flags=flags, hosts=HOSTS, matmul=MATMUL, verify=False)
    )
    if NATIVE:
        native = flat(run_native(module, procs, flags))
        same = len(native) == len(ranks) and all(
            len(a) == len(b) and all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b))
            for a, b in zip(ranks, native)
        )
        print(
            f"{'ok' if same else 'FAILED'}: native executable prints what the JIT "
            f"prints ({procs} processes{', ' + flags if flags else ''})"
        )
        NATIVE_OK[0] &= same
    return ranks


def close(a, b):
    # NaN where NaN is expected (the AMP case injects them).
    return a.shape == b.shape and np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True)


def check(name, reference, ranks):
    ok = True
    for r, arrays in enumerate(ranks):
        if len(arrays) != len(reference) or not all(close(a, b) for a, b in zip(arrays, reference)):
            print(f"MISMATCH {name}: rank {r}\n  got      {arrays}\n" f"  expected {reference}")
            ok = False
    print(f"{'ok' if ok else 'FAILED'}: {name} ({len(ranks)} processes)")
    return ok


def meshes(text):
    return [tuple(int(n) for n in m.split("x")) for m in text.split(",")]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "case", choices=["mlp", "mlp3", "embedding", "dropout", "amp", "collectives"]
    )
    parser.add_argument("--procs", default="2,4")
    parser.add_argument(
        "--meshes", default="1x2,2x2", help="[dp, mp] meshes of the embedding and dropout cases"
    )
    parser.add_argument(
        "--native", action="store_true", help="also run each SPMD program as a native executable"
    )
    parser.add_argument("--hosts", help="run the SPMD programs on these hosts (mpirun -hosts)")
    parser.add_argument(
        "--matmul", choices=["blas", "loops"], default="blas", help="dist-run's --matmul"
    )
    args = parser.parse_args()
    global NATIVE, HOSTS, MATMUL
    NATIVE, HOSTS, MATMUL = args.native, args.hosts, args.matmul
    ctx = dist.Context()
    ok = True
    if args.case == "embedding":
        for dp, mp in meshes(args.meshes):
            serial, spmd = embedding(ctx, dp, mp)
            _, checked = embedding(ctx, dp, mp, local_init=False)
            ref = run(serial, 1)[0]
            for label, flags, program in [
                ("parallel-embedding", "--dist-parallel-embedding", spmd),
                ("auto-parallel", "--dist-auto-parallel", checked),
            ]:
                ok &= check(f"embedding [{dp}, {mp}] {label}", ref, run(program, dp * mp, flags))
        sys.exit(0 if ok and NATIVE_OK[0] else 1)
    if args.case == "dropout":
        for dp, mp in meshes(args.meshes):
            serial, spmd, specs = dropout(ctx, dp, mp)
            dims = [spec[3] for spec in specs]
            ref = run(serial, 1)[0]
            if not all(np.array_equal(ref[i], ref[i + 1]) for i in (0, 2)):
                sys.exit("FAIL: the serial reference's recomputed mask differs")
            ok &= check_dropout_values(specs, ref)
            # The MPI lowering first, then the rest: the dropout still draws
            # the mask of its global elements.
            for label, flags in [
                ("dropout seed", "--dist-dropout-seed"),
                ("dropout seed, mpi lowered first", "--dist-dropout-seed --convert-dist-to-mpi"),
            ]:
                name = f"{label} [{dp}, {mp}]"
                ranks = run(spmd, dp * mp, flags)
                ok &= check(name, ref, [arrays[: len(ref)] for arrays in ranks])
                ok &= check_local_masks(name, spmd_mesh(ctx, dp, mp), ranks, dims, len(ref))
        sys.exit(0 if ok and NATIVE_OK[0] else 1)
    for procs in [int(n) for n in args.procs.split(",")]:
        if args.case in ("mlp", "mlp3"):
            serial, spmd = mlp(ctx, procs, args.case == "mlp3")
            ref = run(serial, 1)[0]
            for label, flags in [
                ("before", ""),
                ("overlap", "--dist-matmul-grad-overlap"),
                ("auto-parallel", "--dist-auto-parallel"),
            ]:
                ok &= check(f"{args.case} {label}", ref, run(spmd, procs, flags))
        elif args.case == "amp":
            for infs in range(3):
                ranks = run(amp(ctx, procs, infs), procs)
                ok &= check_each(
                    f"amp, inf on {infs} processes", ranks, lambda r: amp_expected(r, infs)
                )
            # A NaN is not finite either (a check for inf alone misses it),
            # and NaN > 0 is false: found_inf must still say so.
            for nans in (1, 2):
                ranks = run(amp(ctx, procs, nans, np.nan), procs)
                ok &= check_each(
                    f"amp, NaN on {nans} processes", ranks, lambda r: amp_expected(r, nans, np.nan)
                )
        elif args.case == "collectives":
            ranks = run(collectives(ctx, procs), procs)
            expected = collectives_expected(procs)
            ok &= check_each(
                "allreduce " + ", ".join(REDUCTIONS) + ", async and sync", ranks, lambda r: expected
            )
            if procs == 4:
                ranks = run(collectives_groups(ctx), 4)
                ok &= check_each(
                    "avg over mp, sum over dp, broadcasts from group "
                    "positions 1 and 0, on [2, 2] with process ids "
                    "[3, 1, 2, 0], sync and async",
                    ranks,
                    lambda r: collectives_groups_expected(ctx, r),
                )
    sys.exit(0 if ok and NATIVE_OK[0] else 1)


def spmd_mesh(ctx, dp, mp):
    return dist.Mesh([dp, mp], names=["dp", "mp"], context=ctx)


def check_each(name, ranks, expected):
    """Like check, with a reference per rank."""
    ok = True
    for r, arrays in enumerate(ranks):
        ref = expected(r)
        if len(arrays) != len(ref) or not all(close(a, b) for a, b in zip(arrays, ref)):
            print(f"MISMATCH {name}: rank {r}\n  got      {arrays}\n  expected {ref}")
            ok = False
    print(f"{'ok' if ok else 'FAILED'}: {name} ({len(ranks)} processes)")
    return ok


if __name__ == "__main__":
    main()
