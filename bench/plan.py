#!/usr/bin/env python3
"""The plan search held to measurements: every plan of the GPT layer on N
processes run on this machine, against the ranking the search made with a
cost model calibrated right before.

  PYTHONPATH=build/python_packages /usr/bin/python3 bench/plan.py
      [--devices 2 4] [--batch 8] [--seq 128] [--hidden 256] [--heads 4]
      [--ffn 1024] [--optimizer adamw] [--reps 4] [--json FILE]

For each device count: `dist-run --calibrate` on that many processes, the
search (`examples/gpt_layer.py --plan`'s candidates, priced with that
file), then every plan run as bench/gpt_layer.py runs a layout (its
`--dist-auto-parallel` options, @train_step called REPS times, the median
warm call on the slowest rank). Prints per plan the estimate and the
measured step with their ranks, the Spearman correlation of the two
rankings, and the chosen plan's measured step against the fastest measured.
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time

import dist
import dist.plan as dp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
import gpt_layer  # noqa: E402  (examples/gpt_layer.py, the model)


def _bench_module():
    """bench/gpt_layer.py, which runs a layout; its name is the model's."""
    spec = importlib.util.spec_from_file_location(
        "bench_gpt_layer", os.path.join(HERE, "gpt_layer.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


step_seconds = _bench_module().step_seconds


def ranks(values):
    """Ranks from 1, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs, ys):
    """Spearman's rank correlation: Pearson's on the ranks."""
    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx) ** 0.5
    vy = sum((b - my) ** 2 for b in ry) ** 0.5
    return cov / (vx * vy) if vx and vy else float("nan")


def run_devices(devices, sizes, args):
    with tempfile.TemporaryDirectory() as tmp:
        costs = os.path.join(tmp, "costs.json")
        dist.calibrate(devices, costs)
        candidates = gpt_layer.plan_candidates(sizes, devices, optimizer=args.optimizer)
        plans = dp.search(candidates, None, cost_model=costs)
        # The same file without its memory rate: the model that prices
        # only products and collectives, for comparison.
        with open(costs) as f:
            model = json.load(f)
        model.pop("memory-gbps", None)
        products_only = os.path.join(tmp, "products-only.json")
        with open(products_only, "w") as f:
            json.dump(model, f)
        without = {
            p.candidate.name: p.step_us
            for p in dp.search(candidates, None, cost_model=products_only)
        }
    rows = []
    for i, p in enumerate(plans):
        c = p.candidate
        seconds = step_seconds(c.spec, args.reps, c.pipeline)
        rows.append(
            dict(
                plan=c.name,
                estimate_us=p.step_us,
                products_only_us=without[c.name],
                measured_us=seconds * 1e6,
            )
        )
        print(
            f"  {i + 1:3d} {c.name:32s} estimate {p.step_us / 1e3:8.2f} ms "
            f"(products only {without[c.name] / 1e3:8.2f})  "
            f"measured {seconds * 1e3:8.2f} ms",
            flush=True,
        )
    est = [r["estimate_us"] for r in rows]
    meas = [r["measured_us"] for r in rows]
    fastest = min(range(len(rows)), key=lambda i: meas[i])
    rho = spearman(est, meas)
    rho_products = spearman([r["products_only_us"] for r in rows], meas)
    # How far the estimates are from the measurements, as a median ratio.
    error = statistics.median(e / m - 1 for e, m in zip(est, meas))
    error_products = statistics.median(r["products_only_us"] / r["measured_us"] - 1 for r in rows)
    over = meas[0] / meas[fastest] - 1
    print(
        f"{devices} devices: {len(rows)} plans; Spearman {rho:.2f} "
        f"(products only {rho_products:.2f}); median estimate/measured - 1 "
        f"{100 * error:+.1f}% (products only {100 * error_products:+.1f}%); "
        f"chosen {rows[0]['plan']} "
        f"measured {meas[0] / 1e3:.2f} ms, fastest measured {rows[fastest]['plan']} "
        f"{meas[fastest] / 1e3:.2f} ms ({100 * over:+.1f}%)",
        flush=True,
    )
    return dict(
        devices=devices,
        plans=rows,
        spearman=rho,
        spearman_products_only=rho_products,
        median_error=error,
        median_error_products_only=error_products,
        chosen_over_fastest=over,
    )


def search_seconds(devices, sizes, optimizer, reps=3):
    """The median wall time of the search alone (candidates, completion
    and pricing of each, ranking) at the cost model's constants."""
    times = []
    for _ in range(reps):
        begin = time.perf_counter()
        dp.search(gpt_layer.plan_candidates(sizes, devices, optimizer=optimizer), None)
        times.append(time.perf_counter() - begin)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--devices", type=int, nargs="+", default=[2, 4])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--ffn", type=int, default=1024)
    p.add_argument("--optimizer", default="adamw", choices=gpt_layer.OPTIMIZERS)
    p.add_argument("--reps", type=int, default=4)
    p.add_argument("--json", default="", help="write the figures here")
    p.add_argument(
        "--search-time",
        type=int,
        nargs="+",
        metavar="DEVICES",
        help="instead: time the search alone on these device counts",
    )
    args = p.parse_args()
    if args.reps < 2:
        sys.exit("plan.py: --reps must be at least 2")
    sizes = gpt_layer.sizes_of(args)
    print(f"GPT layer plans: {gpt_layer.sizes_text(sizes)}, {args.optimizer}", flush=True)
    if args.search_time:
        for n in args.search_time:
            count = len(gpt_layer.plan_candidates(sizes, n, optimizer=args.optimizer))
            print(
                f"  {n} devices, {count} plans: search {search_seconds(n, sizes, args.optimizer):.2f} s"
            )
        return
    results = [run_devices(n, sizes, args) for n in args.devices]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
