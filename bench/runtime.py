#!/usr/bin/env python3
"""What the rewrites buy at run time, measured from traced MPI runs.

  PYTHONPATH=build/python_packages python3 bench/runtime.py [--sizes small,large]

The step is the MLP part of the GPT-style block on a [1, 2] mesh (tensor
parallelism over "mp"): column- then row-parallel linear, forward and
backward, with the row-parallel output's and the column-parallel dX's
allreduces. It runs on 2 processes with dist-run --trace, before and after
--dist-auto-parallel (whose matmul-grad split lets the dX allreduce overlap
the dW matmul), and with MPICH's asynchronous progress thread on and off
(MPIR_CVAR_ASYNC_PROGRESS=1), since a non-blocking allreduce may only
advance inside MPI_Wait otherwise. From each trace (the slowest rank):

  step      the compute stream's span from the first to the last event
  exposed   time the compute stream spends in blocking collectives and waits
  in flight time asynchronous collectives spend between issue and wait end
  hidden    in flight minus their waits: communication that ran under compute

and from --dist-overlap-report the predicted makespan and exposed
communication of @step, with the prediction's error, once with the
report's default constants and once calibrated: the compute rate from the
first size's "before" run (its flops over its compute time) and the link's
latency and bandwidth from the blocking allreduces of the tiny size and the
first size (two points of latency + bytes / bandwidth), so that the other
sizes are predicted, not fitted.
Inputs are splat constants (the values do not matter for time); the median
of --reps runs is reported.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import dist

SIZES = {
    # rows (batch x sequence), hidden, ffn (global; split over mp = 2)
    "tiny": (64, 64, 64),
    "small": (1024, 512, 256),
    "large": (2048, 1024, 256),
}


def program(rows, hidden, ffn):
    mp = 2
    f = ffn // mp
    mesh = '#mesh = #dist.mesh<shape = [1, 2], names = ["dp", "mp"]>'
    T = lambda shape, dims, partial="": (
        f"tensor<{'x'.join(map(str, shape))}xf32, #dist.tensor<#mesh, [{', '.join(map(str, dims))}]"
        f"{', partial = [' + partial + ']' if partial else ''}>>")
    x, w1, w2 = T([rows, hidden], [-1, -1]), T([hidden, f], [-1, 1]), T([f, hidden], [1, -1])
    h = T([rows, f], [-1, 1])
    part = T([rows, hidden], [-1, -1], "1 : sum")
    dw1 = T([hidden, f], [-1, 1])
    dw2 = T([f, hidden], [1, -1])
    plain = lambda shape: f"tensor<{'x'.join(map(str, shape))}xf32>"
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
  %o, %dx, %gw1, %gw2 = call @step(%x, %w1, %w2, %x) : ({x}, {w1}, {w2}, {x}) -> ({x}, {x}, {dw1}, {dw2})
  %p = tensor.cast %dx : {x} to {plain([rows, hidden])}
  %s = tensor.extract_slice %p[0, 0] [1, 4] [1, 1] : {plain([rows, hidden])} to {plain([1, 4])}
  %m = bufferization.to_buffer %s : {plain([1, 4])} to memref<1x4xf32>
  %u = memref.cast %m : memref<1x4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}}
"""


def measure(trace):
    """Per rank: step, exposed, in flight, hidden (microseconds); the
    slowest rank's figures."""
    rows = []
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    for rank in sorted({e["pid"] for e in events}):
        mine = [e for e in events if e["pid"] == rank]
        compute = [e for e in mine if e["tid"] == 0]
        step = max(e["ts"] + e["dur"] for e in compute) - min(e["ts"] for e in compute)
        exposed = sum(e["dur"] for e in compute
                      if e["cat"] in ("collective", "wait", "issue"))
        flight = sum(e["dur"] for e in mine if e["tid"] >= 100)
        waits = sum(e["dur"] for e in compute if e["cat"] == "wait")
        rows.append((step, exposed, flight, max(0.0, flight - waits)))
    return max(rows)


def flops(rows, hidden, ffn):
    """Per process: six matmuls of rows x hidden x ffn/2 (two forward, two
    per matmul_grad), two flops per multiply-add."""
    return 6 * 2 * rows * hidden * (ffn // 2)


def allreduce_us(trace):
    """Mean duration of the blocking allreduces on the slowest rank."""
    events = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["tid"] == 0
              and e["cat"] == "collective"]
    ranks = {e["pid"] for e in events}
    return max(statistics.mean(e["dur"] for e in events if e["pid"] == r) for r in ranks)


def calibrate(ctx, first, reps):
    """Cost-model constants for this machine (see the module docstring)."""
    points = []
    for size in ("tiny", first):
        rows, hidden, ffn = SIZES[size]
        traces = [traced(program(rows, hidden, ffn), "", False) for _ in range(reps)]
        step, exposed, _, _ = [statistics.median(measure(t)[i] for t in traces)
                               for i in range(4)]
        points.append((rows * hidden * 4, statistics.median(allreduce_us(t) for t in traces),
                       flops(rows, hidden, ffn) / (step - exposed)))
    (b0, t0, _), (b1, t1, rate) = points
    # One point (calibrating on tiny itself): all of it is latency.
    per_byte = max((t1 - t0) / (b1 - b0), 1e-9) if b1 > b0 else 1e-9  # us per byte
    latency = max(t0 - b0 * per_byte, 0.0)
    return {"peak_tflops": rate / 1e6, "link_latency_us": latency,
            "link_bandwidth_gbps": 1e-3 / per_byte}


def predict(ctx, text, flags, constants):
    module = dist.Module.parse(text, context=ctx)
    if flags:
        module.run(flags.lstrip("-"))
    report = dist.overlap_report(module, **constants)
    [step] = [f for f in report["functions"] if f["name"] == "step"]
    return step["makespan_us"], step["exposed_comm_us"]


def traced(text, flags, progress):
    """The trace of one run on 2 processes."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        if progress:
            os.environ["MPIR_CVAR_ASYNC_PROGRESS"] = "1"
        try:
            dist.run_on_mpi(text, 2, pass_flags=flags, trace=path, timeout=600,
                            check_collectives=False)
        finally:
            os.environ.pop("MPIR_CVAR_ASYNC_PROGRESS", None)
        with open(path) as f:
            return json.load(f)


def run_traced(text, flags, reps, progress):
    results = [measure(traced(text, flags, progress)) for _ in range(reps)]
    return [statistics.median(r[i] for r in results) for i in range(4)]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="small,large")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args()
    ctx = dist.Context()
    rows = []
    sizes = args.sizes.split(",")
    for size in sizes:
        if size not in SIZES:
            sys.exit(f"runtime.py: unknown size {size!r}; expected one of {sorted(SIZES)}")
    model = calibrate(ctx, sizes[0], args.reps)
    print("calibrated on " + sizes[0] + ": " + ", ".join(
        f"{k.replace('_', '-')}={v:.4g}" for k, v in model.items()))
    print("| size | program | async progress | step | exposed comm | in flight | hidden | "
          "predicted step | predicted exposed | step error | default model step |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for size in sizes:
        text = program(*SIZES[size])
        for label, flags in [("before", ""), ("after", "--dist-auto-parallel")]:
            pstep, pexposed = predict(ctx, text, flags, model)
            dstep, _ = predict(ctx, text, flags, {})
            for progress in (False, True):
                step, exposed, flight, hidden = run_traced(text, flags, args.reps, progress)
                error = (pstep - step) / step * 100 if step else 0.0
                rows.append({"size": size, "program": label, "async_progress": progress,
                             "step_us": step, "exposed_us": exposed, "in_flight_us": flight,
                             "hidden_us": hidden, "predicted_step_us": pstep,
                             "predicted_exposed_us": pexposed, "step_error_pct": error,
                             "default_model_step_us": dstep, "calibration": model})
                ms = lambda us: f"{us / 1000:.2f} ms"
                print(f"| {size} {SIZES[size]} | {label} | {'on' if progress else 'off'} | "
                      f"{ms(step)} | {ms(exposed)} | {ms(flight)} | {ms(hidden)} | "
                      f"{ms(pstep)} | {ms(pexposed)} | {error:+.0f}% | {ms(dstep)} |",
                      flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
