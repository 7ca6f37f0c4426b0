"""The pipeline bubble: estimated by --dist-pipeline and measured on a
traced MPI run, against the closed form (P - 1)/(M + P - 1) of the step.

The layer stack of examples/pipeline_mlp.py, wide enough that its products
dominate (width 512, 64 rows per microbatch, two layers per stage, the first
computing its input's gradient too, so that the stages compute the same
products), is pipelined and run with dist-run's trace. A stage's measured bubble is the
part of the pipelined span of @step (up to the broadcasts of the results)
that is not compute: the blocking sends and the waits for receives, and
for a stage that finishes early, the wait for the others. With --svg, the
timeline of one run is drawn.

  python3 bench/pipeline.py                      # P = 2 (one core each)
  python3 bench/pipeline.py --stages 4 --svg docs/figures/pipeline-1f1b.svg
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
import pipeline_mlp as mlp  # noqa: E402

from dist.run import run_on_mpi  # noqa: E402
from dist.run.paths import dist_opt  # noqa: E402
from dist.run.timeline import timeline_svg  # noqa: E402


def estimate(mesh, M, schedule, L, B, H):
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
        input=mlp.mesh_header(mesh) + mlp.step_ir(L, B, H, 1, 1, input_grad=True),
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    return float(re.search(r"\(([0-9.]+) of the step\)", out).group(1))


def measured(trace):
    """Per rank: the part of the pipelined span that is not compute. The
    span runs from the call of @step to where the last rank enters the
    broadcasts of the results (what a stage holds is then final); a rank
    that finished its part earlier waits in the first broadcast, which is
    the end of its bubble."""
    by_rank = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X":
            by_rank.setdefault(e["pid"], []).append(e)
    spans = {}
    for rank, events in by_rank.items():
        call = max(
            (e for e in events if e["cat"] == "function" and "step" in e["name"]),
            key=lambda e: e["ts"],
        )
        first = min(
            e["ts"]
            for e in events
            if e["cat"] == "collective" and e["ts"] >= call["ts"] and "broadcast" in e["name"]
        )
        spans[rank] = (call["ts"], first)
    end = max(last for _, last in spans.values())
    bubbles = []
    for rank in sorted(by_rank):
        begin = spans[rank][0]
        compute = sum(
            min(e["ts"] + e["dur"], end) - max(e["ts"], begin)
            for e in by_rank[rank]
            if e["cat"] == "compute" and e["ts"] < end and e["ts"] + e["dur"] > begin
        )
        bubbles.append(1 - compute / (end - begin))
    return bubbles


def main():
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--stages", type=int, default=2)
    p.add_argument("--microbatches", default="4,8")
    p.add_argument("--schedules", default="gpipe,1f1b")
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--svg", help="draw the last run's timeline here")
    args = p.parse_args()
    P, H, B = args.stages, args.width, args.batch
    L = 2 * P
    mesh = (P, 1, 1)
    print(
        f"{'schedule':<10} {'P':>2} {'M':>3} {'closed form':>11} {'estimate':>9} {'measured (per stage)':>24}"
    )
    for schedule in args.schedules.split(","):
        for M in (int(m) for m in args.microbatches.split(",")):
            xs, ts, ws = mlp.data(M, L, B, H)
            text = mlp.program(dist_opt(), mesh, M, schedule, 1, L, xs, ts, ws, input_grad=True)
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "run.json")
                run_on_mpi(text, P, trace=path, timeout=600)
                with open(path) as f:
                    trace = json.load(f)
            bubbles = measured(trace)
            closed = (P - 1) / (M + P - 1)
            print(
                f"{schedule:<10} {P:>2} {M:>3} {closed:>11.3f} "
                f"{estimate(mesh, M, schedule, L, B, H):>9.3f} "
                f"{' '.join(f'{b:.3f}' for b in bubbles):>24}",
                flush=True,
            )
            if args.svg:
                with open(args.svg, "w") as f:
                    f.write(timeline_svg(trace))


if __name__ == "__main__":
    main()
