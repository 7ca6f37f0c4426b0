"""dist.plan: the search over a program's plans, on the GPT layer's space
(examples/gpt_layer.py --plan), checked against dist-opt run on each plan's
program by hand."""

import json
import math
import os
import random
import subprocess
import sys

import pytest

from conftest import EXAMPLES

sys.path.insert(0, EXAMPLES)
import gpt_layer  # noqa: E402

import dist.plan as dp  # noqa: E402

SIZES = dict(b=8, s=64, h=64, n=4, f=256)


def dist_opt():
    from dist.run.paths import dist_opt as path

    return path()


def test_factorizations():
    assert dp.factorizations(12, 2) == [(1, 12), (2, 6), (3, 4), (4, 3), (6, 2), (12, 1)]
    assert dp.factorizations(8, 3)[:3] == [(1, 1, 8), (1, 2, 4), (1, 4, 2)]
    assert all(math.prod(f) == 16 for f in dp.factorizations(16, 3))
    assert len(dp.factorizations(16, 3)) == 15
    assert dp.factorizations(7, 1) == [(7,)]


@pytest.mark.parametrize("devices", [0, -1, 1 << 21, 2.0, True, "8"])
def test_bad_device_counts(devices):
    with pytest.raises(dp.PlanError, match="device count"):
        dp.check_devices(devices)


@pytest.mark.parametrize("limit", [0, -5, float("nan"), "lots"])
def test_bad_memory_limits(limit):
    with pytest.raises(dp.PlanError, match="memory limit"):
        dp.check_memory_limit(limit)
    assert dp.check_memory_limit(None) == math.inf


def test_every_plan_priced_as_dist_opt_prices_it():
    """Each plan's figures are those dist-opt's own pipeline and report give
    its program: the search prices what it says it prices."""
    candidates = gpt_layer.plan_candidates(SIZES, 4, optimizer="adamw")
    plans = {p.candidate.name: p for p in dp.search(candidates, None)}
    assert len(plans) == len(candidates) == 48
    for c in candidates[::5]:
        pipeline = f"--dist-auto-parallel={c.pipeline}" if c.pipeline else "--dist-auto-parallel"
        report = subprocess.run(
            [dist_opt(), "-", pipeline, "--dist-overlap-report=format=json", "-o", os.devnull],
            input=c.build(),
            capture_output=True,
            text=True,
            check=True,
        ).stderr
        (f,) = json.loads(report)["functions"]
        p = plans[c.name]
        assert p.step_us == pytest.approx(f["makespan_us"], abs=1e-3)
        assert p.memory_bytes == f["argument_bytes"] + f["peak_live_bytes"]


def test_chosen_is_fastest_that_fits_and_order_free():
    candidates = gpt_layer.plan_candidates(SIZES, 4, optimizer="adamw")
    plans = dp.search(candidates, None)
    fastest = min(p.step_us for p in plans)
    assert plans[0].step_us == fastest
    steps = [p.step_us for p in plans]
    assert steps == sorted(steps)
    # A limit between the fastest plan's memory and the smallest plan's
    # rules the fastest out; the choice is then the fastest that fits.
    smallest = min(p.memory_bytes for p in plans)
    limit = (smallest + plans[0].memory_bytes) / 2
    assert smallest < limit < plans[0].memory_bytes
    limited = dp.search(candidates, limit)
    fits = [p for p in limited if p.fits]
    assert limited[0].fits and limited[0].memory_bytes <= limit
    assert limited[0].step_us == min(p.step_us for p in fits)
    assert all(not p.fits for p in limited[len(fits) :])
    # The ranking does not depend on the order the candidates come in.
    order = [p.candidate.name for p in limited]
    for seed in range(3):
        shuffled = list(candidates)
        random.Random(seed).shuffle(shuffled)
        assert [p.candidate.name for p in dp.search(shuffled, limit)] == order
    text = dp.table(limited, limit, top=len(limited))
    assert "over the limit" in text and text.splitlines()[1].endswith("chosen")


def test_nothing_fits_names_the_smallest():
    candidates = gpt_layer.plan_candidates(SIZES, 2)
    with pytest.raises(dp.PlanError, match=r"no plan fits in 0.01 MiB per device: the smallest"):
        dp.search(candidates, 0.01 * dp.MIB)
    with pytest.raises(dp.PlanError, match="no candidate"):
        dp.search([], None)


def test_tp_blocks_split_only_their_weights():
    L = gpt_layer.Layout("tp", [2], SIZES, tp_blocks=("mlp",))
    assert L.size("f") == SIZES["f"] // 2 and L.size("c") == SIZES["h"]
    L = gpt_layer.Layout("tp", [2], SIZES, tp_blocks=("attn",))
    assert L.size("f") == SIZES["f"] and L.size("n") == SIZES["n"] // 2
    for bad in ((), ("attn", "attn"), ("ffn",)):
        with pytest.raises(ValueError, match="tensor-parallel blocks"):
            gpt_layer.Layout("tp", [2], SIZES, tp_blocks=bad)


def test_explain_adds_up_to_the_steps():
    """op_costs' rows add up to the plan's estimated step, and explain's
    differences to the difference of the steps; the k-th compute ops of
    two plans are the same op of the model."""
    candidates = gpt_layer.plan_candidates(SIZES, 4, optimizer="adamw")
    plans = {p.candidate.name: p for p in dp.search(candidates, None)}
    chosen = dp.search(candidates, None)[0].candidate
    for name in ("tp [4] tp:mlp", "dp-tp-sp [2,2] zero1", "tp-sp [4]"):
        other = next(c for c in candidates if c.name == name)
        rows = dp.op_costs(other)
        total = sum(r["compute_us"] + r["exposed_us"] for r in rows.values())
        assert total == pytest.approx(plans[name].step_us, abs=0.01)
        assert [r["op"] for k, r in sorted(rows.items()) if k >= 0] == [
            r["op"] for k, r in sorted(dp.op_costs(chosen).items()) if k >= 0
        ]
        text = dp.explain(chosen, other)
        diffs = [float(line.split()[-1]) for line in text.splitlines()[2:-1]]
        step = text.splitlines()[-1].split()
        assert float(step[-1]) == pytest.approx(
            plans[name].step_us - plans[chosen.name].step_us, abs=0.1
        )
        assert sum(diffs) == pytest.approx(float(step[-1]), abs=0.05 * len(diffs) + 0.1)


def test_memory_bandwidth_prices_the_elementwise_ops():
    """With a memory bandwidth every plan's step grows by the time its
    elementwise ops take, and a plan that splits them (tp, sp) gains on
    one that does not; explain's rows still add up."""
    candidates = gpt_layer.plan_candidates(SIZES, 2, optimizer="adamw")
    free = {p.candidate.name: p for p in dp.search(candidates, None)}
    priced = {p.candidate.name: p for p in dp.search(candidates, None, memory_bandwidth_gbps=1.0)}
    for name, p in priced.items():
        assert p.compute_us > free[name].compute_us
        assert p.memory_bytes == free[name].memory_bytes
    gain = lambda name: priced[name].compute_us - free[name].compute_us  # noqa: E731
    assert gain("tp-sp [2]") < gain("dp [2]") or gain("tp-sp [2]") < gain("tp [2]")
    other = next(c for c in candidates if c.name == "tp-sp [2]")
    rows = dp.op_costs(other, memory_bandwidth_gbps=1.0)
    total = sum(r["compute_us"] + r["exposed_us"] for r in rows.values())
    assert total == pytest.approx(priced["tp-sp [2]"].step_us, abs=0.01)


def test_a_program_without_parameters_is_refused():
    text = """func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
"""
    c = dp.Candidate(name="serial", mesh=(1,), choices=(), build=lambda: text)
    with pytest.raises(dp.PlanError, match="serial: the program has no parameters"):
        dp.search([c], None)


def test_a_candidate_the_pipeline_refuses_is_an_error():
    # Its matmul's contracted dims differ (3 against 4).
    text = """func.func @step(%w: tensor<4x3xf32> {dist.param = "w"}) -> tensor<4x3xf32> {
  %r = dist.matmul %w, %w : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
"""
    c = dp.Candidate(name="broken", mesh=(2,), choices=(), build=lambda: text)
    with pytest.raises(
        dp.PlanError, match="broken: the pipeline refused the program: .*'dist.matmul' op"
    ):
        dp.search([c], None)
