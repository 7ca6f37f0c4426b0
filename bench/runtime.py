#!/usr/bin/env python3
"""What the rewrites buy at run time, measured from traced MPI runs.

  PYTHONPATH=build/python_packages python3 bench/runtime.py [--sizes small,large]
      [--progress] [--json FILE]

The step is the MLP part of the GPT-style block on a [1, 2] mesh (tensor
parallelism over "mp"): column- then row-parallel linear, forward and
backward, with the row-parallel output's and the column-parallel dX's
allreduces. It runs on 2 processes with dist-run --trace, before and after
--dist-auto-parallel (whose matmul-grad split lets the dX allreduce overlap
the dW matmul); with --progress also with MPICH's asynchronous progress
thread (MPIR_CVAR_ASYNC_PROGRESS=1). From each trace, on the slowest rank,
within the call of @step:

  step      the call's span
  exposed   time the compute stream spends in blocking collectives, issues
            and waits
  issue     the part of it spent issuing asynchronous collectives (MPICH may
            move a message inside MPI_Iallreduce itself)
  in flight time asynchronous collectives spend between issue and wait end
  hidden    in flight minus their issues and waits: an upper bound of the
            communication that ran under compute

The program calls @step STEPS times; the figures are those of the median
call after the first (which warms caches, pages and MPI's connections).

The peer is the same step written by hand with numpy and mpi4py
(bench/peer.py, on Open MPI, OpenBLAS on one thread), blocking ("peer")
and with dX's allreduce overlapping dW1 ("peer overlap"), timed the same
way: its step and the time it spends in MPI calls, which is all exposed.
"before" is compared with the first, "after" with the second.

The prediction is --dist-overlap-report's makespan and exposed
communication of @step with the cost model that dist-run --calibrate
measured on 2 processes (dist.calibrate) right before each repetition, and
with the report's default constants for comparison. Medians of --reps
repetitions are reported, with the range of the step's prediction error.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import dist

# Calls of @step per run: the first warms caches, pages and MPI's
# connections up; the figures are the median of the others (as the peer's).
STEPS = 4

SIZES = {
    # rows (batch x sequence), hidden, ffn (global; split over mp = 2)
    "tiny": (64, 64, 64),
    "small": (1024, 512, 256),
    "large": (2048, 1024, 256),
}


def program(rows, hidden, ffn, steps=STEPS):
    mp = 2
    f = ffn // mp
    mesh = '#mesh = #dist.mesh<shape = [1, 2], names = ["dp", "mp"]>'
    T = lambda shape, dims, partial="": (
        f"tensor<{'x'.join(map(str, shape))}xf32, #dist.tensor<#mesh, [{', '.join(map(str, dims))}]"
        f"{', partial = [' + partial + ']' if partial else ''}>>"
    )
    x, w1, w2 = T([rows, hidden], [-1, -1]), T([hidden, f], [-1, 1]), T([f, hidden], [1, -1])
    h = T([rows, f], [-1, 1])
    part = T([rows, hidden], [-1, -1], "1 : sum")
    dw1 = T([hidden, f], [-1, 1])
    dw2 = T([f, hidden], [1, -1])
    plain = lambda shape: f"tensor<{'x'.join(map(str, shape))}xf32>"
    call = f"call @step(%x, %w1, %w2, %x) : ({x}, {w1}, {w2}, {x}) -> ({x}, {x}, {dw1}, {dw2})"
    # A training loop: the steps before the last in an scf.for, whose body
    # frees each step's results; the last step's dX is printed.
    calls = (
        f"  %first = arith.constant 0 : index\n  %last = arith.constant {steps - 1} : index\n"
        f"  %one = arith.constant 1 : index\n"
        f"  scf.for %i = %first to %last step %one {{\n    %o0, %dx0, %gw10, %gw20 = func.{call}\n  }}\n"
        f"  %o, %dx, %gw1, %gw2 = {call}\n"
    )
    return f"""{mesh}
func.func private @printMemrefF32(memref<*xf32>)
func.func @step(%x: {x}, %w1: {w1}, %w2: {w2}, %dout: {x}) -> ({x}, {x}, {dw1}, {dw2}) {{
  %h = dist.matmul %x, %w1 : {x}, {w1} -> {h}
  %op = dist.matmul %h, %w2 : {h}, {w2} -> {part}
  %o = dist.allreduce %op on #mesh axes = [1] reduce = sum : {part} -> {x}
  %dh, %gw2 = dist.matmul_grad %h, %w2, %dout : {h}, {w2}, {x} -> {h}, {dw2}
  %dxp, %gw1 = dist.matmul_grad %x, %w1, %dh : {x}, {w1}, {h} -> {part}, {dw1}
  %dx = dist.allreduce %dxp on #mesh axes = [1] reduce = sum : {part} -> {x}
  return %o, %dx, %gw1, %gw2 : {x}, {x}, {dw1}, {dw2}
}}
func.func @main() {{
  %cx = arith.constant dense<0.5> : {plain([rows, hidden])}
  %c1 = arith.constant dense<0.25> : {plain([hidden, f])}
  %c2 = arith.constant dense<0.125> : {plain([f, hidden])}
  %x = tensor.cast %cx : {plain([rows, hidden])} to {x}
  %w1 = tensor.cast %c1 : {plain([hidden, f])} to {w1}
  %w2 = tensor.cast %c2 : {plain([f, hidden])} to {w2}
{calls}  %p = tensor.cast %dx : {x} to {plain([rows, hidden])}
  %s = tensor.extract_slice %p[0, 0] [1, 4] [1, 1] : {plain([rows, hidden])} to {plain([1, 4])}
  %m = bufferization.to_buffer %s : {plain([1, 4])} to memref<1x4xf32>
  %u = memref.cast %m : memref<1x4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}}
"""


def measure(trace):
    """Step, exposed, in flight, hidden and issue (microseconds) of a warm
    call of @step: per call, the figures of the rank whose call took
    longest; of the calls after the first, the median one by step."""
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    ranks = sorted({e["pid"] for e in events})
    per_rank = [measure_calls([e for e in events if e["pid"] == rank]) for rank in ranks]
    slowest = [max(calls) for calls in zip(*per_rank)]
    warm = sorted(slowest[1:] or slowest)
    return warm[len(warm) // 2]


def measure_calls(mine):
    """The figures of each call of @step in one rank's events, in order."""
    rows = []
    calls = sorted(
        (e for e in mine if e["cat"] == "function" and e["name"] == "step"), key=lambda e: e["ts"]
    )
    for call in calls:
        begin, end = call["ts"], call["ts"] + call["dur"]
        inside = [e for e in mine if begin <= e["ts"] and e["ts"] + e["dur"] <= end + 1e-3]
        exposed = sum(
            e["dur"]
            for e in inside
            if e["tid"] == 0 and e["cat"] in ("collective", "wait", "issue")
        )
        flight = sum(e["dur"] for e in inside if e["tid"] >= 100)
        visible = sum(e["dur"] for e in inside if e["cat"] in ("wait", "issue"))
        issue = sum(e["dur"] for e in inside if e["cat"] == "issue")
        rows.append(
            (call["dur"], exposed, flight, max(0.0, flight - visible) if flight else 0.0, issue)
        )
    return rows


def predict(ctx, text, flags, options):
    module = dist.Module.parse(text, context=ctx)
    if flags:
        module.run(flags.lstrip("-"))
    report = dist.overlap_report(module, **options)
    [step] = [f for f in report["functions"] if f["name"] == "step"]
    return step["makespan_us"], step["exposed_comm_us"]


def expected_dx(size):
    """dX's value everywhere: with the program's constant inputs, dH is
    hidden * 0.5 * 0.125 and dX sums f * dH * 0.25 over both processes."""
    _, hidden, ffn = SIZES[size]
    return ffn * hidden / 64


def check_dx(who, size, values):
    if any(v != expected_dx(size) for v in values):
        sys.exit(f"runtime.py: {who} computed dX[0, :4] = {values}, not {expected_dx(size)}")


def traced(size, text, flags, progress):
    """The trace of one run on 2 processes, whose dX is checked."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        if progress:
            os.environ["MPIR_CVAR_ASYNC_PROGRESS"] = "1"
        try:
            ranks = dist.run_on_mpi(
                text, 2, pass_flags=flags, trace=path, timeout=600, check_collectives=False
            )
        finally:
            os.environ.pop("MPIR_CVAR_ASYNC_PROGRESS", None)
        for printed in ranks:
            check_dx(f"dist {flags or '(before)'}", size, list(printed[0].flatten()))
        with open(path) as f:
            return json.load(f)


PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peer.py")


def peer_missing():
    """Why the peer cannot run here, or None."""
    if not shutil.which("mpirun.openmpi"):
        return "mpirun.openmpi is missing (apt-get install python3-mpi4py)"
    probe = subprocess.run([sys.executable, "-c", "import mpi4py, numpy"], capture_output=True)
    if probe.returncode != 0:
        return f"{sys.executable} lacks mpi4py or numpy (apt-get install python3-mpi4py)"
    return None


def peer(size, overlap):
    """The peer's warm step and MPI time (microseconds) at `size`, on 2
    processes: the median of its steps after the first."""
    env = dict(os.environ)
    if os.geteuid() == 0:
        # Open MPI refuses root unless told twice.
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # MPICH's hydra does not bind processes to cores; Open MPI's mpirun
    # would: the same placement for both.
    command = ["mpirun.openmpi", "-n", "2", "--bind-to", "none", sys.executable, PEER]
    command += [str(n) for n in SIZES[size]] + ["--steps", str(STEPS)]
    command += ["--overlap"] if overlap else []
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        sys.exit(f"runtime.py: the peer failed:\n{done.stdout}{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    check_dx("the peer", size, result["dx_row0"])
    warm = sorted((s["step_us"], s["mpi_us"]) for s in result["steps"][1:] or result["steps"])
    return warm[len(warm) // 2]


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="small,large")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument(
        "--progress", action="store_true", help="also run with MPICH's asynchronous progress thread"
    )
    parser.add_argument("--json", help="also write the rows here")
    parser.add_argument("--no-peer", action="store_true", help="do not run the numpy + MPI peer")
    args = parser.parse_args()
    missing = None if args.no_peer else peer_missing()
    if missing:
        print(f"runtime.py: the peer is not run: {missing}", file=sys.stderr)
    with_peer = not args.no_peer and not missing
    ctx = dist.Context()
    sizes = args.sizes.split(",")
    for size in sizes:
        if size not in SIZES:
            sys.exit(f"runtime.py: unknown size {size!r}; expected one of {sorted(SIZES)}")
    configs = [
        (size, label, flags, progress)
        for size in sizes
        for label, flags in [("before", ""), ("after", "--dist-auto-parallel")]
        for progress in ((False, True) if args.progress else (False,))
    ]
    samples = {c: [] for c in configs}
    peers = {(size, overlap): [] for size in sizes for overlap in (False, True)}
    models = []
    with tempfile.TemporaryDirectory() as tmp:
        cost_model = os.path.join(tmp, "costs.json")
        # Each repetition calibrates right before it runs: this machine's
        # speed drifts by tens of percent over minutes, and a prediction is
        # only as good as the calibration of the same moment.
        for _ in range(args.reps):
            models.append(dist.calibrate(2, cost_model))
            for config in configs:
                size, _, flags, progress = config
                text = program(*SIZES[size])
                pstep, pexposed = predict(ctx, text, flags, {"cost_model": cost_model})
                samples[config].append(
                    measure(traced(size, text, flags, progress)) + (pstep, pexposed)
                )
            for key in peers if with_peer else ():
                peers[key].append(peer(*key))
    matmul_rates = [m["matmul-tflops"]["matmul"] for m in models]
    rates = {
        form: statistics.median(m["matmul-tflops"][form] for m in models)
        for form in models[0]["matmul-tflops"]
    }
    links = {
        kind: (
            statistics.median(m[kind][0]["latency-us"] for m in models),
            statistics.median(m[kind][0]["bandwidth-gbps"] for m in models),
        )
        for kind in ("allreduce", "broadcast")
    }
    print(
        f"calibrated {args.reps} times (dist-run --calibrate, 2 processes), medians: "
        + ", ".join(f"{form} {rate * 1e3:.3g} GFLOP/s" for form, rate in rates.items())
        + "; "
        + ", ".join(
            f"{kind} {lat:.1f} us + bytes / {bw:.3g} GB/s" for kind, (lat, bw) in links.items()
        )
        + f"; matmul rate range {min(matmul_rates) * 1e3:.3g}-"
        f"{max(matmul_rates) * 1e3:.3g} GFLOP/s"
    )
    print(
        "| size | program | async progress | step | exposed comm | of which issue | "
        "in flight | hidden | predicted step | predicted exposed | step error (range) | "
        "default model step | peer step | peer exposed | dist / peer |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    ms = lambda us: f"{us / 1000:.2f} ms"
    for config in configs:
        size, label, flags, progress = config
        runs = samples[config]
        step, exposed, flight, hidden, issue, pstep, pexposed = [
            statistics.median(r[i] for r in runs) for i in range(7)
        ]
        errors = sorted((r[5] - r[0]) / r[0] * 100 for r in runs)
        error = statistics.median(errors)
        dstep, _ = predict(ctx, program(*SIZES[size]), flags, {})
        # "after" overlaps dX's allreduce, as the overlapping peer does.
        peer_runs = peers.get((size, label == "after")) or []
        peer_step, peer_exposed = (
            [statistics.median(r[i] for r in peer_runs) for i in range(2)]
            if peer_runs
            else (None, None)
        )
        rows.append(
            {
                "size": size,
                "program": label,
                "async_progress": progress,
                "step_us": step,
                "exposed_us": exposed,
                "issue_us": issue,
                "in_flight_us": flight,
                "hidden_us": hidden,
                "predicted_step_us": pstep,
                "predicted_exposed_us": pexposed,
                "step_error_pct": error,
                "step_error_range_pct": [errors[0], errors[-1]],
                "default_model_step_us": dstep,
                "samples": runs,
                "matmul_gflops": {f: r * 1e3 for f, r in rates.items()},
                "peer_step_us": peer_step,
                "peer_exposed_us": peer_exposed,
                "peer_samples": peer_runs,
            }
        )
        versus = (
            f"{ms(peer_step)} | {ms(peer_exposed)} | {step / peer_step:.2f} |"
            if peer_step
            else "- | - | - |"
        )
        print(
            f"| {size} {SIZES[size]} | {label} | {'on' if progress else 'off'} | "
            f"{ms(step)} | {ms(exposed)} | {ms(issue)} | {ms(flight)} | {ms(hidden)} | "
            f"{ms(pstep)} | {ms(pexposed)} | {error:+.0f}% ({errors[0]:+.0f}% to "
            f"{errors[-1]:+.0f}%) | {ms(dstep)} | {versus}",
            flush=True,
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
