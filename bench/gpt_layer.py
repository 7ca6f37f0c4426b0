#!/usr/bin/env python3
"""The step time of the GPT layer (examples/gpt_layer.py) on this machine.

  PYTHONPATH=build/python_packages /usr/bin/python3 bench/gpt_layer.py
      [--batch 8] [--seq 256] [--hidden 512] [--heads 8] [--ffn 2048]
      [--reps 5] [--optimizer sgd|momentum|adamw] [--options 'zero-stage=1 ...']
      [LAYOUT:MESH ...]

For each layout (default: serial:1 dp:2 tp:2 tp-sp:2 dp:4 tp:4 tp-sp:4
dp-tp:2,2 dp-tp-sp:2,2), @main calls @train_step REPS times on constant
inputs; the program is completed and lowered by --dist-auto-parallel and
run with dist-run --trace. A call's time is its span on the slowest rank;
the figure is the median of the calls after the first (which warms the
caches and the pages up). `--options` are --dist-auto-parallel's (e.g.
`zero-stage=1 bucket-gradients=true`). Prints one line per layout with the estimate of
--dist-overlap-report beside it (its default constants: a 100 TFLOP/s
accelerator, not this CPU).
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import dist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
import gpt_layer  # noqa: E402

OPTIMIZER_NAMES = {"sgd": "SGD", "momentum": "momentum SGD", "adamw": "AdamW"}
DEFAULT = "serial:1 dp:2 tp:2 tp-sp:2 dp:4 tp:4 tp-sp:4 dp-tp:2,2 dp-tp-sp:2,2".split()


def program(L, reps):
    """@train_step of layout `L` and a @main calling it `reps` times."""
    act = "b" + ("r" if L.sp else "s") + "h"
    n_states = gpt_layer.STATES[L.optimizer]
    states = [gpt_layer.PARAM_DIMS[p] for p in gpt_layer.PARAMS for _ in range(n_states)]
    dims = [gpt_layer.PARAM_DIMS[p] for p in gpt_layer.PARAMS] + [act, act] + states
    values = [1.0 if p.endswith("_g") else 0.02 for p in gpt_layer.PARAMS] + [0.5, 0.25]
    values += [0.0] * len(states)
    lines, args = [], []
    for i, (d, v) in enumerate(zip(dims, values)):
        lines.append(f"  %c{i} = arith.constant dense<{v:e}> : {L.ty(d)}")
        lines.append(f"  %a{i} = tensor.cast %c{i} : {L.ty(d)} to {L.ty(d, True)}")
        args.append(f"%a{i}")
    types = [L.ty(d, True) for d in dims]
    if L.optimizer == "adamw":
        lines.append("  %step = arith.constant dense<1.0> : tensor<f32>")
        args.append("%step")
        types.append("tensor<f32>")
    results = ["", act] + [gpt_layer.PARAM_DIMS[p] for p in gpt_layer.PARAMS] * 2 + states
    call = (
        f"func.call @train_step({', '.join(args)}) : "
        f"({', '.join(types)}) -> "
        f"({', '.join(L.ty(d, True) for d in results)})"
    )
    lines += [f"  %r{k}:{len(results)} = {call}" for k in range(reps)]
    return gpt_layer.build(L) + "func.func @main() {\n" + "\n".join(lines) + "\n  return\n}\n"


def step_seconds(L, reps, options=""):
    """The median span of the warm calls of @train_step, slowest rank."""
    procs = 1
    for n in L.mesh:
        procs *= n
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        dist.run_on_mpi(
            program(L, reps),
            procs,
            pass_flags=f"--dist-auto-parallel='{options}'" if options else "--dist-auto-parallel",
            trace=path,
            timeout=900,
            check_collectives=False,
        )
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    by_rank = {}
    for e in events:
        if e.get("cat") == "function" and e.get("name") == "train_step":
            by_rank.setdefault(e["pid"], []).append(e)
    spans = [sorted(calls, key=lambda e: e["ts"]) for calls in by_rank.values()]
    if not spans or any(len(s) != reps for s in spans):
        sys.exit(f"gpt_layer.py: expected {reps} calls of @train_step on each rank")
    slowest = [max(s[k]["dur"] for s in spans) / 1e6 for k in range(reps)]
    return statistics.median(slowest[1:])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("layouts", nargs="*", default=DEFAULT, metavar="LAYOUT:MESH")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--ffn", type=int, default=2048)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--optimizer", default="sgd", choices=gpt_layer.OPTIMIZERS)
    p.add_argument("--options", default="", help="--dist-auto-parallel's options")
    args = p.parse_args()
    if args.reps < 2:
        sys.exit("gpt_layer.py: --reps must be at least 2")
    sizes = gpt_layer.sizes_of(args)
    print(
        f"GPT layer step (forward, backward, {OPTIMIZER_NAMES[args.optimizer]}), "
        f"{gpt_layer.sizes_text(sizes)}, "
        f"on this machine ({os.cpu_count()} CPUs)"
        + (f", --dist-auto-parallel='{args.options}'" if args.options else "")
        + ":"
    )
    for spec in args.layouts:
        try:
            L = gpt_layer.layout_spec(spec, sizes, optimizer=args.optimizer)
        except ValueError as e:
            sys.exit(f"gpt_layer.py: {spec}: {e}")
        name = L.name
        seconds = step_seconds(L, args.reps, args.options)
        module = dist.Module.parse(gpt_layer.build(L))
        module.run(
            f"dist-auto-parallel{{{args.options}}}" if args.options else "dist-auto-parallel"
        )
        (f,) = dist.overlap_report(module)["functions"]
        print(
            f"  {name} on [{', '.join(map(str, L.mesh))}]: {seconds * 1e3:.1f} ms per step "
            f"(estimate at 100 TFLOP/s: {f['makespan_us'] / 1e3:.3f} ms)"
        )


if __name__ == "__main__":
    main()
