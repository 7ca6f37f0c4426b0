#!/usr/bin/env python3
"""dist.torch against torch.autograd: models written in plain PyTorch
(torch_models.py), imported with dist.torch and run on MPI.

  torch_import_check.py equal LAYOUT:MESH ...   the GPT block: loss and gradients
  torch_import_check.py report                  tp's collectives against Megatron's
  torch_import_check.py ops [MESH]              every covered op, forward and backward
  torch_import_check.py optim                   functional SGD and AdamW steps
  torch_import_check.py models                  an MLP and a 2-layer GPT import
  torch_import_check.py modules                 nn.MultiheadAttention and others, whole

`equal`: the block (token and position embeddings, one pre-LN layer with
causal attention written with torch.matmul and masked_fill, GeLU, the final
LayerNorm, the LM head, F.cross_entropy) imported with the layout's plan and
run on its processes; the loss within TOLERANCE (relative) of torch's, and
every gradient within TOLERANCE of its largest magnitude (floored at
1e-3: a gradient that is zero in exact arithmetic, the key bias's, is
compared absolutely)."""
import argparse
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_models as tm  # noqa: E402

import dist.torch as dt  # noqa: E402

TOLERANCE = 1e-4
SIZES = dict(vocab=64, seq=16, hidden=32, heads=4, ffn=64)
BATCH = 4
LAYOUTS = ("serial", "dp", "tp", "tp-sp", "dp-tp", "dp-tp-sp")


def gpt(layers=1, seed=0):
    torch.manual_seed(seed)
    model = tm.GPT(layers=layers, **SIZES)
    ids = torch.randint(0, SIZES["vocab"], (BATCH, SIZES["seq"]))
    targets = torch.randint(0, SIZES["vocab"], (BATCH, SIZES["seq"]))
    return model, tm.parameters(model), ids, targets


# --extra's styles: the token embedding or the LM head split too.
EXTRA_STYLES = {"rows": dt.RowwiseParallel, "columns": dt.ColwiseParallel}


def layout(spec, layers=1, extra=()):
    """(mesh, plan, placements) of LAYOUT:MESH, with the --extra
    MODULE=rows|columns entries added to the plan."""
    name, _, sizes = spec.partition(":")
    if name not in LAYOUTS:
        raise SystemExit(f"unknown layout {name!r}")
    axes = {"serial": ["x"], "dp": ["dp"], "tp": ["tp"], "tp-sp": ["tp"]}.get(name, ["dp", "tp"])
    shape = (
        [int(n) for n in sizes.split(",")] if sizes else [1 if name == "serial" else 2] * len(axes)
    )
    mesh = dt.DeviceMesh(shape, axes)
    plan = tm.gpt_plan(layers, name.endswith("-sp")) if "tp" in name else {}
    for item in extra:
        module, _, style = item.partition("=")
        plan[module] = EXTRA_STYLES[style]()
    placements = {}
    if "dp" in name:
        batch = [dt.Shard(0)] + [dt.Replicate()] * (len(axes) - 1)
        placements = {"ids": batch, "targets": batch}
    return mesh, plan, placements


def compare(what, got, want, names):
    """The worst errors of `got` against `want` (loss, gradients); exits
    on one over TOLERANCE."""
    loss, grads = got
    ref_loss, ref_grads = want
    loss_err = abs(float(loss) - float(ref_loss)) / abs(float(ref_loss))
    worst, worst_name = 0.0, None
    for name, g, r in zip(names, grads, ref_grads):
        g, r = np.asarray(g), r.detach().numpy()
        if g.shape != r.shape:
            raise SystemExit(
                f"FAILED: {what}: gradient {name} has shape {g.shape}, torch's {r.shape}"
            )
        err = float(np.abs(g - r).max()) / max(float(np.abs(r).max()), 1e-3)
        if err > worst:
            worst, worst_name = err, name
    if loss_err > TOLERANCE or worst > TOLERANCE:
        raise SystemExit(
            f"FAILED: {what}: loss error {loss_err:.2e}, worst gradient {worst_name} {worst:.2e}"
        )
    return loss_err, worst


def equal(specs, layers=1, extra=()):
    model, params, ids, targets = gpt(layers)
    step = tm.gpt_step(model)
    want = step(params, ids, targets)
    for spec in specs:
        mesh, plan, placements = layout(spec, layers, extra)
        run = dt.compile(step, (params, ids, targets), mesh=mesh, plan=plan, placements=placements)
        got = run(params, ids, targets)
        loss_err, worst = compare(spec, got, want, list(params))
        with_extra = "".join(f" {e}" for e in extra)
        print(
            f"ok: {spec}{with_extra} on {mesh.size} processes: loss {float(got[0]):.6f} (torch "
            f"{float(want[0]):.6f}), {len(params)} gradients; worst relative error: loss "
            f"{loss_err:.1e}, gradients {worst:.1e}"
        )
    return 0


# Megatron-LM's tensor parallelism places four allreduces per layer: after
# the attention's output projection and after fc2 (forward), and on the
# input gradients of the Q/K/V projections and of fc1 (backward). fc1's is
# hidden behind its weight gradient's product (the model-parallel stream).
MEGATRON = [
    ("dist.allreduce", "return self.proj(out)", None),
    ("dist.allreduce", "return self.fc2(F.gelu(self.fc1(x)))", None),
    ("dist.allreduce", "return self.fc2(F.gelu(self.fc1(x)))", "mp"),
    ("dist.allreduce", "q = self.q(x).view(b, s, self.heads, d).transpose(1, 2)", None),
]


def report():
    model, params, ids, targets = gpt()
    mesh, plan, placements = layout("tp:2")
    step = dt.import_step(tm.gpt_step(model), (params, ids, targets), mesh=mesh, plan=plan)
    lines = open(tm.__file__).read().splitlines()
    found = []
    for c in step.collectives():
        loc = c.location
        text = lines[loc[1] - 1].strip() if loc and loc[0] == tm.__file__ else "?"
        stream = f" (async, stream {c.stream})" if c.stream else ""
        print(
            f"{c.op.removeprefix('dist.')} {c.bytes} bytes at torch_models.py:{loc[1] if loc else '?'}{stream}: {text}"
        )
        found.append((c.op, text, c.stream))
    if found != MEGATRON:
        raise SystemExit(f"FAILED: tp's collectives {found} are not Megatron's {MEGATRON}")
    print(f"ok: tp on 2 processes places Megatron's {len(MEGATRON)} allreduces at its places")
    return 0


def models():
    """An MLP and a 2-layer GPT from torch.nn modules import."""
    torch.manual_seed(0)
    mlp = tm.TwoLayerMLP(64, 256)
    x, y = torch.randn(32, 64), torch.randn(32, 64)
    cases = [
        (
            "MLP",
            tm.mlp_step(mlp),
            (tm.parameters(mlp), x, y),
            dt.DeviceMesh([2], ["tp"]),
            {"fc1": dt.ColwiseParallel(), "fc2": dt.RowwiseParallel()},
        )
    ]
    model, params, ids, targets = gpt(layers=2)
    cases.append(
        (
            "2-layer GPT",
            tm.gpt_step(model),
            (params, ids, targets),
            dt.DeviceMesh([2], ["tp"]),
            tm.gpt_plan(2),
        )
    )
    for name, fn, args, mesh, plan in cases:
        step = dt.import_step(fn, args, mesh=mesh, plan=plan)
        ops = sum(1 for op in step.module.walk() if "." in op.name)
        print(
            f"ok: {name} imports: {len(step.names)} arguments, {len(step.outputs)} results, {ops} ops"
        )
    return 0


def module_cases():
    """torch.nn modules whose ATen ops the per-op cases cover, checked
    whole: (name, module, inputs)."""
    import torch.nn as nn

    torch.manual_seed(2)
    x = torch.randn(2, 6, 16)
    return [
        ("nn.MultiheadAttention", nn.MultiheadAttention(16, 4, batch_first=True), (x, x, x)),
        (
            "nn.TransformerEncoderLayer (dropout 0)",
            nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True),
            (x,),
        ),
        (
            "nn.Sequential(Linear, SiLU, Linear)",
            nn.Sequential(nn.Linear(16, 32), nn.SiLU(), nn.Linear(32, 16)),
            (x,),
        ),
    ]


def modules():
    from torch.nn.utils import stateless

    for name, module, inputs in module_cases():
        params = tm.parameters(module)

        def step(params, *xs):
            out = stateless.functional_call(module, params, xs)
            out = out[0] if isinstance(out, tuple) else out
            loss = out.pow(2).mean()
            return loss, torch.autograd.grad(loss, list(params.values()))

        want = step(params, *inputs)
        got = dt.compile(step, (params, *inputs))(params, *inputs)
        loss_err, worst = compare(name, got, want, list(params))
        print(
            f"ok: {name}: loss and {len(params)} gradients; worst relative error {max(loss_err, worst):.1e}"
        )
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("mode", choices=("equal", "report", "ops", "optim", "models", "modules"))
    p.add_argument("specs", nargs="*")
    p.add_argument("--layers", type=int, default=1, help="blocks of the GPT (equal)")
    p.add_argument(
        "--extra",
        action="append",
        default=[],
        help="MODULE=rows|columns: wte or head split too (equal)",
    )
    args = p.parse_args(argv)
    if args.mode == "equal":
        return equal(args.specs or ["serial"], args.layers, args.extra)
    if args.mode == "report":
        return report()
    if args.mode == "models":
        return models()
    if args.mode == "modules":
        return modules()
    import torch_ops

    if args.mode == "ops":
        return torch_ops.check(args.specs[0] if args.specs else "serial")
    return torch_ops.optimizers()


if __name__ == "__main__":
    sys.exit(main())
