#!/usr/bin/env python3
"""One training step of a whole GPT model, as a dist program.

  PYTHONPATH=build/python_packages python3 examples/gpt_model.py
      [--layout L] [--mesh SHAPE] [--layers N] [--vocab V] [--batch B]
      [--seq S] [--hidden H] [--heads N] [--ffn F] [--dropout P]
      [--optimizer adamw|momentum|sgd] [--lr LR] [-o FILE]
      [--report LAYOUT:MESH ...]

prints `@train_step`: token ids in, the token embedding (a `dist.embedding`
of the table `wte`, whose rows the tensor-parallel axis splits, lowered by
`--dist-parallel-embedding`) plus the position embedding `wpe`, N
pre-LayerNorm layers (examples/gpt_layer.py's), the final LayerNorm, the LM
head tied to `wte`, Megatron's vocab-parallel cross-entropy, the whole
backward pass and one optimizer step. It returns the loss, every
parameter's gradient (marked `dist.grad`), the updated parameters and the
optimizer states (`dist.state`). As for the layer, only the signature
carries encodings (`{dist.complete}`); the layouts are gpt_layer.py's.

The layers are unrolled into the one function: completion, the gradient
buckets and ZeRO work on one function's schedule (a bucket gathers the
gradients of several layers), and the function grows by the same ops per
layer, so its size and compile time are linear in N.

The cross-entropy never gathers the logits. With the vocabulary split over
tp, each process holds the logits of its rows of `wte`: the row maxima are
a partial max and the sums of exponents a partial sum, completed by a MAX
and a SUM allreduce; the target's logit is the dot product of the final
hidden state with the target's row of `wte`, looked up in the process's
shard (`dist.c_embedding`: zero for targets of other shards), a partial sum
completed by a SUM allreduce of one value per token. Its backward is
softmax / count through the LM head's `dist.matmul_grad`, minus the
target's row (`dist.c_embedding` again) for the hidden state and minus the
scattered hidden state (`dist.c_embedding_grad`) for the table.

A vocabulary that tp does not divide is padded as Megatron pads it
(`--vocab-divisible-by`, 128 by default, times the tp degree): the padded
rows are never looked up and their logits are masked to -1e9 before the
maxima and exponents, so they change neither the loss nor any other row's
gradient (test/Integration/gpt_model_check.py: against PyTorch, which has
no padding).

`--report` prints, for each LAYOUT:MESH, the collectives the pipeline
places against Megatron's closed form (`megatron`).
"""
import argparse
import math
import re
import sys

import gpt_layer
from gpt_layer import MASKED, Layout, Step

# The parameters that are not a layer's, with their dims by letter: v the
# (padded) vocabulary, split over tp; the position table's rows are the
# sequence (s, which no layout splits).
EXTRA_DIMS = {"wte": "vh", "wpe": "sh", "lnf_g": "h", "lnf_b": "h"}
# The embedding dropout's fixed seed; layer i's dropouts get gpt_layer's
# seeds plus 100 * (i + 1).
EMB_DROP_SEED = 10
# AdamW for the model: gpt_layer's constants but the learning rate.
ADAMW = dict(gpt_layer.ADAMW, lr=3e-3)


def padded_vocab(vocab, tp, divisible_by):
    """Megatron's padded vocabulary: the next multiple of divisible_by * tp."""
    unit = divisible_by * tp
    return -(-vocab // unit) * unit


class ModelLayout(Layout):
    """gpt_layer's Layout plus the vocabulary (v, split over tp) and the
    position table's rows (p)."""

    def __init__(
        self,
        name,
        mesh,
        sizes,
        dropout=0.1,
        optimizer="adamw",
        divisible_by=128,
        tp_blocks=gpt_layer.TP_BLOCKS,
    ):
        if sizes["v"] < 1:
            raise ValueError(f"vocab must be positive, not {sizes['v']}")
        if sizes["layers"] < 1:
            raise ValueError(f"the model needs at least one layer, not {sizes['layers']}")
        if divisible_by < 1:
            raise ValueError(f"--vocab-divisible-by must be positive, not {divisible_by}")
        super().__init__(name, mesh, sizes, dropout, optimizer=optimizer, tp_blocks=tp_blocks)
        self.vocab = sizes["v"]
        self.layers = sizes["layers"]
        tp = self.mesh[self.tp] if self.tp is not None else 1
        self.g["v"] = padded_vocab(self.vocab, tp, divisible_by)
        self.divisible_by = divisible_by

    def axis(self, letter):
        if letter == "v":
            return self.tp
        return super().axis(letter)

    def params(self):
        """The parameters' names, in signature order, and their dims."""
        names, dims = [], {}
        for p in ("wte", "wpe"):
            names.append(p)
            dims[p] = EXTRA_DIMS[p]
        for i in range(self.layers):
            for p in gpt_layer.PARAMS:
                names.append(f"l{i}.{p}")
                dims[f"l{i}.{p}"] = gpt_layer.PARAM_DIMS[p]
        for p in ("lnf_g", "lnf_b"):
            names.append(p)
            dims[p] = EXTRA_DIMS[p]
        return names, dims


class ModelStep(Step):
    """gpt_layer's Step with integer tensors (token ids)."""

    def ids_type(self, dims):
        axes = [self.L.axis(x) for x in dims]
        enc = self.dist.TensorDist(self.mesh, [a if a is not None else -1 for a in axes])
        return self.dist.TensorType([self.L.size(x) for x in dims], "i64", enc, context=self.ctx)

    def begin_model(self, args):
        self.f = self.FunctionBuilder(
            self.module, "train_step", args, markers={"dist.complete": True}
        )
        return self.f.arguments

    def layer(self, i):
        """Builds layer i's dropouts from here on."""
        self.dropout_prefix = f"l{i}."
        self.dropout_seed_offset = 100 * (i + 1)


def vocab_start(B):
    """The first vocabulary row this process's shard of wte holds."""
    L = B.L
    if L.tp is None:
        return B.f.index(0)
    coord = B.f.process_coord(B.mesh, L.tp)
    return B.f.arith("muli", coord, B.f.index(L.size("v")), result_type=B.index)


def vocab_mask(B):
    """0 on the vocabulary's rows, MASKED on the padding (None without
    padding), as the logits' local [v] block."""
    L = B.L
    if L.g["v"] == L.vocab:
        return None
    vp, pad = L.g["v"], L.g["v"] - L.vocab
    f32 = "f32"
    whole = B.dist.TensorType([vp], f32, context=B.ctx)
    tail = B.dist.TensorType([pad], f32, context=B.ctx)

    def filled(ty, value):
        e = B.f.op("tensor.empty", [], [ty])[0]
        return B.f.body(
            "linalg.fill",
            [B.const(value), e],
            [ty],
            {"operandSegmentSizes": B.attr("array<i32: 1, 1>")},
            [B.f32, B.f32],
            lambda v, _: B.f.op("linalg.yield", [v]),
        )[0]

    mask = B.f.insert_slice(filled(tail, MASKED), filled(whole, 0.0), [L.vocab])
    if L.tp is None:
        return B.value(mask, "v")
    # This process's block of it.
    r = B.f.op("dist.reshard", [mask], [B.type("v")])[0]
    return B.value(r, "v")


def cross_entropy(B, hf, wte, targets, start):
    """Megatron's vocab-parallel cross-entropy of the LM head's logits
    hf @ wte^T: (loss, what its backward needs)."""
    L = B.L
    logits = B.matmul(hf, wte, "bsv", transpose_y=True)
    mask = vocab_mask(B)
    if mask is not None:
        logits = B.ew("bsv", [logits, mask], lambda x, m: B.a("addf", x, m))
    m = B.generic("bs", [logits], lambda v: v, "maximumf", MASKED * 10)
    e = B.ew("bsv", [logits, m], lambda v, mx: B.m("exp", B.a("subf", v, mx)))
    z = B.reduce_sum("bs", e)
    # The target's row of wte in this process's shard (zero elsewhere).
    rows = B.value(B.f.c_embedding(targets, wte, start), "bsh")
    t = B.generic("bs", [rows, hf], lambda r, h: B.a("mulf", r, h), "addf")
    count = L.g["b"] * L.g["s"]
    per_token = B.ew(
        "bs", [z, m, t], lambda zi, mi, ti: B.a("subf", B.a("addf", B.m("log", zi), mi), ti)
    )
    total = B.reduce_sum("", per_token)
    loss = B.ew("", [total], lambda s: B.a("mulf", s, B.const(1.0 / count)))
    return loss, dict(e=e, z=z, count=count)


def cross_entropy_grad(B, hf, wte, targets, start, saved):
    """d loss / d hf and d loss / d wte (the LM head's part)."""
    inv = 1.0 / saved["count"]
    probs = B.ew(
        "bsv", [saved["e"], saved["z"]], lambda v, s: B.a("mulf", B.a("divf", v, s), B.const(inv))
    )
    dhf_soft, dwte_soft = B.matmul_grad(hf, wte, probs, transpose_y=True)
    # The target's rows looked up again: each lookup has one (linear) use,
    # so its partial sum is completed after it, one value per token forward
    # and with the LM head's partial gradient backward.
    rows = B.value(B.f.c_embedding(targets, wte, start), "bsh")
    dhf_target = B.ew("bsh", [rows], lambda r: B.a("mulf", r, B.const(-inv)))
    dhf = B.ew("bsh", [dhf_soft, dhf_target], lambda a, b: B.a("addf", a, b))
    scattered = B.ew("bsh", [hf], lambda h: B.a("mulf", h, B.const(-inv)))
    dwte_target = B.value(B.f.c_embedding_grad(targets, wte, scattered, start, dist=None), "vh")
    dwte = B.ew("vh", [dwte_soft, dwte_target], lambda a, b: B.a("addf", a, b))
    return dhf, dwte


def build_module(layout, hyper=None):
    """@train_step for `layout` (a ModelLayout), in a new dist.Module."""
    import dist

    L = layout
    module = dist.Module.create()
    B = ModelStep(L, module)
    R = "r" if L.sp else "s"
    rows = "b" + R
    act = rows + "h"
    names, dims = L.params()
    n_states = gpt_layer.STATES[L.optimizer]
    args = [(B.type(dims[p], encoded=True), {"dist.param": p}) for p in names]
    args += [B.ids_type("bs"), B.ids_type("bs")]
    args += [
        (B.type(dims[p], encoded=True), {"dist.state": p}) for p in names for _ in range(n_states)
    ]
    if L.optimizer == "adamw":
        args.append(dist.TensorType([], "f32", context=module.context))
    values = B.begin_model(args)
    P = {p: B.value(v, dims[p]) for p, v in zip(names, values)}
    ids, targets = values[len(names)], values[len(names) + 1]
    first = len(names) + 2
    S = {
        p: [B.value(values[first + i * n_states + k], dims[p]) for k in range(n_states)]
        for i, p in enumerate(names)
    }
    step_count = values[first + len(names) * n_states] if L.optimizer == "adamw" else None
    add = lambda a, b: B.a("addf", a, b)  # noqa: E731

    # ---- forward ----
    emb = B.value(B.f.embedding(ids, P["wte"]), "bsh")
    x = _emb_dropout(B, B.ew("bsh", [emb, P["wpe"]], add))
    if L.sp:
        # As Megatron-core with learned positions: the whole sequence's
        # embeddings (the lookup allreduced), then this process's block.
        x = B.reshard(x, act)
    saved = []
    for i in range(L.layers):
        B.layer(i)
        layer_params = {p: P[f"l{i}.{p}"] for p in gpt_layer.PARAMS}
        x, s = gpt_layer.layer_forward(B, layer_params, x)
        saved.append(s)
    hf, xhatf, rstdf = B.layer_norm(x, P["lnf_g"], P["lnf_b"], rows)
    hf_full = B.reshard(hf, "bsh") if L.sp else hf
    start = vocab_start(B)
    loss, ce = cross_entropy(B, hf_full, P["wte"], targets, start)

    # ---- backward ----
    dhf, dwte_head = cross_entropy_grad(B, hf_full, P["wte"], targets, start, ce)
    if L.sp:
        dhf = B.reshard(dhf, act)
    dx, dgf, dbf = B.layer_norm_grad(dhf, xhatf, rstdf, P["lnf_g"], rows)
    grads = {"lnf_g": dgf, "lnf_b": dbf}
    for i in reversed(range(L.layers)):
        B.layer(i)
        layer_params = {p: P[f"l{i}.{p}"] for p in gpt_layer.PARAMS}
        dx, g = gpt_layer.layer_backward(B, layer_params, saved[i], dx)
        grads.update({f"l{i}.{p}": v for p, v in g.items()})
    dx = _emb_dropout(B, dx, backward=True)
    if L.sp:
        dx = B.reshard(dx, "bsh")
    grads["wpe"] = B.reduce_sum("sh", dx)
    dwte_emb = B.value(B.f.embedding_grad(ids, P["wte"], dx, dist=None), "vh")
    grads["wte"] = B.ew("vh", [dwte_head, dwte_emb], add)

    # ---- the update ----
    updated, new_states = gpt_layer.update(B, names, dims, P, grads, S, step_count, hyper)
    results = [(loss, "", None)]
    results += [(grads[p], dims[p], {"dist.grad": p}) for p in names]
    results += [(updated[p], dims[p], None) for p in names]
    results += [(v, dims[p], {"dist.state": p}) for p in names for v in new_states[p]]
    B.f.return_(
        *[B.constraint(v, d) for v, d, _ in results],
        result_markers=[m or {} for _, _, m in results],
    )
    return module


def _emb_dropout(B, x, backward=False):
    """The embedding's dropout (its recomputed twin in the backward)."""
    if not B.L.dropout:
        return x
    name = "emb_drop"
    role = {"recompute_of": name} if backward else {"id": name}
    r = B.f.dropout(x, B.L.dropout, fix_seed=EMB_DROP_SEED, **role)
    return B.value(r, B.dims_of(x))


def build(layout, hyper=None):
    """The text of @train_step for `layout`, after a header that says how it
    was made (without the module around it, as gpt_layer.build)."""
    L = layout
    body = gpt_layer.function_lines(build_module(L, hyper))
    g = L.g
    head = (
        f"// One training step of a {L.layers}-layer GPT model: layout {L.name} on mesh "
        f"[{', '.join(map(str, L.mesh))}], vocabulary {L.vocab} (padded to {g['v']}).\n"
        f"// Generated by examples/gpt_model.py --layout {L.name} --mesh "
        f"{','.join(map(str, L.mesh))} --layers {L.layers} --vocab {L.vocab} "
        f"--vocab-divisible-by {L.divisible_by} --batch {g['b']} --seq {g['s']} "
        f"--hidden {g['h']} --heads {g['n']} --ffn {g['f']} --dropout {L.dropout:g} "
        f"--optimizer {L.optimizer}\n"
    )
    return head + "\n".join(body) + "\n"


def sizes_of(args):
    return dict(
        b=args.batch,
        s=args.seq,
        h=args.hidden,
        n=args.heads,
        f=args.ffn,
        v=args.vocab,
        layers=args.layers,
    )


def layout_of(args):
    mesh = [int(x) for x in args.mesh.split(",")] if args.mesh else None
    return ModelLayout(
        args.layout or "dp-tp",
        mesh,
        sizes_of(args),
        args.dropout,
        args.optimizer,
        args.vocab_divisible_by,
    )


def hyper_of(args):
    """The optimizer's constants with the command line's learning rate."""
    base = {"adamw": ADAMW, "momentum": gpt_layer.MOMENTUM, "sgd": {}}[args.optimizer]
    return dict(base, lr=args.lr) if args.lr is not None else dict(base) or None


def megatron(L):
    """Megatron's closed form of the collectives per process and step, by
    kind: (count, bytes). Tensor parallelism allreduces the b x s x h
    activations after the embedding, twice per layer forward and twice
    backward, and the LM head's input gradient; sequence parallelism moves
    the layers' and the LM head's as all-gather and reduce-scatter pairs,
    keeps the embedding's allreduce (Megatron-core adds learned position
    embeddings to the whole sequence, then scatters it without
    communication) and allreduces the LayerNorms' gradients; the
    vocab-parallel cross-entropy allreduces one value per token three
    times (the maxima, the sums of exponents, the target logits); data
    parallelism allreduces every gradient and the loss. Counted per tensor,
    before buckets (Megatron coalesces the LayerNorms' gradients and
    buckets the data-parallel ones, as --dist-bucket-gradients does)."""
    act = L.size("b") * L.g["s"] * L.g["h"] * 4
    tok = L.size("b") * L.g["s"] * 4
    big = 4 * L.layers + 2
    form = {}

    def add(kind, count, nbytes):
        c, b = form.get(kind, (0, 0))
        form[kind] = (c + count, b + nbytes)

    names, dims = L.params()
    if L.tp is not None:
        add("dist.allreduce", 3, 3 * tok)
        if L.sp:
            add("dist.allreduce", 1, act)
            add("dist.all_gather", big, big * act)
            add("dist.reduce_scatter", big - 1, (big - 1) * act)
        else:
            add("dist.allreduce", big, big * act)
    if L.dp is not None:
        for p in names:
            add("dist.allreduce", 1, 4 * math.prod(L.size(x) for x in dims[p]))
        add("dist.allreduce", 1, 4)
    elif L.tp is not None and L.sp:
        for p in names:
            if dims[p] == "h":
                add("dist.allreduce", 1, 4 * L.g["h"])
    return form


# A communicating collective and its operand's shape.
COLLECTIVE = re.compile(
    r"dist\.(?:all_gather|allreduce|reduce_scatter|all_to_all) [^\n]*? : tensor<([0-9x]+)x[a-z0-9]+"
)

# Collectives that move no data (c_identity is the identity forward; its
# backward is the allreduce counted where completion placed it).
SILENT = ("dist.c_identity", "dist.all_slice")


def collectives(module):
    """The collectives of @train_step after the pipeline, by kind: (count,
    bytes), and the shapes of every collective's operand."""
    import dist

    reports = dist.overlap_report(module)["functions"]
    (f,) = [r for r in reports if r["name"] == "train_step"]
    ours = {k: (v["count"], v["bytes"]) for k, v in f["collectives"].items() if k not in SILENT}
    return ours, f


def report(args):
    """For each LAYOUT:MESH, dist's collectives against Megatron's closed
    form, and whether any collective moves logits."""
    import dist

    mib = 1024.0 * 1024.0

    def kinds(table):
        if not table:
            return "none"
        return ", ".join(
            f"{c} x {k.removeprefix('dist.')} {b / mib:.3f} MiB"
            for k, (c, b) in sorted(table.items())
        )

    for spec in args.report:
        name, _, mesh = spec.partition(":")
        args.layout, args.mesh = name, mesh or None
        L = layout_of(args)
        module = dist.Module.parse(build(L, hyper_of(args)))
        module.run("dist-auto-parallel")
        ours, f = collectives(module)
        theirs = megatron(L)
        vocab = {L.size("v"), L.g["v"], L.vocab}
        # A collective's operand of rank 3 or more whose last dim is the
        # vocabulary (local, padded or not) would be logits.
        logits = [
            m.group(0)
            for m in COLLECTIVE.finditer(str(module))
            if len(dims := [int(d) for d in m.group(1).split("x")]) >= 3 and dims[-1] in vocab
        ]
        print(f"{L.name} on [{', '.join(map(str, L.mesh))}], {L.layers} layers:")
        print(f"  dist:      {kinds(ours)}")
        print(f"  Megatron:  {kinds(theirs)}")
        print(f"  equal:     {'yes' if ours == theirs else 'no'}")
        print(f"  logits moved by a collective: {len(logits)}")
        print(
            f"  memory:    peak live tensors {f['peak_live_bytes'] / mib:.1f} MiB, "
            f"arguments {f['argument_bytes'] / mib:.1f} MiB"
        )
    return 0


def plan(args):
    """--plan: the GPT layer's space (gpt_layer.plan_candidates) for the
    whole model; tp also splits the vocabulary, whatever blocks it splits."""
    if args.report or args.layout or args.mesh:
        raise ValueError("--plan chooses the layout: it takes no --layout, --mesh or --report")
    g = sizes_of(args)
    hyper = hyper_of(args)

    def make_layout(name, mesh, blocks):
        return ModelLayout(
            name, mesh, g, args.dropout, args.optimizer, args.vocab_divisible_by, blocks
        )

    candidates = gpt_layer.plan_candidates(
        g,
        args.plan,
        make_layout=make_layout,
        build_text=lambda L: build(L, hyper),
        optimizer=args.optimizer,
    )
    what = (
        f"the model ({gpt_layer.sizes_text(g)}, vocabulary {g['v']}, {g['layers']} layers; "
        f"dp splits the batch, tp the heads, the FFN and the vocabulary)"
    )
    title = (
        f"GPT model: {g['layers']} layers, vocabulary {g['v']}, {gpt_layer.sizes_text(g)}, "
        f"optimizer {args.optimizer}"
    )
    return gpt_layer.run_plan(args, candidates, what, title)


def add_model_args(p):
    p.add_argument("--layout", default=None, choices=gpt_layer.LAYOUTS, help="default: dp-tp")
    p.add_argument("--mesh", default=None, help="mesh shape, e.g. 2,4")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--vocab", type=int, default=1003)
    p.add_argument(
        "--vocab-divisible-by",
        type=int,
        default=128,
        help="pad the vocabulary to a multiple of this times the tp degree (Megatron's "
        "make_vocab_size_divisible_by)",
    )
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--ffn", type=int, default=256)
    p.add_argument("--dropout", type=float, default=0.0, help="GPT's dropout probability")
    p.add_argument("--optimizer", default="adamw", choices=gpt_layer.OPTIMIZERS)
    p.add_argument("--lr", type=float, default=None, help="the learning rate")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_model_args(p)
    p.add_argument("-o", "--output", default="-")
    p.add_argument(
        "--report",
        nargs="+",
        metavar="LAYOUT:MESH",
        help="instead of the program, the collectives --dist-auto-parallel places for each "
        "layout against Megatron's closed form",
    )
    gpt_layer.add_plan_args(p)
    args = p.parse_args(argv)
    try:
        if args.plan is not None:
            return plan(args)
        if args.report:
            return report(args)
        text = build(layout_of(args), hyper_of(args))
    except ValueError as e:
        print(f"gpt_model.py: error: {e}", file=sys.stderr)
        return 1
    gpt_layer.write_text(text, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
