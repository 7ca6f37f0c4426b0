#!/usr/bin/env python3
"""The GPT block of examples/gpt_block.mlir, built with the dist package.

  PYTHONPATH=build/python_packages python3 python/examples/gpt_block.py

1. Builds the training step on a [2, 4] (dp x mp) mesh, runs
   --dist-auto-parallel on it and prints the overlap report's exposed
   communication before and after the matmul-grad split.
2. Builds the same step, small, on a [1, 2] mesh with a main that shards
   global inputs, calls the step and gathers the results; runs it on 2 MPI
   processes and compares with the same program on one process (a [1, 1]
   mesh), which is the serial computation.
"""
import argparse
import sys

import numpy as np

import dist


def build_step(module, mesh, batch, seq, hidden, ffn, vocab):
    """Adds @train_step (local shapes for `mesh`) to `module`; returns the
    types of its arguments, in order."""
    dp, mp = mesh.shape
    D = lambda dims, partial=None: dist.TensorDist(mesh, dims, partial or {})
    T = lambda shape, dims, elt="f32", partial=None: dist.TensorType(shape, elt, D(dims, partial))
    b, v = batch // dp, vocab // mp
    act = T([b, seq, hidden], [0, -1, -1])
    ids_t = T([b, seq], [0, -1], "i64")
    wemb_t = T([v, hidden], [1, -1])
    w1_t = T([hidden, ffn // mp], [-1, 1])
    w2_t = T([ffn // mp, hidden], [1, -1])
    ls_t = dist.TensorType([1], "f32", context=module.context)
    args = [
        ids_t,
        (wemb_t, {"dist.param": "wemb"}),
        (w1_t, {"dist.param": "w1"}),
        (w2_t, {"dist.param": "w2"}),
        act,
        (ls_t, {"dist.loss_scale": True}),
    ]
    f = module.function("train_step", args)
    ids, wemb, w1, w2, dout, _ = f.arguments
    # Forward: embedding, dropout, column- then row-parallel linear.
    emb = f.embedding(ids, wemb, dist=act.dist)
    h0 = f.dropout(emb, 0.1, fix_seed=11, id="emb_drop")
    h1 = f.matmul(h0, w1, dist=D([0, -1, 1]))
    h2p = f.matmul(h1, w2, dist=D([0, -1, -1], {1: "sum"}))
    h2 = f.allreduce(h2p, mesh, [1])
    out = f.dropout(h2, 0.1, id="out_drop")
    # Backward, with the dropouts recomputed and the dp gradient sync.
    dh2 = f.dropout(dout, 0.1, recompute_of="out_drop")
    dh1, dw2p = f.matmul_grad(h1, w2, dh2, y_grad_dist=D([1, -1], {0: "sum"}))
    dh0p, dw1p = f.matmul_grad(
        h0, w1, dh1, x_grad_dist=D([0, -1, -1], {1: "sum"}), y_grad_dist=D([-1, 1], {0: "sum"})
    )
    dh0 = f.allreduce(dh0p, mesh, [1])
    demb = f.dropout(dh0, 0.1, fix_seed=11, recompute_of="emb_drop")
    dwemb = f.embedding_grad(ids, wemb, demb)
    dw1 = f.scale(f.allreduce(dw1p, mesh, [0]), 1.0 / dp)
    dw2 = f.scale(f.allreduce(dw2p, mesh, [0]), 1.0 / dp)
    f.return_(
        out,
        dwemb,
        dw1,
        dw2,
        result_markers=[None, {"dist.grad": "wemb"}, {"dist.grad": "w1"}, {"dist.grad": "w2"}],
    )
    return [a[0] if isinstance(a, tuple) else a for a in args]


def report(ctx):
    mesh = dist.Mesh([2, 4], names=["dp", "mp"], context=ctx)
    module = dist.Module.create(ctx)
    build_step(module, mesh, batch=8, seq=16, hidden=64, ffn=256, vocab=1024)
    module.verify()
    module.run(
        "dist-dropout-seed,dist-parallel-embedding,dist-amp-check-finite," "dist-assign-streams"
    )
    before = dist.overlap_report(module, peak_tflops=0.001)
    module = dist.Module.create(ctx)
    build_step(module, mesh, batch=8, seq=16, hidden=64, ffn=256, vocab=1024)
    module.run("dist-auto-parallel")
    after = dist.overlap_report(module, peak_tflops=0.001)
    exposed = lambda r: {f["name"]: f for f in r["functions"]}["train_step"]["exposed_comm_us"]
    print(
        f"exposed communication of @train_step at 0.001 TFLOP/s: "
        f"{exposed(before):.3f} us without the overlap split, "
        f"{exposed(after):.3f} us with it"
    )


def build_run(ctx, dp, mp, dout_scale=1.0):
    """The step on a [dp, mp] mesh plus a main that feeds it global data
    and prints every result gathered to its global shape. The gradient
    sync averages over dp, as Paddle's does (each replica's loss is a mean
    over its part of the batch): a one-process reference for dp replicas
    takes dout / dp (`dout_scale`)."""
    B, S, H, F, V = 2, 4, 8, 8, 8
    mesh = dist.Mesh([dp, mp], names=["dp", "mp"], context=ctx)
    module = dist.Module.create(ctx)
    types = build_step(module, mesh, batch=B, seq=S, hidden=H, ffn=F, vocab=V)
    module.run("dist-auto-parallel")

    rng = np.random.default_rng(0)
    data = {
        "ids": rng.integers(0, V, (B, S)),
        "wemb": rng.standard_normal((V, H)),
        "w1": rng.standard_normal((H, F)),
        "w2": rng.standard_normal((F, H)),
        "dout": rng.standard_normal((B, S, H)) * dout_scale,
    }
    f = module.function("main")
    coords = {}

    def coord(axis):
        if axis not in coords:
            coords[axis] = f.process_coord(mesh, axis)
        return coords[axis]

    def offsets(local, dims):
        return [
            0 if a < 0 else f.arith("muli", coord(a), f.index(size)) for size, a in zip(local, dims)
        ]

    def shard(name, t):
        glob = data[name]
        elt = "i64" if name == "ids" else "f32"
        g = f.constant(glob, dist.TensorType(list(glob.shape), elt, context=ctx))
        dims = t.dist.dims_mapping
        s = f.extract_slice(g, offsets(t.shape, dims), t.shape)
        return f.cast(s, t)

    def gather(value):
        t = value.type
        plain = f.cast(value, dist.TensorType(t.shape, "f32", context=ctx))
        dims = t.dist.dims_mapping
        split = sorted(a for a in dims if a >= 0)
        if not split:
            return plain
        gshape = [n * mesh.shape[a] if a >= 0 else n for n, a in zip(t.shape, dims)]
        zero = f.constant(np.zeros(gshape), dist.TensorType(gshape, context=ctx))
        ins = f.insert_slice(plain, zero, offsets(t.shape, dims))
        return f.allreduce(ins, mesh, split)

    names = ["ids", "wemb", "w1", "w2", "dout"]
    inputs = [shard(n, t) for n, t in zip(names, types)]
    scale = f.constant(np.array([1.0]), types[-1])
    # The pipeline added found_inf and, when some axis replicates the
    # table, a startup function that broadcasts it.
    for startup in module.operations:
        if "dist.startup" in startup.attributes:
            [param_t] = [a.type for a in startup.regions[0].blocks[0].arguments]
            inputs[1] = f.call("startup", [inputs[1]], [param_t])[0]
    [step] = [
        op
        for op in module.operations
        if op.name == "func.func" and str(op.attributes["sym_name"]) == '"train_step"'
    ]
    result_types = [v.type for v in step.regions[0].blocks[0].operations[-1].operands]
    results = f.call("train_step", inputs + [scale], result_types)
    for r in results[:4]:
        f.print(gather(r))
    f.return_()
    return module


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--meshes",
        default="1x2",
        help="dp x mp meshes to compare with one process " "(e.g. 1x2,2x4)",
    )
    args = parser.parse_args()
    ctx = dist.Context()
    report(ctx)
    # One run seed for all: the unseeded dropout must draw the same mask.
    ok = True
    for mesh in args.meshes.split(","):
        dp, mp = (int(n) for n in mesh.split("x"))
        procs = dp * mp
        serial = dist.run_on_mpi(build_run(ctx, 1, 1, 1.0 / dp), 1, seed=1)[0]
        ranks = dist.run_on_mpi(build_run(ctx, dp, mp), procs, seed=1)
        worst = max(
            float(np.max(np.abs(a - b))) for arrays in ranks for a, b in zip(arrays, serial)
        )
        same = all(
            len(arrays) == len(serial)
            and all(np.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(arrays, serial))
            for arrays in ranks
        )
        print(
            f"{procs} processes ([{dp}, {mp}]) vs 1: {'equal' if same else 'DIFFERENT'} "
            f"(largest difference {worst:.2e}, {len(serial)} results)"
        )
        ok &= same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
