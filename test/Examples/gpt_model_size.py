#!/usr/bin/env python3
"""The GPT model's program grows by the same ops per layer: for N = 1..4
layers, the lines of @train_step before and after --dist-auto-parallel
(one op a line, but for region terminators and braces) must differ by a
constant from one N to the next, in every layout."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
import dist  # noqa: E402
import gpt_model  # noqa: E402

SIZES = dict(b=4, s=8, h=16, n=4, f=32, v=100)


def lines(spec, layers):
    name, _, mesh = spec.partition(":")
    L = gpt_model.ModelLayout(
        name, [int(x) for x in mesh.split(",")] if mesh else None, dict(SIZES, layers=layers), 0.1
    )
    module = dist.Module.parse(gpt_model.build(L))
    before = len(str(module).splitlines())
    module.run("dist-auto-parallel")
    return before, len(str(module).splitlines())


ok = True
for spec in ("serial", "tp:2", "dp-tp-sp:2,2"):
    counts = [lines(spec, n) for n in range(1, 5)]
    steps = {(b2 - b1, a2 - a1) for (b1, a1), (b2, a2) in zip(counts, counts[1:])}
    good = len(steps) == 1
    ok = ok and good
    ((per_before, per_after),) = steps if good else ((None, None),)
    print(
        f"{'ok' if good else 'FAILED'}: {spec}: lines for 1..4 layers "
        f"{[a for _, a in counts]}"
        + (f", {per_before} per layer before the pipeline and {per_after} after" if good else "")
    )
sys.exit(0 if ok else 1)
