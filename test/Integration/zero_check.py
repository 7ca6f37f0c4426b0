#!/usr/bin/env python3
"""Sharded optimizer states and gradient buckets on MPI, against the serial
program.

  zero_check.py CONFIG [CONFIG ...] [--print CONFIG] [--steps N]

A CONFIG is `DPxTP:MODE`, e.g. `2x1:zero1` or `2x2:zero2+buckets`: a mesh of
DP data-parallel and TP tensor-parallel processes and the pipeline's options
(`base`: neither; `zero1`/`zero2`: --dist-auto-parallel's zero-stage;
`buckets`: bucket-gradients, with 64-byte buckets so that the small model
fills several).

The program is a two-layer MLP with a bias, annotated on its signature
only: w1 (13 x 12) is split by columns over tp, w2 (12 x 5) by rows, the
bias (5) is replicated. w1 is updated by momentum SGD, w2 and the bias by
AdamW. 13 x 12 / 4, 5 / 2 and 5 / 4 do not divide: those states are padded
shards. A `@main` runs 3 steps (the parameters and states a step returns
are the next step's), then prints the parameters, the states and the last
gradients, gathered whole.

Every array must equal the serial program's (mesh 1 x 1, no sharding)
within TOLERANCE of its largest magnitude. Equal arrays do not show where
they lived: before each run the completed @step's signature is checked
against what the mode promises each process holds (ZeRO's definition):
a parameter's optimizer states are whole on every dp process without
ZeRO and a 1/dp shard (ceil, padded) with it; its gradient is whole but
for stage 2, which returns the dp shard.
"""
import argparse
import sys

import numpy as np

import dist
from textir import Body, enc, fmt, ttype

TOLERANCE = 1e-4
B, IN, HID, OUT = 8, 13, 12, 5
LR_SGD, MOMENTUM, WD_SGD = 0.1, 0.9, 0.01
LR_ADAM, BETA1, BETA2, EPS, WD_ADAM = 0.01, 0.9, 0.999, 1e-8, 0.01

# name: (global shape, dims mapping; axis 0 is dp, 1 is tp)
PARAMS = {"w1": ((IN, HID), [-1, 1]), "w2": ((HID, OUT), [1, -1]), "b": ((OUT,), [-1])}
DATA = {"x": ((B, IN), [0, -1]), "target": ((B, OUT), [0, -1])}
# Each parameter's optimizer and number of states.
OPTIMIZER = {"w1": ("sgd", 1), "w2": ("adamw", 2), "b": ("adamw", 2)}


class Layout:
    def __init__(self, dp, tp):
        self.mesh = [dp, tp]

    def dims(self, dims):
        return [a if a >= 0 and self.mesh[a] > 1 else -1 for a in dims]

    def local(self, shape, dims):
        return [g // self.mesh[a] if a >= 0 else g for g, a in zip(shape, dims)]

    def ty(self, shape, dims, encoded=True):
        d = self.dims(dims)
        return ttype(self.local(shape, d), enc(d, {}) if encoded else None)

    def whole(self, shape):
        return ttype(shape, enc([-1] * len(shape), {}))


def step_function(L):
    """@step: one training step, annotated on its signature (dist.complete)."""
    t = {n: L.ty(s, d) for n, (s, d) in {**PARAMS, **DATA}.items()}
    plain = {n: L.ty(s, d, False) for n, (s, d) in {**PARAMS, **DATA}.items()}
    args = []
    for p in PARAMS:
        args.append(f'%{p}: {t[p]} {{dist.param = "{p}"}}')
        for k in range(OPTIMIZER[p][1]):
            args.append(f'%{p}_s{k}: {t[p]} {{dist.state = "{p}"}}')
    args += ["%t: tensor<f32>", f"%x: {t['x']}", f"%target: {t['target']}"]
    results = [(f'{t[p]} {{dist.grad = "{p}"}}') for p in PARAMS]
    results += [t[p] for p in PARAMS]
    for p in PARAMS:
        results += [f'{t[p]} {{dist.state = "{p}"}}'] * OPTIMIZER[p][1]
    body = Body(L.mesh)
    bl = L.local((B,), [0] if L.mesh[0] > 1 else [-1])[0]
    hl = HID // L.mesh[1]
    h = body.let("h", f"dist.matmul %x, %w1 : {t['x']}, {t['w1']} -> {ttype([bl, hl])}")
    y0 = body.let("y", f"dist.matmul {h}, %w2 : {ttype([bl, hl])}, {t['w2']} -> {ttype([bl, OUT])}")
    e = body.let("e", f"tensor.empty() : {ttype([bl, OUT])}")
    m2 = "affine_map<(d0, d1) -> (d0, d1)>"
    m1 = "affine_map<(d0, d1) -> (d1)>"
    y = body.let(
        "y",
        f"linalg.generic {{indexing_maps = [{m2}, {m1}, {m2}], iterator_types = "
        f'["parallel", "parallel"]}} ins({y0}, %b : {ttype([bl, OUT])}, {t["b"]}) '
        f"outs({e} : {ttype([bl, OUT])}) {{\n  ^bb0(%a: f32, %c: f32, %o: f32):\n"
        f"    %s = arith.addf %a, %c : f32\n    linalg.yield %s : f32\n  }} -> {ttype([bl, OUT])}",
    )
    # d(0.5 * mean((y - target)^2)) / dy
    e2 = body.let("e", f"tensor.empty() : {ttype([bl, OUT])}")
    dy = body.let(
        "dy",
        f"linalg.generic {{indexing_maps = [{m2}, {m2}, {m2}], iterator_types = "
        f'["parallel", "parallel"]}} ins({y}, %target : {ttype([bl, OUT])}, {t["target"]}) '
        f"outs({e2} : {ttype([bl, OUT])}) {{\n  ^bb0(%a: f32, %c: f32, %o: f32):\n"
        f"    %d = arith.subf %a, %c : f32\n    %k = arith.constant {fmt(1.0 / (B * OUT))} : f32\n"
        f"    %s = arith.mulf %d, %k : f32\n    linalg.yield %s : f32\n  }} -> {ttype([bl, OUT])}",
    )
    zero = body.let("z", "arith.constant 0.0 : f32")
    e3 = body.let("e", f"tensor.empty() : {ttype([OUT])}")
    z = body.let(
        "z", f"linalg.fill ins({zero} : f32) outs({e3} : {ttype([OUT])}) -> {ttype([OUT])}"
    )
    db = body.let(
        "db",
        f"linalg.generic {{indexing_maps = [{m2}, {m1}], iterator_types = "
        f'["reduction", "parallel"]}} ins({dy} : {ttype([bl, OUT])}) '
        f"outs({z} : {ttype([OUT])}) {{\n  ^bb0(%a: f32, %o: f32):\n"
        f"    %s = arith.addf %o, %a : f32\n    linalg.yield %s : f32\n  }} -> {ttype([OUT])}",
    )
    grads = body.fresh("g")
    body.emit(
        f"{grads}:2 = dist.matmul_grad {h}, %w2, {dy} : {ttype([bl, hl])}, {t['w2']}, "
        f"{ttype([bl, OUT])} -> {ttype([bl, hl])}, {plain['w2']}"
    )
    grads1 = body.fresh("g")
    body.emit(
        f"{grads1}:2 = dist.matmul_grad %x, %w1, {grads}#0 : {t['x']}, {t['w1']}, "
        f"{ttype([bl, hl])} -> {plain['x']}, {plain['w1']}"
    )
    grad = {"w1": f"{grads1}#1", "w2": f"{grads}#1", "b": db}
    new, states = {}, {}
    for p in PARAMS:
        r = body.fresh("u")
        kind, n = OPTIMIZER[p]
        pt = plain[p]
        if kind == "sgd":
            body.emit(
                f"{r}:2 = dist.sgd %{p}, {grad[p]}, %{p}_s0 lr = {fmt(LR_SGD)} "
                f"momentum = {fmt(MOMENTUM)} weight_decay = {fmt(WD_SGD)} : "
                f"({t[p]}, {pt}, {t[p]}) -> ({pt}, {pt})"
            )
        else:
            body.emit(
                f"{r}:3 = dist.adamw %{p}, {grad[p]}, %{p}_s0, %{p}_s1, %t lr = {fmt(LR_ADAM)} "
                f"beta1 = {fmt(BETA1)} beta2 = {fmt(BETA2)} epsilon = {fmt(EPS)} "
                f"weight_decay = {fmt(WD_ADAM)} : ({t[p]}, {pt}, {t[p]}, {t[p]}, tensor<f32>) "
                f"-> ({pt}, {pt}, {pt})"
            )
        new[p] = f"{r}#0"
        states[p] = [f"{r}#{k + 1}" for k in range(n)]

    def pin(v, p):
        return body.let("c", f"dist.constraint {v} : {plain[p]} -> {t[p]}")

    ret = [pin(grad[p], p) for p in PARAMS] + [pin(new[p], p) for p in PARAMS]
    ret += [pin(s, p) for p in PARAMS for s in states[p]]
    body.emit(f"return {', '.join(ret)} : {', '.join(r.split(' {')[0] for r in results)}")
    return (
        f"func.func @step({', '.join(args)}) -> ({', '.join(results)}) attributes {{dist.complete}} {{\n"
        + "\n".join(body.lines)
        + "\n}\n"
    )


def initial_values():
    rng = np.random.default_rng(0)
    return {
        n: rng.standard_normal(s).astype(np.float32) for n, (s, _) in {**PARAMS, **DATA}.items()
    }


def main_function(L, values, steps):
    """@main: every process's blocks, `steps` steps, every result printed."""
    body = Body(L.mesh)
    for a in range(2):
        body.emit(f"%crd{a} = dist.process_coord #mesh axis = {a}")
    arg = {}
    for name, (shape, dims) in {**PARAMS, **DATA}.items():
        v = values[name]
        flat = body.let(
            name,
            f"arith.constant dense<[{', '.join(fmt(x) for x in v.reshape(-1))}]> : {ttype([v.size])}",
        )
        glob = flat
        if len(shape) > 1:
            glob = body.let(
                name,
                f"tensor.expand_shape {flat} [[0, 1]] output_shape [{shape[0]}, {shape[1]}] : "
                f"{ttype([v.size])} into {ttype(shape)}",
            )
        d = L.dims(dims)
        blk = body.slice_of(glob, list(shape), L.local(shape, d), d)
        arg[name] = body.let(
            name, f"tensor.cast {blk} : {ttype(L.local(shape, d))} to {L.ty(shape, dims)}"
        )
    state = {}
    for p, (shape, dims) in PARAMS.items():
        d = L.dims(dims)
        state[p] = [
            body.let(f"{p}_s", f"arith.constant dense<0.0> : {L.ty(shape, dims)}")
            for _ in range(OPTIMIZER[p][1])
        ]
    param = {p: arg[p] for p in PARAMS}
    in_types = []
    for p in PARAMS:
        in_types += [L.ty(*PARAMS[p])] * (1 + OPTIMIZER[p][1])
    in_types += ["tensor<f32>", L.ty(*DATA["x"]), L.ty(*DATA["target"])]
    out_types = [L.ty(*PARAMS[p]) for p in PARAMS] * 2
    for p in PARAMS:
        out_types += [L.ty(*PARAMS[p])] * OPTIMIZER[p][1]
    grads = {}
    for k in range(1, steps + 1):
        tk = body.let("t", f"arith.constant dense<{fmt(k)}> : tensor<f32>")
        operands = []
        for p in PARAMS:
            operands += [param[p]] + state[p]
        operands += [tk, arg["x"], arg["target"]]
        r = body.fresh("r")
        n = len(out_types)
        body.emit(
            f"{r}:{n} = func.call @step({', '.join(operands)}) : ({', '.join(in_types)}) -> "
            f"({', '.join(out_types)})"
        )
        i = 0
        for p in PARAMS:
            grads[p] = f"{r}#{i}"
            i += 1
        for p in PARAMS:
            param[p] = f"{r}#{i}"
            i += 1
        for p in PARAMS:
            state[p] = [f"{r}#{i + j}" for j in range(OPTIMIZER[p][1])]
            i += OPTIMIZER[p][1]
    printed = [(param[p], p) for p in PARAMS]
    printed += [(s, p) for p in PARAMS for s in state[p]]
    printed += [(grads[p], p) for p in PARAMS]
    for v, p in printed:
        shape, dims = PARAMS[p]
        rep = body.let("rep", f"dist.reshard {v} : {L.ty(shape, dims)} -> {L.whole(shape)}")
        pl = body.let("pl", f"tensor.cast {rep} : {L.whole(shape)} to {ttype(shape)}")
        mem = "memref<" + "x".join(map(str, shape)) + "xf32>"
        buf = body.let("buf", f"bufferization.to_buffer {pl} : {ttype(shape)} to {mem}")
        u = body.let("u", f"memref.cast {buf} : {mem} to memref<*xf32>")
        body.emit(f"func.call @printMemrefF32({u}) : (memref<*xf32>) -> ()")
    return (
        "func.func private @printMemrefF32(memref<*xf32>)\nfunc.func @main() {\n"
        + "\n".join(body.lines)
        + "\n  return\n}\n"
    )


def reference(values, steps):
    """The serial step in numpy (float64), from the formulas: the arrays
    @main prints, in its order."""
    v = {k: a.astype(np.float64) for k, a in values.items()}
    w1, w2, b, x, t = v["w1"], v["w2"], v["b"], v["x"], v["target"]
    vel = np.zeros_like(w1)
    m = {p: np.zeros_like(v[p]) for p in ("w2", "b")}
    u = {p: np.zeros_like(v[p]) for p in ("w2", "b")}
    param = {"w2": w2, "b": b}
    for k in range(1, steps + 1):
        h = x @ w1
        y = h @ param["w2"] + param["b"]
        dy = (y - t) / (B * OUT)
        grads = {"w1": x.T @ (dy @ param["w2"].T), "w2": h.T @ dy, "b": dy.sum(axis=0)}
        vel = MOMENTUM * vel + grads["w1"] + WD_SGD * w1
        w1 = w1 - LR_SGD * vel
        for p in ("w2", "b"):
            g = grads[p]
            decayed = param[p] * (1 - LR_ADAM * WD_ADAM)
            m[p] = BETA1 * m[p] + (1 - BETA1) * g
            u[p] = BETA2 * u[p] + (1 - BETA2) * g * g
            m_hat = m[p] / (1 - BETA1**k)
            u_hat = u[p] / (1 - BETA2**k)
            param[p] = decayed - LR_ADAM * m_hat / (np.sqrt(u_hat) + EPS)
    return [w1, param["w2"], param["b"], vel, m["w2"], u["w2"], m["b"], u["b"]] + [
        grads[p] for p in PARAMS
    ]


def worst_error(got, expected):
    worst = 0.0
    for a, e in zip(got, expected):
        a, e = np.asarray(a, np.float64).reshape(np.shape(e)), np.asarray(e, np.float64)
        worst = max(worst, float(np.max(np.abs(a - e))) / max(float(np.max(np.abs(e))), 1e-30))
    return worst


def names():
    out = [f"new {p}" for p in PARAMS]
    out += [f"{p} state {k}" for p in PARAMS for k in range(OPTIMIZER[p][1])]
    return out + [f"d{p}" for p in PARAMS]


def program(L, steps):
    return (
        f'#mesh = #dist.mesh<shape = [{L.mesh[0]}, {L.mesh[1]}], names = ["dp", "tp"]>\n'
        + step_function(L)
        + main_function(L, initial_values(), steps)
    )


MODES = {
    "base": "",
    "zero1": "zero-stage=1",
    "zero2": "zero-stage=2",
    "buckets": "bucket-gradients=true bucket-mb=0.001 first-bucket-mb=0.0002",
}


def flags(mode):
    opts = [MODES[m] for m in mode.split("+")]
    return (
        "--dist-auto-parallel=" + "'" + " ".join(o for o in opts if o) + "'"
        if any(opts)
        else "--dist-auto-parallel"
    )


def parse(config):
    mesh, mode = config.split(":")
    dp, tp = (int(x) for x in mesh.split("x"))
    for m in mode.split("+"):
        if m not in MODES:
            raise SystemExit(f"unknown mode {m!r} (expected {', '.join(MODES)})")
    return Layout(dp, tp), mode


def held_elements(L, mode):
    """What ZeRO's definition says one process holds of each parameter's
    gradient and of each of its states, in elements: the parameter's tp
    block, or the ceil(1/dp) shard of it where the mode shards it."""
    stages = {"zero1": 1, "zero2": 2}
    stage = max(stages.get(m, 0) for m in mode.split("+"))
    out = {}
    for p, (shape, dims) in PARAMS.items():
        block = int(np.prod(L.local(shape, L.dims(dims))))
        shard = -(-block // L.mesh[0])
        out[p] = (shard if stage >= 2 else block, shard if stage >= 1 else block)
    return out


def check_signature(L, mode):
    """The completed @step's results against held_elements: the elements
    of each gradient and state one process returns, and a shard split over
    dp. Returns the first difference, or None."""
    module = dist.Module.parse(program(L, 1))
    opts = " ".join(MODES[m] for m in mode.split("+") if MODES[m])
    module.run("dist-auto-parallel" + (f"{{{opts}}}" if opts else ""))
    step = next(op for op in module.operations if '"step"' in str(op.attributes.get("sym_name")))
    types = [v.type for v in step.regions[0].blocks[0].operations[-1].operands]
    n = len(PARAMS)
    held, i = [], 2 * n
    for k, p in enumerate(PARAMS):
        whole = int(np.prod(L.local(*PARAMS[p])))
        grad, state = held_elements(L, mode)[p]
        held.append((f"{p}'s gradient", types[k], grad, whole))
        for j in range(OPTIMIZER[p][1]):
            held.append((f"{p}'s state {j}", types[i + j], state, whole))
        i += OPTIMIZER[p][1]
    for what, t, want, whole in held:
        got = int(np.prod(t.shape))
        if got != want:
            return f"{what} holds {got} elements per process, ZeRO's definition {want}"
        if L.mesh[0] > 1 and (0 in t.dist.dims_mapping) != (want < whole):
            return f"{what} is {'' if want < whole else 'not '}split over dp: {t}"
    return None


def run(L, mode, steps):
    procs = L.mesh[0] * L.mesh[1]
    return dist.run_on_mpi(program(L, steps), procs, pass_flags=flags(mode))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("configs", nargs="*")
    parser.add_argument("--print", metavar="CONFIG", help="print the program of CONFIG")
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    if args.print:
        L, _ = parse(args.print)
        print(program(L, args.steps))
        return 0
    expected = run(Layout(1, 1), "base", args.steps)[0]
    # The serial program itself against numpy: the optimizers' formulas.
    worst = worst_error(expected, reference(initial_values(), args.steps))
    ok = worst <= TOLERANCE
    print(
        f"{'ok' if ok else 'FAILED'}: serial: {len(expected)} arrays after {args.steps} steps "
        f"against numpy, worst relative error {worst:.1e}"
    )
    for config in args.configs:
        L, mode = parse(config)
        wrong = check_signature(L, mode)
        ok = ok and wrong is None
        print(f"FAILED {config}: {wrong}" if wrong else f"ok: {config}: signature")
        ranks = run(L, mode, args.steps)
        worst, where = 0.0, ""
        for rank, got in enumerate(ranks):
            if len(got) != len(expected):
                print(
                    f"FAILED {config}: rank {rank} printed {len(got)} arrays, expected {len(expected)}"
                )
                ok = False
                break
            for name, a, e in zip(names(), got, expected):
                a, e = np.asarray(a, np.float64), np.asarray(e, np.float64)
                err = float(np.max(np.abs(a - e))) / max(float(np.max(np.abs(e))), 1e-30)
                if err > worst:
                    worst, where = err, f"{name} on rank {rank}"
        good = worst <= TOLERANCE
        ok = ok and good
        print(
            f"{'ok' if good else 'FAILED'}: {config}: {len(expected)} arrays after {args.steps} steps "
            f"on {len(ranks)} processes, worst relative error {worst:.1e}"
            + ("" if good else f" ({where})")
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
