"""A layer stack to pipeline: an L-layer tanh MLP's training step on one
microbatch (the mean square error, the backward by hand, SGD on every
weight), each layer's ops marked with their stage (`dist.stage`), written
for completion (`dist.complete`: only the signature is encoded, on a
[pp, dp, tp] mesh; with tp, layers alternate column- and row-parallel).

  python3 examples/pipeline_mlp.py --mesh 2,1,1 --microbatches 4 > step.mlir

`program()` pipelines it with dist-opt (--dist-complete, --dist-pipeline)
and adds a @main that passes every process its shards of M microbatches
and the weights and prints its shard of each result; `reference()` is the
serial step in numpy. test/Integration/pipeline_check.py and
bench/pipeline.py use both.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "Integration"))
from textir import fmt, ttype  # noqa: E402

LR = 0.1


def encoding(dims):
    return "#dist.tensor<#mesh, [" + ", ".join(map(str, dims)) + "]>"


def weight_dims(layer, tp):
    """Column-parallel even layers, row-parallel odd ones."""
    if tp == 1:
        return [-1, -1]
    return [-1, 2] if layer % 2 == 0 else [2, -1]


def ew(out, ins, body, act, stage):
    """An elementwise linalg.generic: `body` computes %r from %v0, %v1, ...
    (scalar constants live in the body, so completion sees no constant
    tensor)."""
    maps = ", ".join(["affine_map<(i, j) -> (i, j)>"] * (len(ins) + 1))
    names = ", ".join(v for v, _ in ins)
    types = ", ".join(t for _, t in ins)
    args = ", ".join(f"%v{k}: f32" for k in range(len(ins)))
    return (
        [
            f"{out}_e = tensor.empty() : {act}",
            f"{out} = linalg.generic {{indexing_maps = [{maps}], iterator_types = "
            f'["parallel", "parallel"]}} ins({names} : {types}) outs({out}_e : {act}) '
            f"attrs = {{dist.stage = {stage}}} {{",
            f"^bb0({args}, %o: f32):",
        ]
        + ["  " + line for line in body]
        + ["  linalg.yield %r : f32", f"}} -> {act}"]
    )


ACTIVATIONS = {
    # name: (forward body on %v0, backward body on the gradient %v0 and the
    # activation %v1, numpy forward, numpy derivative from the activation)
    "tanh": (
        ["%r = math.tanh %v0 : f32"],
        [
            "%one = arith.constant 1.0 : f32",
            "%sq = arith.mulf %v1, %v1 : f32",
            "%dt = arith.subf %one, %sq : f32",
            "%r = arith.mulf %v0, %dt : f32",
        ],
        np.tanh,
        lambda a: 1 - a**2,
    ),
    "relu": (
        ["%z = arith.constant 0.0 : f32", "%r = arith.maximumf %v0, %z : f32"],
        [
            "%z = arith.constant 0.0 : f32",
            "%p = arith.cmpf ogt, %v1, %z : f32",
            "%r = arith.select %p, %v0, %z : f32",
        ],
        lambda h: np.maximum(h, 0),
        lambda a: (a > 0).astype(a.dtype),
    ),
}


def step_ir(layers, batch, width, dp, tp, input_grad=False, act="tanh"):
    """The step on one microbatch of `batch` rows, in local shapes (types
    hold what one process holds): completion decides the encodings of the
    rest and places the collectives. With `input_grad`, the first layer
    computes its input's gradient too (a `dist.matmul_grad` whose dX nobody
    reads), so that every stage computes the same products. `act` names the
    hidden layers' activation (ACTIVATIONS): relu costs little next to the
    products, which the bubble benchmark needs to make its stages equal."""
    forward, backward = ACTIVATIONS[act][:2]
    lb = batch // dp
    x_enc = encoding([1 if dp > 1 else -1, -1])
    xt = ttype([lb, width], x_enc)

    def wshape(i):
        dims = weight_dims(i, tp)
        return [width // tp if d == 2 else width for d in dims]

    def cols_out(i):
        return width // tp if weight_dims(i, tp)[1] == 2 else width

    wts = [ttype(wshape(i), encoding(weight_dims(i, tp))) for i in range(layers)]
    acts = [ttype([lb, cols_out(i)]) for i in range(layers)]
    args = [f"%x: {xt}", f"%t: {xt}"]
    args += [f'%w{i}: {wts[i]} {{dist.param = "w{i}"}}' for i in range(layers)]
    results = [f"tensor<f32, {encoding([])}> {{dist.loss}}"]
    results += [f'{wts[i]} {{dist.grad = "w{i}"}}' for i in range(layers)]
    results += wts
    lines = []
    a, at = "%x", xt
    for i in range(layers):
        lines.append(
            f"%h{i} = dist.matmul {a}, %w{i} {{dist.stage = {i}}} : {at}, {wts[i]} -> {acts[i]}"
        )
        if i + 1 < layers:
            lines += ew(f"%a{i}", [(f"%h{i}", acts[i])], forward, acts[i], i)
            a, at = f"%a{i}", acts[i]
    last = layers - 1
    out = acts[last]
    n = batch * width
    lines += ew(
        "%d", [(f"%h{last}", out), ("%t", xt)], ["%r = arith.subf %v0, %v1 : f32"], out, last
    )
    lines += [
        "%zero = arith.constant dense<0.0> : tensor<f32>",
        "%lossu = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, "
        'affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} '
        f"ins(%d : {out}) outs(%zero : tensor<f32>) attrs = {{dist.stage = {last}}} {{",
        "^bb0(%in: f32, %acc: f32):",
        f"  %inv = arith.constant {fmt(1.0 / n)} : f32",
        "  %p = arith.mulf %in, %in : f32",
        "  %q = arith.mulf %p, %inv : f32",
        "  %s = arith.addf %acc, %q : f32",
        "  linalg.yield %s : f32",
        "} -> tensor<f32>",
        f"%loss = dist.constraint %lossu {{dist.stage = {last}}} "
        f": tensor<f32> -> tensor<f32, {encoding([])}>",
    ]
    lines += ew(
        f"%g{last}",
        [("%d", out)],
        [f"%k = arith.constant {fmt(2.0 / n)} : f32", "%r = arith.mulf %v0, %k : f32"],
        out,
        last,
    )
    for i in reversed(range(layers)):
        if i == 0 and not input_grad:
            # The input needs no gradient: only the weight's product.
            lines.append(
                f"%dw0 = dist.matmul %x, %g0 transpose_x {{dist.stage = 0}} "
                f": {xt}, {acts[0]} -> {wts[0]}"
            )
            continue
        inp, it = ("%x", xt) if i == 0 else (f"%a{i - 1}", acts[i - 1])
        lines.append(
            f"%da{i}, %dw{i} = dist.matmul_grad {inp}, %w{i}, %g{i} {{dist.stage = {i}}} "
            f": {it}, {wts[i]}, {acts[i]} -> {it}, {wts[i]}"
        )
        if i == 0:
            continue
        j = i - 1
        lines += ew(
            f"%g{j}",
            [(f"%da{i}", acts[j]), (f"%a{j}", acts[j])],
            backward,
            acts[j],
            j,
        )
    for i in range(layers):
        vt = ttype(wshape(i))
        lines.append(f"%v{i} = arith.constant dense<0.0> : {vt}")
        lines.append(
            f"%nw{i}, %nv{i} = dist.sgd %w{i}, %dw{i}, %v{i} lr = {LR} momentum = 0.0 "
            f"{{dist.stage = {i}}} : ({wts[i]}, {wts[i]}, {vt}) -> ({wts[i]}, {vt})"
        )
    rets = ["%loss"] + [f"%dw{i}" for i in range(layers)] + [f"%nw{i}" for i in range(layers)]
    rtypes = [f"tensor<f32, {encoding([])}>"] + wts * 2
    lines.append(f"return {', '.join(rets)} : {', '.join(rtypes)}")
    return (
        f"func.func @step({', '.join(args)}) -> ({', '.join(results)}) "
        "attributes {dist.complete} {\n  " + "\n  ".join(lines) + "\n}\n"
    )


def dense(values):
    if values.size and (values == values.flat[0]).all():
        # A splat: what a benchmark's wide layers pass, parsed at once.
        return f"dense<{fmt(values.flat[0])}>"
    return (
        "dense<[" + ", ".join("[" + ", ".join(fmt(v) for v in row) + "]" for row in values) + "]>"
    )


def main_ir(layers, batch, width, mesh, micro, xs, ts, ws, calls=1):
    """@main: every process passes its shard of each microbatch and weight
    (a slice at its coordinates, cast to the encoding) and prints its shard
    of every result. With `calls` > 1, @step is called that many times on
    the same arguments (a benchmark times the later calls) and the last
    call's results are printed."""
    pp, dp, tp = mesh
    x_enc = encoding([1 if dp > 1 else -1, -1])
    lb = batch // dp
    body = [
        "%cdp = dist.process_coord #mesh axis = 1",
        "%ctp = dist.process_coord #mesh axis = 2",
        f"%rows = arith.muli %cdp, %c{lb} : index",
        "%c0 = arith.constant 0 : index",
    ]
    consts = {lb, width // tp, batch}
    args = []

    def shard(name, value, rows_split, cols_split):
        r, c = value.shape
        body.append(f"%{name}_g = arith.constant {dense(value)} : {ttype([r, c])}")
        lr_, lc = r // rows_split[1], c // cols_split[1]
        roff = f"%{rows_split[0]}" if rows_split[1] > 1 else "%c0"
        coff = f"%{cols_split[0]}" if cols_split[1] > 1 else "%c0"
        body.append(
            f"%{name}_l = tensor.extract_slice %{name}_g[{roff}, {coff}] [{lr_}, {lc}] [1, 1] "
            f": {ttype([r, c])} to {ttype([lr_, lc])}"
        )
        return f"%{name}_l", ttype([lr_, lc])

    body.append(f"%cols = arith.muli %ctp, %c{width // tp} : index")
    body.append(f"%wrows = arith.muli %ctp, %c{width // tp} : index")
    locals_ = []
    for m in range(micro):
        for nm, arr in (("x", xs[m]), ("t", ts[m])):
            v, ty = shard(f"{nm}{m}", arr, ("rows", dp), ("cols", 1))
            body.append(f"%{nm}{m}_e = tensor.cast {v} : {ty} to {ttype([lb, width], x_enc)}")
            locals_.append((f"%{nm}{m}_e", ttype([lb, width], x_enc), nm, m))
    xargs = [a for a in locals_ if a[2] == "x"] + [a for a in locals_ if a[2] == "t"]
    for a in xargs:
        args.append((a[0], a[1]))
    wtypes = []
    for i in range(layers):
        dims = weight_dims(i, tp)
        rows = ("wrows", tp) if dims[0] == 2 else ("c0", 1)
        cols = ("cols", tp) if dims[1] == 2 else ("c0", 1)
        v, ty = shard(f"w{i}", ws[i], rows, cols)
        lshape = [width // (tp if dims[0] == 2 else 1), width // (tp if dims[1] == 2 else 1)]
        et = ttype(lshape, encoding(dims))
        body.append(f"%w{i}_e = tensor.cast {v} : {ty} to {et}")
        args.append((f"%w{i}_e", et))
        wtypes.append((lshape, et))
    rtypes = [f"tensor<f32, {encoding([])}>"] + [w[1] for w in wtypes] * 2
    for call in range(calls):
        prefix = "%r" if call + 1 == calls else f"%unused{call}_"
        outs = ", ".join(f"{prefix}{i}" for i in range(len(rtypes)))
        body.append(
            f"{outs} = func.call @step({', '.join(a for a, _ in args)}) "
            f": ({', '.join(t for _, t in args)}) -> ({', '.join(rtypes)})"
        )
    body[0:0] = [f"%c{c} = arith.constant {c} : index" for c in sorted(consts)]
    shapes = [[1]] + [w[0] for w in wtypes] * 2
    for i, (ty, shape) in enumerate(zip(rtypes, shapes)):
        plain = ttype(shape) if i else "tensor<f32>"
        body.append(f"%p{i} = tensor.cast %r{i} : {ty} to {plain}")
        val = f"%p{i}"
        if not i:
            body.append(
                f"%p{i}e = tensor.expand_shape %p0 [] output_shape [1] : tensor<f32> into tensor<1xf32>"
            )
            val, plain = f"%p{i}e", "tensor<1xf32>"
        body.append(
            f"%b{i} = bufferization.to_buffer {val} : {plain} to memref<{'x'.join(map(str, shape))}xf32>"
        )
        body.append(
            f"%u{i} = memref.cast %b{i} : memref<{'x'.join(map(str, shape))}xf32> to memref<*xf32>"
        )
        body.append(f"func.call @printMemrefF32(%u{i}) : (memref<*xf32>) -> ()")
    body.append("return")
    return (
        "func.func private @printMemrefF32(memref<*xf32>)\nfunc.func @main() {\n  "
        + "\n  ".join(body)
        + "\n}\n"
    )


def reference(xs, ts, ws, act="tanh"):
    """The serial step on all microbatches at once."""
    forward, derivative = ACTIVATIONS[act][2:]
    x, t = np.concatenate(xs), np.concatenate(ts)
    acts, a = [], x
    for i, w in enumerate(ws):
        acts.append(a)
        h = a @ w
        a = forward(h) if i + 1 < len(ws) else h
    d = a - t
    loss = (d * d).mean()
    g = 2 * d / d.size
    grads = [None] * len(ws)
    for i in reversed(range(len(ws))):
        grads[i] = acts[i].T @ g
        if i:
            g = (g @ ws[i].T) * derivative(acts[i])
    return loss, grads, [w - LR * gw for w, gw in zip(ws, grads)]


def data(M, L, B=4, H=8, seed=7):
    """The microbatches' inputs and targets and the weights."""
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal((B, H)).astype(np.float32) for _ in range(M)]
    ts = [rng.standard_normal((B, H)).astype(np.float32) for _ in range(M)]
    ws = [(rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32) for _ in range(L)]
    return xs, ts, ws


def mesh_header(mesh):
    pp, dp, tp = mesh
    return f'#mesh = #dist.mesh<shape = [{pp}, {dp}, {tp}], names = ["pp", "dp", "tp"]>\n'


def program(
    dist_opt, mesh, M, schedule, chunks, L, xs, ts, ws, input_grad=False, act="tanh", calls=1
):
    """The pipelined step and its @main, as text; raises RuntimeError with
    dist-opt's messages when it refuses."""
    B, H = xs[0].shape
    # The step is pipelined on its own (the pass changes its signature, so
    # it refuses a step with callers), then @main is added.
    piped = subprocess.run(
        [
            dist_opt,
            "-",
            "--dist-complete",
            f"--dist-pipeline=schedule={schedule} microbatches={M} chunks={chunks}",
        ],
        input=mesh_header(mesh) + step_ir(L, B, H, mesh[1], mesh[2], input_grad, act),
        capture_output=True,
        text=True,
    )
    if piped.returncode:
        raise RuntimeError(piped.stderr)
    module = piped.stdout.rstrip()
    return module[:-1] + main_ir(L, B, H, mesh, M, xs, ts, ws, calls) + "}\n"


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--mesh", default="2,1,1", help="pp,dp,tp")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--width", type=int, default=8)
    args = p.parse_args()
    mesh = [int(v) for v in args.mesh.split(",")]
    sys.stdout.write(
        mesh_header(mesh) + step_ir(args.layers, args.batch, args.width, mesh[1], mesh[2])
    )


if __name__ == "__main__":
    main()
