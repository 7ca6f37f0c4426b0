#!/usr/bin/env python3
"""The GPT model of examples/gpt_model.py trained on MPI, against the serial
model and against PyTorch.

  gpt_model_check.py equal LAYOUT:MESH[/MODE] ...   every layout against serial
  gpt_model_check.py torch                          the serial model against PyTorch
  gpt_model_check.py learn LAYOUT:MESH ...          200 steps halve the loss

`equal`: K steps (20) of AdamW on corpus.py's language; every step's loss
must equal the serial model's within TOLERANCE (relative), and every final
parameter within TOLERANCE of its largest magnitude (wte's vocabulary rows:
the padding is the layout's). MODE is base, zero1, zero2, buckets or
zero2+buckets (the pipeline's ZeRO and bucket options), each optionally
followed by +dropout (GPT's dropouts at 0.1, against the serial model with
the same dropouts).

`torch`: the serial model's loss at every step and its gradients at step 1
against gpt_model_torch.py (torch.autograd and torch.optim.AdamW, from the
same initial weights, on an unpadded vocabulary).

`learn`: 200 steps; the last loss must be at most half the first.
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
import corpus  # noqa: E402
import gpt_model  # noqa: E402
import gpt_train  # noqa: E402

TOLERANCE = 1e-4
SIZES = dict(b=8, s=32, h=64, n=4, f=256, v=1003, layers=2)
MODES = {
    "base": (0, False),
    "zero1": (1, False),
    "zero2": (2, False),
    "buckets": (0, True),
    "zero2+buckets": (2, True),
}


# GPT's dropout probability where a mode asks for it (`+dropout`): every
# layout draws the serial program's masks (dist.dropout's masks depend on
# the global index only).
DROPOUT = 0.1


def layout(spec, sizes=SIZES, dropout=0.0):
    name, _, mesh = spec.partition(":")
    shape = [int(x) for x in mesh.split(",")] if mesh else None
    return gpt_model.ModelLayout(name, shape, sizes, dropout, "adamw", 128)


def train(spec, steps, mode="base", native=False, **printing):
    """(losses, step 1's gradients, final parameters) of `steps` steps."""
    mode, dropout = mode.removesuffix("+dropout"), DROPOUT if mode.endswith("+dropout") else 0.0
    L = layout(spec, dropout=dropout)
    tokens = corpus.batches(L.vocab, steps, L.g["b"], L.g["s"])
    init = gpt_train.init_params(L)
    zero, buckets = MODES[mode]
    text = gpt_model.build(L, gpt_model.ADAMW) + gpt_train.harness(L, init, tokens, **printing)
    flags = gpt_train.pipeline_flags(zero, buckets)
    ranks = gpt_train.run_program(L, text, flags, native)
    names, _ = L.params()
    out = []
    for arrays in ranks:
        losses, grads, rest = gpt_train.split_output(L, arrays, steps, printing.get("print_grads"))
        params = dict(zip(names, rest)) if printing.get("print_params") else None
        if params:
            params["wte"] = params["wte"][: L.vocab]
        out.append((losses, grads, params))
    return L, out


def worst_relative(got, expected):
    """The largest |got - expected| over the largest |expected|, by name;
    the worst and its name."""
    worst, where = 0.0, ""
    for name, e in expected.items():
        a = np.asarray(got[name], np.float64)
        e = np.asarray(e, np.float64)
        err = float(np.max(np.abs(a - e))) / max(float(np.max(np.abs(e))), 1e-30)
        if err > worst:
            worst, where = err, name
    return worst, where


def loss_error(got, expected):
    return max(abs(a - e) / abs(e) for a, e in zip(got, expected))


def check_equal(specs, steps, native):
    references = {}
    ok = True
    for item in specs:
        spec, _, mode = item.partition("/")
        mode = mode or "base"
        dropout = "+dropout" if mode.endswith("+dropout") else ""
        if dropout not in references:
            references[dropout] = train("serial", steps, "base" + dropout, print_params=True)[1][0]
        serial, _, serial_params = references[dropout]
        L, ranks = train(
            spec, steps, mode, native=native and np.prod(layout(spec).mesh) > 4, print_params=True
        )
        worst_loss = max(loss_error(losses, serial) for losses, _, _ in ranks)
        worst_param, where = max(worst_relative(params, serial_params) for _, _, params in ranks)
        good = worst_loss <= TOLERANCE and worst_param <= TOLERANCE
        ok = ok and good
        print(
            f"{'ok' if good else 'FAILED'}: {L.name} on [{', '.join(map(str, L.mesh))}] {mode}: "
            f"{steps} steps on {len(ranks)} processes, loss {serial[0]:.4f} -> {serial[-1]:.4f}; "
            f"worst relative error: losses {worst_loss:.1e}, parameters {worst_param:.1e} ({where})"
        )
    return ok


def check_torch(steps):
    import gpt_model_torch

    L, [(losses, grads, _)] = train("serial", steps, print_grads=True)
    init = gpt_train.init_params(L)
    init["wte"] = init["wte"][: L.vocab]
    grads["wte"] = grads["wte"][: L.vocab]
    tokens = corpus.batches(L.vocab, steps, L.g["b"], L.g["s"])
    t_losses, t_grads, _ = gpt_model_torch.train(init, tokens, L.layers, L.g["n"], gpt_model.ADAMW)
    worst_loss = loss_error(losses, t_losses)
    worst_grad, where = worst_relative(grads, t_grads)
    good = worst_loss <= TOLERANCE and worst_grad <= TOLERANCE
    print(
        f"{'ok' if good else 'FAILED'}: serial model against PyTorch {__import__('torch').__version__}: "
        f"{steps} steps, loss {t_losses[0]:.4f} -> {t_losses[-1]:.4f}; worst relative error: "
        f"losses {worst_loss:.1e}, step 1's {len(t_grads)} gradients {worst_grad:.1e} ({where})"
    )
    return good


def check_learn(specs, steps):
    ok = True
    for spec in specs:
        L, ranks = train(spec, steps)
        losses = ranks[0][0]
        good = losses[-1] <= 0.5 * losses[0]
        ok = ok and good
        print(
            f"{'ok' if good else 'FAILED'}: {L.name} on [{', '.join(map(str, L.mesh))}] learns: "
            f"loss {losses[0]:.2f} -> {losses[-1]:.2f} in {steps} steps "
            f"(the language's entropy {corpus.entropy_floor():.2f})"
        )
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("what", choices=("equal", "torch", "learn"))
    p.add_argument("layouts", nargs="*")
    p.add_argument("--steps", type=int, default=None)
    p.add_argument(
        "--native", action="store_true", help="build meshes of more than 4 processes natively"
    )
    args = p.parse_args()
    if args.what == "equal":
        ok = check_equal(args.layouts, args.steps or 20, args.native)
    elif args.what == "torch":
        ok = check_torch(args.steps or 20)
    else:
        ok = check_learn(args.layouts, args.steps or 200)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
