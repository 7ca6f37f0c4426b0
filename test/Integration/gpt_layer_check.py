#!/usr/bin/env python3
"""The GPT layer of examples/gpt_layer.py, in every layout, on MPI, against
numpy.

  gpt_layer_check.py LAYOUT:MESH [LAYOUT:MESH ...] [--print]

For each layout (e.g. `tp-sp:4`, `dp-tp:2,2`) the step is generated,
completed and lowered by `--dist-auto-parallel`, and run on as many MPICH
processes as the mesh has. A `@main` around it makes every process's block
of the inputs and parameters from global constants, calls the step, and
prints every result gathered whole (a `dist.reshard` to replicated). Every
process's results must equal `reference` below within TOLERANCE of each
result's largest magnitude.

`reference` is the layer written directly in numpy, in float64, from the
formulas (not from the program): LayerNorm, causal multi-head attention,
GeLU (tanh form), the mean squared error and their hand-derived gradients.
Its dropout masks are dist.dropout's documented ones (`dropout_scale`): an
element is kept when a counter-based hash (splitmix64) of its global index
and the seed falls at or above the probability.
"""
import argparse
import math
import os
import sys

import numpy as np

import dist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
import gpt_layer  # noqa: E402

TOLERANCE = 1e-4
SIZES = dict(b=4, s=8, h=16, n=4, f=32)
DROPOUT = 0.1


def splitmix64(z):
    """splitmix64's finaliser on uint64 arrays (wrapping arithmetic)."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def dropout_scale(shape, seed, prob):
    """What dist.dropout multiplies each element of a tensor of global
    `shape` by: 0 where dropped, 1 / (1 - prob) (in f32) where kept. The
    element at row-major global index i is kept when the top 24 bits of
    splitmix64(splitmix64(i) ^ (seed << 32)), as a fraction of 2^24, are at
    least prob (in f32)."""
    with np.errstate(over="ignore"):
        index = np.arange(int(np.prod(shape)), dtype=np.uint64)
        key = splitmix64(index) ^ (np.uint64(seed) << np.uint64(32))
        bits = splitmix64(key) >> np.uint64(40)
    u = bits.astype(np.float32) * np.float32(1.0 / 16777216.0)
    p32 = np.float32(prob)
    scale = np.float32(1.0 / (1.0 - float(p32)))
    return np.where(u >= p32, np.float64(scale), 0.0).reshape(shape)


def inputs(sizes, seed=0):
    """The global parameters and inputs, float32-representable."""
    rng = np.random.default_rng(seed)
    b, s, h, f = (sizes[k] for k in "bshf")
    shapes = {
        "ln1_g": (h,),
        "ln1_b": (h,),
        "wq": (h, h),
        "wk": (h, h),
        "wv": (h, h),
        "wo": (h, h),
        "ln2_g": (h,),
        "ln2_b": (h,),
        "w1": (h, f),
        "w2": (f, h),
        "x": (b, s, h),
        "target": (b, s, h),
    }
    out = {}
    for name, shape in shapes.items():
        scale = 0.5 if name in ("x", "target") else 1.0 / math.sqrt(shape[0])
        v = rng.standard_normal(shape) * scale
        if name.endswith("_g"):
            v = 1.0 + 0.1 * v
        out[name] = v.astype(np.float32)
    return out


def dropout_masks(b, s, h, heads, dropout):
    """The scales of the attention-probability, attention-output and MLP
    output dropouts."""

    def drop(shape, id):
        if not dropout:
            return np.ones(shape)
        return dropout_scale(shape, gpt_layer.DROPOUTS[id], dropout)

    return (
        drop((b, heads, s, s), "attn_drop"),
        drop((b, s, h), "attn_out_drop"),
        drop((b, s, h), "mlp_out_drop"),
    )


def reference(v, heads, dropout, eps=gpt_layer.EPS, lr=gpt_layer.LR, dtype=np.float64, masks=None):
    """loss, dx, the gradients and the updated parameters, in `dtype`.
    `masks` are the dropout scales (`dropout_masks`), made here if None."""
    p = {k: a.astype(dtype) for k, a in v.items()}
    x, t = p["x"], p["target"]
    b, s, h = x.shape
    d = h // heads

    def ln_fwd(x, g, beta):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        rstd = 1.0 / np.sqrt(var + eps)
        xhat = (x - mu) * rstd
        return xhat * g + beta, (xhat, rstd, g)

    def ln_bwd(dy, cache):
        xhat, rstd, g = cache
        dg = (dy * xhat).sum((0, 1))
        db = dy.sum((0, 1))
        dxhat = dy * g
        dx = rstd * (
            dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True)
        )
        return dx, dg, db

    def heads_of(a):  # [b, s, h] -> [b, n, s, d]
        return a.reshape(b, s, heads, d).transpose(0, 2, 1, 3)

    def merge(a):  # [b, n, s, d] -> [b, s, h]
        return a.transpose(0, 2, 1, 3).reshape(b, s, h)

    k_gelu = math.sqrt(2 / math.pi)

    if masks is None:
        masks = dropout_masks(b, s, h, heads, dropout)
    m_probs, m_attn, m_mlp = (m.astype(dtype) for m in masks)

    # forward
    a, c1 = ln_fwd(x, p["ln1_g"], p["ln1_b"])
    q, k, vv = heads_of(a @ p["wq"]), heads_of(a @ p["wk"]), heads_of(a @ p["wv"])
    scale = 1.0 / math.sqrt(d)
    sc = q @ k.transpose(0, 1, 3, 2) * scale
    causal = np.tril(np.ones((s, s), bool))
    sc = np.where(causal, sc, -np.inf)
    e = np.exp(sc - sc.max(-1, keepdims=True))
    P = e / e.sum(-1, keepdims=True)
    Pd = P * m_probs
    ctx = merge(Pd @ vv)
    x1 = x + (ctx @ p["wo"]) * m_attn
    m, c2 = ln_fwd(x1, p["ln2_g"], p["ln2_b"])
    u = m @ p["w1"]
    inner = k_gelu * (u + 0.044715 * u**3)
    gl = 0.5 * u * (1 + np.tanh(inner))
    y = x1 + (gl @ p["w2"]) * m_mlp
    n = y.size
    loss = 0.5 * ((y - t) ** 2).sum() / n

    # backward
    g = {}
    dy = (y - t) / n
    dmlp = dy * m_mlp
    g["w2"] = gl.reshape(-1, gl.shape[-1]).T @ dmlp.reshape(-1, h)
    dgl = dmlp @ p["w2"].T
    th = np.tanh(inner)
    du = dgl * (0.5 * (1 + th) + 0.5 * u * (1 - th**2) * k_gelu * (1 + 3 * 0.044715 * u**2))
    g["w1"] = m.reshape(-1, h).T @ du.reshape(-1, du.shape[-1])
    dm = du @ p["w1"].T
    dx1_ln, g["ln2_g"], g["ln2_b"] = ln_bwd(dm, c2)
    dx1 = dy + dx1_ln
    dattn = dx1 * m_attn
    g["wo"] = ctx.reshape(-1, h).T @ dattn.reshape(-1, h)
    dctx = heads_of(dattn @ p["wo"].T)
    dP = (dctx @ vv.transpose(0, 1, 3, 2)) * m_probs
    dv = Pd.transpose(0, 1, 3, 2) @ dctx
    dsc = P * (dP - (dP * P).sum(-1, keepdims=True)) * scale
    dq = dsc @ k
    dk = dsc.transpose(0, 1, 3, 2) @ q
    da = 0
    for name, grad in (("wq", dq), ("wk", dk), ("wv", dv)):
        gm = merge(grad)
        g[name] = a.reshape(-1, h).T @ gm.reshape(-1, h)
        da = da + gm @ p[name].T
    dx_ln, g["ln1_g"], g["ln1_b"] = ln_bwd(da, c1)
    dx = dx1 + dx_ln

    out = [np.array(loss), dx]
    out += [g[k] for k in gpt_layer.PARAMS]
    out += [p[k] - lr * g[k] for k in gpt_layer.PARAMS]
    return out


def dense(a):
    flat = ", ".join(f"{x:.9e}" for x in a.reshape(-1))
    return f"dense<[{flat}]> : tensor<{a.size}xf32>"


class Main:
    """@main's lines: every process's blocks of global values, calls, and
    results printed whole."""

    def __init__(self, layout):
        self.L = layout
        self.lines = []
        self.n = 0
        for a in range(len(layout.mesh)):
            self.emit(f"%crd{a} = dist.process_coord #mesh axis = {a}")

    def fresh(self, stem):
        self.n += 1
        return f"%{stem}{self.n}"

    def emit(self, line):
        self.lines.append("  " + line)

    def block(self, name, g, dims):
        """This process's block of the global array `g`, of letters `dims`,
        as the step takes it (encoded)."""
        L = self.L
        gshape = "x".join(map(str, g.shape))
        flat = self.fresh(name + "_flat")
        self.emit(f"{flat} = arith.constant {dense(g)}")
        whole = self.fresh(name + "_whole")
        groups = "[" + ", ".join(f"{i}" for i in range(g.ndim)) + "]"
        self.emit(
            f"{whole} = tensor.expand_shape {flat} [{groups}] output_shape [{', '.join(map(str, g.shape))}] "
            f": tensor<{g.size}xf32> into tensor<{gshape}xf32>"
        )
        offs = []
        for letter in dims:
            axis = L.axis(letter)
            if axis is None:
                offs.append("0")
                continue
            k = self.fresh("k")
            self.emit(f"{k} = arith.constant {L.size(letter)} : index")
            o = self.fresh("o")
            self.emit(f"{o} = arith.muli %crd{axis}, {k} : index")
            offs.append(o)
        local = [L.size(x) for x in dims]
        blk = self.fresh(name + "_blk")
        self.emit(
            f"{blk} = tensor.extract_slice {whole}[{', '.join(offs)}] [{', '.join(map(str, local))}] "
            f"[{', '.join('1' for _ in dims)}] : tensor<{gshape}xf32> to {L.ty(dims)}"
        )
        arg = self.fresh(name)
        self.emit(f"{arg} = tensor.cast {blk} : {L.ty(dims)} to {L.ty(dims, True)}")
        return arg

    def call(self, args, arg_types, res_dims):
        """Calls the step; its results."""
        L = self.L
        res = [self.fresh("r") for _ in res_dims]
        self.emit(
            f"{', '.join(res)} = func.call @train_step({', '.join(args)}) : "
            f"({', '.join(arg_types)}) -> "
            f"({', '.join(L.ty(d, True) for d in res_dims)})"
        )
        return res

    def print_whole(self, r, dims):
        L = self.L
        whole_ty = "tensor<" + "".join(f"{L.g[x]}x" for x in dims) + "f32"
        rep = self.fresh("rep")
        enc = ", #dist.tensor<#mesh, [" + ", ".join("-1" for _ in dims) + "]>"
        self.emit(f"{rep} = dist.reshard {r} : {L.ty(dims, True)} -> {whole_ty}{enc}>")
        plain = self.fresh("plain")
        self.emit(f"{plain} = tensor.cast {rep} : {whole_ty}{enc}> to {whole_ty}>")
        memref_ty = "memref<" + "".join(f"{L.g[x]}x" for x in dims) + "f32>"
        buf = self.fresh("buf")
        self.emit(f"{buf} = bufferization.to_buffer {plain} : {whole_ty}> to {memref_ty}")
        u = self.fresh("u")
        self.emit(f"{u} = memref.cast {buf} : {memref_ty} to memref<*xf32>")
        self.emit(f"func.call @printMemrefF32({u}) : (memref<*xf32>) -> ()")

    def text(self):
        return (
            "func.func private @printMemrefF32(memref<*xf32>)\n"
            + "func.func @main() {\n"
            + "\n".join(self.lines)
            + "\n  return\n}\n"
        )


def act_dims(L):
    return "b" + ("r" if L.sp else "s") + "h"


def harness(layout, values):
    """@main: every process's blocks of `values`, the step, the results
    gathered and printed."""
    L = layout
    M = Main(L)
    dims_of = dict(gpt_layer.PARAM_DIMS)
    dims_of.update(x=act_dims(L), target=act_dims(L))
    names_ = gpt_layer.PARAMS + ["x", "target"]
    args = [M.block(n, values[n], dims_of[n]) for n in names_]
    res_dims = ["", act_dims(L)] + [gpt_layer.PARAM_DIMS[p] for p in gpt_layer.PARAMS] * 2
    res = M.call(args, [L.ty(dims_of[n], True) for n in names_], res_dims)
    for r, dims in zip(res, res_dims):
        M.print_whole(r, dims)
    return M.text()


def training_harness(layout, values, steps):
    """@main for a layer with optimizer states: `steps` steps, each taking
    the parameters and states the last returned (the states start at 0,
    AdamW's step count at 1), then the parameters and states printed
    whole."""
    L = layout
    M = Main(L)
    P, D = gpt_layer.PARAMS, gpt_layer.PARAM_DIMS
    n_states = gpt_layer.STATES[L.optimizer]
    act = act_dims(L)
    params = {p: M.block(p, values[p], D[p]) for p in P}
    x, target = M.block("x", values["x"], act), M.block("target", values["target"], act)
    states = {}
    for p in P:
        states[p] = []
        for _ in range(n_states):
            z = M.fresh(p + "_s")
            M.emit(f"{z} = arith.constant dense<0.0> : {L.ty(D[p], True)}")
            states[p].append(z)
    arg_types = [L.ty(D[p], True) for p in P] + [L.ty(act, True)] * 2
    arg_types += [L.ty(D[p], True) for p in P for _ in range(n_states)]
    if L.optimizer == "adamw":
        arg_types.append("tensor<f32>")
    res_dims = ["", act] + [D[p] for p in P] * 2 + [D[p] for p in P for _ in range(n_states)]
    for k in range(1, steps + 1):
        args = [params[p] for p in P] + [x, target] + [v for p in P for v in states[p]]
        if L.optimizer == "adamw":
            t = M.fresh("t")
            M.emit(f"{t} = arith.constant dense<{k}.0> : tensor<f32>")
            args.append(t)
        res = M.call(args, arg_types, res_dims)
        new = res[2 + len(P) :]
        params = dict(zip(P, new[: len(P)]))
        flat = new[len(P) :]
        states = {p: flat[i * n_states : (i + 1) * n_states] for i, p in enumerate(P)}
    for p in P:
        M.print_whole(params[p], D[p])
    for p in P:
        for v in states[p]:
            M.print_whole(v, D[p])
    return M.text()


def training_check(spec, optimizer, mode, steps=3):
    """The layer in layout `spec` with `optimizer`, lowered with the
    pipeline's `mode` options, against the serial layer after `steps`
    steps: every parameter and state within TOLERANCE."""
    values = inputs(SIZES)

    def run(spec, options):
        L = gpt_layer.layout_spec(spec, SIZES, DROPOUT, optimizer)
        text = gpt_layer.build(L) + training_harness(L, values, steps)
        flags = f"--dist-auto-parallel='{options}'" if options else "--dist-auto-parallel"
        return L, dist.run_on_mpi(text, int(np.prod(L.mesh)), pass_flags=flags, native=NATIVE[0])

    if optimizer not in SERIAL:
        SERIAL[optimizer] = run("serial:1", "")[1][0]
    expected = SERIAL[optimizer]
    L, ranks = run(spec, TRAINING_MODES[mode])
    worst = 0.0
    for got in ranks:
        if len(got) != len(expected):
            print(f"FAILED {spec} {optimizer} {mode}: {len(got)} arrays, expected {len(expected)}")
            return False
        for a, e in zip(got, expected):
            a, e = np.asarray(a, np.float64), np.asarray(e, np.float64)
            worst = max(worst, float(np.max(np.abs(a - e))) / max(float(np.max(np.abs(e))), 1e-30))
    ok = worst <= TOLERANCE
    print(
        f"{'ok' if ok else 'FAILED'}: {L.name} on [{', '.join(map(str, L.mesh))}] {optimizer} {mode}: "
        f"{len(expected)} parameters and states after {steps} steps on {len(ranks)} processes, "
        f"worst relative error {worst:.1e}"
    )
    return ok


# The serial layer's parameters and states after the steps, by optimizer.
SERIAL = {}

# The pipeline's options of each training mode.
TRAINING_MODES = {
    "base": "",
    "zero1": "zero-stage=1",
    "zero2": "zero-stage=2",
    "buckets": "bucket-gradients=true first-bucket-mb=0.001 bucket-mb=0.002",
    "zero1+buckets": "zero-stage=1 bucket-gradients=true first-bucket-mb=0.001 bucket-mb=0.002",
    "zero2+buckets": "zero-stage=2 bucket-gradients=true first-bucket-mb=0.001 bucket-mb=0.002",
}


def names():
    return (
        ["loss", "dx"]
        + [f"d{p}" for p in gpt_layer.PARAMS]
        + [f"new {p}" for p in gpt_layer.PARAMS]
    )


def check(spec, print_program=False):
    L = gpt_layer.layout_spec(spec, SIZES, DROPOUT)
    layout_name = L.name
    values = inputs(SIZES)
    text = gpt_layer.build(L) + harness(L, values)
    if print_program:
        print(text)
        return True
    procs = int(np.prod(L.mesh))
    ranks = dist.run_on_mpi(text, procs, pass_flags="--dist-auto-parallel", native=NATIVE[0])
    expected = reference(values, SIZES["n"], DROPOUT)
    worst, where = 0.0, ""
    for rank, got in enumerate(ranks):
        if len(got) != len(expected):
            print(f"FAILED {spec}: rank {rank} printed {len(got)} arrays, expected {len(expected)}")
            return False
        for name, a, e in zip(names(), got, expected):
            a = np.asarray(a, np.float64).reshape(e.shape)
            err = float(np.max(np.abs(a - e))) / max(float(np.max(np.abs(e))), 1e-30)
            if err > worst:
                worst, where = err, f"{name} on rank {rank}"
    ok = worst <= TOLERANCE
    status = "ok" if ok else "FAILED"
    print(
        f"{status}: {layout_name} on [{', '.join(map(str, L.mesh))}]: {len(expected)} results "
        f"on {procs} processes, worst relative error {worst:.1e}"
        + (f" ({where})" if not ok else "")
    )
    return ok


# --native: every run builds one executable (dist-compile) instead of
# compiling the program with the JIT on every process.
NATIVE = [False]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("layouts", nargs="+")
    parser.add_argument(
        "--train",
        action="store_true",
        help="the layouts are LAYOUT:MESH/OPTIMIZER/MODE (e.g. dp:2/adamw/zero1): 3 steps "
        f"with OPTIMIZER (momentum, adamw) under MODE ({', '.join(TRAINING_MODES)}) "
        "against the serial layer",
    )
    parser.add_argument(
        "--print", action="store_true", help="print the program of the first layout"
    )
    parser.add_argument(
        "--native", action="store_true", help="build one executable instead of a JIT per process"
    )
    args = parser.parse_args()
    NATIVE[0] = args.native
    if args.train:
        ok = True
        for item in args.layouts:
            spec, optimizer, mode = item.split("/")
            ok = training_check(spec, optimizer, mode) and ok
        return 0 if ok else 1
    if args.print:
        return 0 if check(args.layouts[0], True) else 1
    ok = True
    for spec in args.layouts:
        ok = check(spec) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
