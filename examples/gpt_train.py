#!/usr/bin/env python3
"""Train the GPT model of gpt_model.py on MPI: K steps over the synthetic
language of corpus.py, the loss of every step written out and drawn.

  PYTHONPATH=build/python_packages python3 examples/gpt_train.py
      [--layouts LAYOUT:MESH ...] [--steps K] [model options]
      [--json losses.json] [--svg losses.svg] [--zero-stage 0|1|2] [--buckets]

For each layout the step is generated (gpt_model.py), and a `@main` around
it (`harness`) holds the initial parameters and the token batches as
constants, runs the K steps as an `scf.for` that carries the parameters and
optimizer states from step to step, feeds step k its batch (each process
its block of the rows) and prints the loss of every step. The program is
completed and lowered by `--dist-auto-parallel` and run by dist.run on as
many processes as the mesh has; the losses are rank 0's (every rank prints
the same).
"""
import argparse
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus  # noqa: E402
import gpt_layer  # noqa: E402
import gpt_model  # noqa: E402


def init_params(L, seed=0):
    """The global initial parameters by name (GPT-2's: weights normal with
    standard deviation 0.02, LayerNorm gains 1 and biases 0). The padded
    rows of wte are large random values: they must change nothing."""
    rng = np.random.default_rng(seed)
    names, dims = L.params()
    out = {}
    for p in names:
        shape = [L.g[x] for x in dims[p]]
        if p == "wte":
            real = rng.standard_normal((L.vocab, shape[1])) * 0.02
            pad = rng.standard_normal((shape[0] - L.vocab, shape[1])) * 10.0
            v = np.concatenate([real, pad])
        elif p.endswith("_g"):
            v = np.ones(shape)
        elif p.endswith("_b"):
            v = np.zeros(shape)
        else:
            v = rng.standard_normal(shape) * 0.02
        out[p] = v.astype(np.float32)
    return out


def hex_dense(a, element):
    """A dense attribute of `a`'s raw little-endian bytes (fast to print and
    to parse for large constants)."""
    dtype = {"f32": "<f4", "i64": "<i8"}[element]
    data = np.ascontiguousarray(a, dtype=dtype).tobytes().hex().upper()
    return f'dense<"0x{data}"> : tensor<{a.size}x{element}>'


class Harness:
    """@main's lines."""

    def __init__(self, L):
        self.L = L
        self.lines = []
        self.n = 0
        for a in range(len(L.mesh)):
            self.emit(f"%crd{a} = dist.process_coord #mesh axis = {a}")

    def fresh(self, stem):
        self.n += 1
        return f"%{stem}{self.n}"

    def emit(self, line, indent=1):
        self.lines.append("  " * indent + line)

    def whole(self, name, a, element):
        """The global array `a` as a constant of its shape."""
        flat = self.fresh(name + "_flat")
        self.emit(f"{flat} = arith.constant {hex_dense(a, element)}")
        shape = "x".join(map(str, a.shape))
        out = self.fresh(name)
        groups = "[" + ", ".join(str(i) for i in range(a.ndim)) + "]"
        self.emit(
            f"{out} = tensor.expand_shape {flat} [{groups}] output_shape "
            f"[{', '.join(map(str, a.shape))}] : tensor<{a.size}x{element}> into "
            f"tensor<{shape}x{element}>"
        )
        return out

    def offset(self, letter, base=None):
        """This process's first index along `letter` (an SSA index)."""
        L = self.L
        axis = L.axis(letter)
        if axis is None:
            return base if base is not None else "0"
        k = self.fresh("k")
        self.emit(f"{k} = arith.constant {L.size(letter)} : index")
        o = self.fresh("o")
        self.emit(f"{o} = arith.muli %crd{axis}, {k} : index")
        return o

    def block(self, name, a, dims):
        """This process's block of the global f32 array `a` (letters `dims`)
        in the step's encoded type."""
        L = self.L
        whole = self.whole(name, a, "f32")
        offs = [self.offset(x) for x in dims]
        gshape = "x".join(map(str, a.shape))
        local = [L.size(x) for x in dims]
        blk = self.fresh(name + "_blk")
        self.emit(
            f"{blk} = tensor.extract_slice {whole}[{', '.join(offs)}] "
            f"[{', '.join(map(str, local))}] [{', '.join('1' for _ in dims)}] : "
            f"tensor<{gshape}xf32> to {L.ty(dims)}"
        )
        out = self.fresh(name)
        self.emit(f"{out} = tensor.cast {blk} : {L.ty(dims)} to {L.ty(dims, True)}")
        return out

    def print_value(self, v, dims, encoded_ty, indent=1):
        """Prints `v` (of letters `dims`) whole."""
        L = self.L
        whole = "tensor<" + "".join(f"{L.g[x]}x" for x in dims) + "f32"
        enc = ", #dist.tensor<#mesh, [" + ", ".join("-1" for _ in dims) + "]>"
        rep = self.fresh("rep")
        self.emit(f"{rep} = dist.reshard {v} : {encoded_ty} -> {whole}{enc}>", indent)
        plain = self.fresh("plain")
        self.emit(f"{plain} = tensor.cast {rep} : {whole}{enc}> to {whole}>", indent)
        memref = "memref<" + "".join(f"{L.g[x]}x" for x in dims) + "f32>"
        buf = self.fresh("buf")
        self.emit(f"{buf} = bufferization.to_buffer {plain} : {whole}> to {memref}", indent)
        u = self.fresh("u")
        self.emit(f"{u} = memref.cast {buf} : {memref} to memref<*xf32>", indent)
        self.emit(f"func.call @printMemrefF32({u}) : (memref<*xf32>) -> ()", indent)

    def text(self):
        return (
            "func.func private @printMemrefF32(memref<*xf32>)\n"
            "func.func @main() {\n" + "\n".join(self.lines) + "\n  return\n}\n"
        )


def ids_ty(L):
    b = L.size("b")
    axis = L.axis("b")
    return (
        f"tensor<{b}x{L.g['s']}xi64, #dist.tensor<#mesh, [{axis if axis is not None else -1}, -1]>>"
    )


def harness(L, init, tokens, print_grads=False, print_params=False):
    """@main: `len(tokens)` steps from `init` on tokens[k] ([batch, seq + 1]),
    printing each step's loss; then, as asked, step 1's gradients (printed
    inside the first iteration) and the final parameters and states."""
    bad = np.argwhere((tokens < 0) | (tokens >= L.vocab))
    if bad.size:
        k, i, j = bad[0]
        raise ValueError(
            f"token {tokens[k, i, j]} (step {k + 1}, row {i}, position {j}) is outside the "
            f"vocabulary of {L.vocab}"
        )
    H = Harness(L)
    names, dims = L.params()
    n_states = gpt_layer.STATES[L.optimizer]
    enc = {p: L.ty(dims[p], True) for p in names}
    params = [H.block(p, init[p], dims[p]) for p in names]
    states = []
    for p in names:
        for _ in range(n_states):
            z = H.fresh("zero")
            H.emit(f"{z} = arith.constant dense<0.0> : {enc[p]}")
            states.append((z, enc[p]))
    toks = H.whole("tokens", np.asarray(tokens, dtype=np.int64), "i64")
    steps, gb, s1 = tokens.shape
    s = s1 - 1
    tok_ty = f"tensor<{steps}x{gb}x{s1}xi64>"
    row = H.offset("b", None)
    H.emit("%lb = arith.constant 0 : index")
    H.emit(f"%ub = arith.constant {steps} : index")
    H.emit("%one = arith.constant 1 : index")
    carried = [(v, enc[p]) for v, p in zip(params, names)] + states
    iter_args = ", ".join(f"%it{i} = {v}" for i, (v, _) in enumerate(carried))
    loop_tys = ", ".join(t for _, t in carried)
    H.emit(
        f"%out:{len(carried)} = scf.for %k = %lb to %ub step %one iter_args({iter_args}) -> ({loop_tys}) {{"
    )
    b = L.size("b")
    local_ids = f"tensor<{b}x{s}xi64>"
    ids = {}
    for name, first in (("ids", 0), ("targets", 1)):
        sl = H.fresh(name + "_s")
        H.emit(
            f"{sl} = tensor.extract_slice {toks}[%k, {row}, {first}] [1, {b}, {s}] [1, 1, 1] : "
            f"{tok_ty} to {local_ids}",
            2,
        )
        ids[name] = H.fresh(name)
        H.emit(f"{ids[name]} = tensor.cast {sl} : {local_ids} to {ids_ty(L)}", 2)
    args = [f"%it{i}" for i in range(len(carried))]
    arg_tys = [t for _, t in carried]
    args = args[: len(names)] + [ids["ids"], ids["targets"]] + args[len(names) :]
    arg_tys = arg_tys[: len(names)] + [ids_ty(L)] * 2 + arg_tys[len(names) :]
    if L.optimizer == "adamw":
        H.emit("%ki = arith.index_cast %k : index to i64", 2)
        H.emit("%kf = arith.sitofp %ki : i64 to f32", 2)
        H.emit("%c1f = arith.constant 1.0 : f32", 2)
        H.emit("%tf = arith.addf %kf, %c1f : f32", 2)
        H.emit("%t = tensor.from_elements %tf : tensor<f32>", 2)
        args.append("%t")
        arg_tys.append("tensor<f32>")
    loss_ty = L.ty("", True)
    res_tys = [loss_ty] + [enc[p] for p in names] * 2 + [t for _, t in states]
    H.emit(
        f"%r:{len(res_tys)} = func.call @train_step({', '.join(args)}) : "
        f"({', '.join(arg_tys)}) -> ({', '.join(res_tys)})",
        2,
    )
    H.print_value("%r#0", "", loss_ty, 2)
    if print_grads:
        H.emit("%first = arith.cmpi eq, %k, %lb : index", 2)
        H.emit("scf.if %first {", 2)
        for i, p in enumerate(names):
            H.print_value(f"%r#{1 + i}", dims[p], enc[p], 3)
        H.emit("}", 2)
    new = [f"%r#{1 + len(names) + i}" for i in range(len(names) + len(states))]
    H.emit(f"scf.yield {', '.join(new)} : {loop_tys}", 2)
    H.emit("}")
    if print_params:
        for i, p in enumerate(names):
            H.print_value(f"%out#{i}", dims[p], enc[p])
    return H.text()


def pipeline_flags(zero_stage=0, buckets=False):
    options = []
    if zero_stage:
        options.append(f"zero-stage={zero_stage}")
    if buckets:
        options += ["bucket-gradients=true", "first-bucket-mb=0.05", "bucket-mb=0.1"]
    return "--dist-auto-parallel" + (f"='{' '.join(options)}'" if options else "")


def run_program(L, text, flags="--dist-auto-parallel", native=False):
    """Runs the step and its @main (`text`) on the layout's processes; each
    rank's printed arrays, in order: the losses, then what the harness was
    asked to print."""
    import dist

    procs = int(np.prod(L.mesh))
    return dist.run_on_mpi(text, procs, pass_flags=flags, timeout=1800, native=native)


def batches_of(args, L):
    """The [steps, batch, seq + 1] token batches: corpus.py's language, or
    the ids of --corpus cut in order."""
    b, s = L.g["b"], L.g["s"]
    if not args.corpus:
        return corpus.batches(args.vocab, args.steps, b, s, args.seed)
    with open(args.corpus) as f:
        try:
            ids = np.array([int(t) for t in f.read().split()], dtype=np.int64)
        except ValueError:
            raise ValueError(f"{args.corpus}: token ids are integers separated by spaces") from None
    need = args.steps * b * (s + 1)
    if ids.size < need:
        raise ValueError(
            f"{args.corpus}: {ids.size} tokens, but {args.steps} steps of {b} x {s + 1} need {need}"
        )
    return ids[:need].reshape(args.steps, b, s + 1)


def split_output(L, arrays, steps, print_grads=False):
    """(losses, step 1's gradients by name or None, the rest)."""
    names, _ = L.params()
    losses, grads, rest = [], None, list(arrays)
    if print_grads:
        losses.append(float(rest.pop(0)))
        grads = dict(zip(names, rest[: len(names)]))
        rest = rest[len(names) :]
        steps -= 1
    losses += [float(a) for a in rest[:steps]]
    return losses, grads, rest[steps:]


def loss_svg(curves, title, floor=None):
    """An SVG line chart of each curve (label -> losses per step), with
    axes, ticks and a legend."""
    width, height, left, right, top, bottom = 640, 400, 60, 160, 40, 50
    pw, ph = width - left - right, height - top - bottom
    steps = max(len(c) for c in curves.values())
    hi = max(max(c) for c in curves.values())
    lo = min(min(c) for c in curves.values())
    if floor is not None:
        lo = min(lo, floor)
    lo, hi = math.floor(lo), math.ceil(hi)
    hi = max(hi, lo + 1)

    def x(i):
        return left + pw * i / max(steps - 1, 1)

    def y(v):
        return top + ph * (hi - v) / (hi - lo)

    colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left + pw / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
        f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="black"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="black"/>',
        f'<text x="{left + pw / 2}" y="{height - 10}" text-anchor="middle">step</text>',
        f'<text x="15" y="{top + ph / 2}" text-anchor="middle" '
        f'transform="rotate(-90 15 {top + ph / 2})">loss (nats per token)</text>',
    ]
    for v in range(lo, hi + 1):
        out.append(f'<line x1="{left - 4}" y1="{y(v)}" x2="{left}" y2="{y(v)}" stroke="black"/>')
        out.append(f'<text x="{left - 8}" y="{y(v) + 4}" text-anchor="end">{v}</text>')
    tick = max(1, 10 ** int(math.log10(max(steps - 1, 1))))
    if (steps - 1) / tick < 4:
        tick = max(1, tick // 2)
    for i in range(0, steps, tick):
        out.append(
            f'<line x1="{x(i)}" y1="{top + ph}" x2="{x(i)}" y2="{top + ph + 4}" stroke="black"/>'
        )
        out.append(f'<text x="{x(i)}" y="{top + ph + 18}" text-anchor="middle">{i + 1}</text>')
    if floor is not None:
        out.append(
            f'<line x1="{left}" y1="{y(floor)}" x2="{left + pw}" y2="{y(floor)}" '
            f'stroke="gray" stroke-dasharray="4 3"/>'
        )
        out.append(
            f'<text x="{left + pw - 4}" y="{y(floor) - 4}" text-anchor="end" fill="gray">'
            f"the language's entropy</text>"
        )
    for k, (label, losses) in enumerate(curves.items()):
        color = colors[k % len(colors)]
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(losses))
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{points}"/>')
        ly = top + 10 + 18 * k
        out.append(
            f'<line x1="{left + pw + 15}" y1="{ly}" x2="{left + pw + 35}" y2="{ly}" stroke="{color}" stroke-width="2"/>'
        )
        out.append(f'<text x="{left + pw + 40}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    gpt_model.add_model_args(p)
    p.set_defaults(layout=None)
    p.add_argument("--layouts", nargs="+", default=["serial"], metavar="LAYOUT:MESH")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--seed", type=int, default=1234, help="the corpus's seed")
    p.add_argument(
        "--corpus",
        help="train on the token ids in this file (whitespace-separated, e.g. corpus.py -o) "
        "instead of corpus.py's language",
    )
    p.add_argument("--zero-stage", type=int, default=0, choices=(0, 1, 2))
    p.add_argument("--buckets", action="store_true", help="gradient buckets")
    p.add_argument("--json", help="write the losses per layout here")
    p.add_argument("--svg", help="draw the loss curves here")
    args = p.parse_args(argv)
    if args.steps < 1:
        print("gpt_train.py: error: --steps must be positive", file=sys.stderr)
        return 1
    curves = {}
    for spec in args.layouts:
        name, _, mesh = spec.partition(":")
        args.layout, args.mesh = name, mesh or None
        try:
            L = gpt_model.layout_of(args)
            tokens = batches_of(args, L)
            init = init_params(L)
            program = gpt_model.build(L, gpt_model.hyper_of(args)) + harness(L, init, tokens)
        except (ValueError, OSError) as e:
            print(f"gpt_train.py: error: {e}", file=sys.stderr)
            return 1
        flags = pipeline_flags(args.zero_stage, args.buckets)
        arrays = run_program(L, program, flags)[0]
        losses, _, _ = split_output(L, arrays, args.steps)
        label = f"{L.name} [{', '.join(map(str, L.mesh))}]"
        curves[label] = losses
        print(f"{label}: loss {losses[0]:.4f} -> {losses[-1]:.4f} in {len(losses)} steps")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(curves, f, indent=1)
    if args.svg:
        title = (
            f"GPT, {args.layers} layers, hidden {args.hidden}, vocabulary {args.vocab}: "
            f"{args.optimizer} on corpus.py"
        )
        with open(args.svg, "w") as f:
            f.write(loss_svg(curves, title, corpus.entropy_floor()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
