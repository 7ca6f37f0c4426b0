"""The pipeline bubble: estimated by --dist-pipeline and measured on a
traced MPI run, against the closed form (P - 1)/(M + P - 1) of the step.

The closed form is about equal stages and free transfers, so the benchmark
makes its stages equal and its transfers small next to the compute: the
layer stack of examples/pipeline_mlp.py with relu layers (whose
elementwise work is small next to the products; tanh costs stage 0 a
tanh more than stage 1's loss), width 1024, 128 rows per microbatch, eight
layers per stage (so that a 512 KiB transfer is small next to a stage's
work on a microbatch), the first computing its input's gradient too (so
that the stages compute the same products), on splat values. It is
pipelined and run with dist-run's trace; @main calls @step --calls times.

A stage's measured bubble in one call is the part of the schedule's span
that is not compute: the span runs from the call of @step to the end of
the schedule on the stage that ends last (marked by a call of an empty
function before the averaging and the update, which the closed form leaves
out); it holds the blocking sends, the waits for receives, and for a stage
that ends early, its wait for the others. The table gives each stage's
median over the calls (a 2-core machine's jitter only ever adds idle
time, now to one stage, now to the other) and the worst call. With --svg,
the timeline of the last run is drawn.

  python3 bench/pipeline.py                      # P = 2 (one core each)
  python3 bench/pipeline.py --stages 4 --svg docs/figures/pipeline-1f1b.svg
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
import pipeline_mlp as mlp  # noqa: E402

from dist.run import run_on_mpi  # noqa: E402
from dist.run.paths import dist_opt  # noqa: E402
from dist.run.timeline import timeline_svg  # noqa: E402


def estimate(mesh, M, schedule, L, B, H, act):
    """--dist-pipeline's estimated bubble of the step."""
    out = subprocess.run(
        [
            dist_opt(),
            "-",
            "--dist-complete",
            f"--dist-pipeline=schedule={schedule} microbatches={M} remarks",
            "-o",
            os.devnull,
        ],
        input=mlp.mesh_header(mesh) + mlp.step_ir(L, B, H, 1, 1, input_grad=True, act=act),
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    return float(re.search(r"\(([0-9.]+) of the step\)", out).group(1))


def mark_schedule_end(text):
    """Calls an empty function where each stage's schedule ends: before the
    first averaging (`dist.scale`) of each case of @step's switch. The trace
    records a "function" interval for every call, so the timeline shows
    where the update begins; the closed form is about the schedule alone."""
    out, marked = [], True
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("case ", "default")):
            marked = False
        if not marked and "= dist.scale " in line:
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}func.call @schedule_end() : () -> ()")
            marked = True
        out.append(line)
    body = "\n".join(out).rstrip()
    assert body.endswith("}"), "a module ends with its closing brace"
    return body[:-1] + "func.func private @schedule_end() {\n  return\n}\n}\n"


def measured(trace):
    """Per call of @step, per rank: the part of the schedule's span that is
    not compute. The span runs from the rank's call of @step to the end of
    the schedule (the latest rank's call of @schedule_end); a rank counts
    its compute up to its own end of schedule and waits after it while the
    others finish."""
    by_rank = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X":
            by_rank.setdefault(e["pid"], []).append(e)

    def starts(events, name):
        return sorted(e["ts"] for e in events if e["cat"] == "function" and e["name"] == name)

    calls = {rank: starts(events, "step") for rank, events in by_rank.items()}
    marks = {rank: starts(events, "schedule_end") for rank, events in by_rank.items()}
    result = []
    for call in range(min(len(c) for c in calls.values())):
        end = max(marks[rank][call] for rank in by_rank)
        bubbles = []
        for rank in sorted(by_rank):
            begin, mark = calls[rank][call], marks[rank][call]
            compute = sum(
                min(e["ts"] + e["dur"], mark) - max(e["ts"], begin)
                for e in by_rank[rank]
                if e["cat"] == "compute" and e["ts"] < mark and e["ts"] + e["dur"] > begin
            )
            bubbles.append(1 - compute / (end - begin))
        result.append(bubbles)
    return result


def main():
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--stages", type=int, default=2)
    p.add_argument("--microbatches", default="4,8")
    p.add_argument("--schedules", default="gpipe,1f1b")
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--layers-per-stage", type=int, default=8)
    p.add_argument("--calls", type=int, default=5)
    p.add_argument("--activation", default="relu", choices=sorted(mlp.ACTIVATIONS))
    p.add_argument("--svg", help="draw the last run's timeline here")
    args = p.parse_args()
    P, H, B = args.stages, args.width, args.batch
    L = args.layers_per_stage * P
    mesh = (P, 1, 1)
    print(
        f"{'schedule':<10} {'P':>2} {'M':>3} {'closed form':>11} {'estimate':>9} "
        f"{'median per stage':>18} {'worst call':>12}"
    )
    for schedule in args.schedules.split(","):
        for M in (int(m) for m in args.microbatches.split(",")):
            # Splat values: the timing does not depend on them, and wide
            # layers' dense constants would take minutes to parse.
            xs = [np.full((B, H), 0.5, np.float32)] * M
            ts = [np.full((B, H), 0.25, np.float32)] * M
            ws = [np.full((H, H), 1.0 / H, np.float32)] * L
            text = mlp.program(
                dist_opt(), mesh, M, schedule, 1, L, xs, ts, ws, True, args.activation, args.calls
            )
            text = mark_schedule_end(text)
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "run.json")
                run_on_mpi(text, P, trace=path, timeout=600)
                with open(path) as f:
                    trace = json.load(f)
            calls = measured(trace)
            medians = [statistics.median(c[rank] for c in calls) for rank in range(P)]
            closed = (P - 1) / (M + P - 1)
            worst = max(calls, key=lambda c: max(abs(b - closed) for b in c))
            print(
                f"{schedule:<10} {P:>2} {M:>3} {closed:>11.3f} "
                f"{estimate(mesh, M, schedule, L, B, H, args.activation):>9.3f} "
                f"{' '.join(f'{b:.3f}' for b in medians):>18} "
                f"{' '.join(f'{b:.3f}' for b in worst):>12}",
                flush=True,
            )
            if args.svg:
                with open(args.svg, "w") as f:
                    f.write(timeline_svg(trace))


if __name__ == "__main__":
    main()
