#!/usr/bin/env python3
"""How long dist.torch takes to import a PyTorch training step: an MLP
and GPTs of torch_models.py (test/Integration) as the block count grows.

  PYTHONPATH=build/python_packages /usr/bin/python3 bench/torch_import.py
      [--layers 2 12] [--reps 3] [--layout tp:2]

Each import traces the step (make_fx, fake tensors: no arithmetic) and
builds the program; a line gives the ATen ops traced, the ops built, the
median wall time of the import and of --dist-auto-parallel on it (in
process). The GPT is GPT-2 small's shape (hidden 768, 12 heads, FFN 3072,
vocabulary 50257, sequence 1024, batch 8) with Megatron's plan."""
import argparse
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "Integration"))
import torch_models as tm  # noqa: E402

import dist.torch as dt  # noqa: E402


def median_seconds(fn, reps):
    times, result = [], None
    for _ in range(reps):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def cases(layers, layout):
    name, _, size = layout.partition(":")
    n = int(size or 2)
    mesh = dt.DeviceMesh([n], ["tp"])
    torch.manual_seed(0)
    mlp = tm.TwoLayerMLP(1024, 4096)
    yield (
        "MLP 1024-4096-1024",
        tm.mlp_step(mlp),
        (tm.parameters(mlp), torch.randn(64, 1024), torch.randn(64, 1024)),
        mesh,
        {"fc1": dt.ColwiseParallel(), "fc2": dt.RowwiseParallel()},
    )
    for count in layers:
        # The parameters are made with the meta device's shapes only where
        # they are large: make_fx traces with fake tensors anyway.
        model = tm.GPT(vocab=50257, seq=1024, hidden=768, heads=12, ffn=3072, layers=count)
        ids = torch.randint(0, 50257, (8, 1024))
        plan = tm.gpt_plan(count, name.endswith("-sp"))
        yield f"GPT, {count} blocks", tm.gpt_step(model), (
            tm.parameters(model),
            ids,
            ids,
        ), mesh, plan


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--layers", type=int, nargs="+", default=[2, 12])
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--layout", default="tp:2")
    args = p.parse_args(argv)
    print("| model | ATen ops | ops built | import | --dist-auto-parallel |")
    print("|---|---|---|---|---|")
    for name, fn, example, mesh, plan in cases(args.layers, args.layout):
        seconds, step = median_seconds(
            lambda: dt.import_step(fn, example, mesh=mesh, plan=plan), args.reps
        )
        aten = sum(1 for n in step.graph.graph.nodes if n.op == "call_function")
        built = sum(1 for op in step.module.walk() if "." in op.name)
        complete, _ = median_seconds(lambda: step.collectives(), args.reps)
        print(f"| {name} | {aten} | {built} | {seconds:.2f} s | {complete:.2f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
