"""dist-run --calibrate: microbenchmarks of this machine's collectives,
lowered matmuls and memory-bound elementwise ops, run with the runtime a program gets, timed from their
trace, fitted into a cost-model file (the passes' cost-model=FILE)."""
import io
import json
import os
import statistics
import time

from . import launch, trace as tracing
from .config import RunConfig
from .errors import RunError, fail

# What --calibrate measures: collectives of these many f32 values, matmuls
# of this (M, K, N), a dist.scale of CALIBRATE_STREAM f32 values (as large
# as a training step's activations, so that it streams from memory), each
# REPS times after one warm-up.
CALIBRATE_ELEMENTS = [256, 4096, 65536, 1048576]
CALIBRATE_MATMUL = (384, 384, 384)
CALIBRATE_STREAM = 1 << 21
CALIBRATE_REPS = 5

# The timed ops that are compute: each is timed as the compute interval
# before the one-value allreduce that reads its result.
MEMORY = "memory"


def _is_compute(kind):
    return kind.startswith("matmul") or kind == MEMORY


# The collectives --calibrate measures, as the cost-model file names them.
CALIBRATE_COLLECTIVES = ("allreduce", "broadcast", "all-gather", "reduce-scatter", "all-to-all")


# The file name of the calibration program's locations: each timed op is at
# line k of it, which names it in the trace (args.line).
_SOURCE = "calibrate"


def _redistribution_chain(dist, kind, mesh, g, elements):
    """The timed ops of `kind` on `mesh` ([N / g, g]) moving `elements` f32
    values per process (the operand of an allreduce, broadcast or
    reduce-scatter, the gathered result of an all-gather, the shard of an
    all-to-all), as the cost model prices them: the operand's type, and a
    cycle of (timed op, local op that makes its operand from the previous
    result or None), each a function of (builder, value)."""

    def t(shape, dims=None, partial=None):
        encoding = None if dims is None else dist.TensorDist(mesh, dims, partial or {})
        return dist.TensorType(shape, "f32", encoding, context=mesh.context)

    if kind == "allreduce":
        return t([elements]), [(lambda f, v: f.allreduce(v, mesh, [1], reduce="max"), None)]
    if kind == "broadcast":
        return t([elements]), [(lambda f, v: f.broadcast(v, mesh, [1], root=0), None)]
    shard = dist.TensorDist(mesh, [1])
    whole = dist.TensorDist(mesh, [-1])
    if kind == "all-gather":
        return t([elements // g], [1]), [
            (
                lambda f, v: f.all_gather(v, mesh, [1], whole),
                lambda f, v: f.all_slice(v, mesh, [1], shard),
            )
        ]
    if kind == "reduce-scatter":
        partial = dist.TensorDist(mesh, [-1], {1: "max"})
        return t([elements], [-1], {1: "max"}), [
            (
                lambda f, v: f.reduce_scatter(v, mesh, [1], shard, reduce="max"),
                lambda f, v: f.make_partial(v, mesh, [1], partial, reduce="max"),
            )
        ]
    # all-to-all: a [g, elements] tensor whose split moves between its dims.
    rows, cols = dist.TensorDist(mesh, [1, -1]), dist.TensorDist(mesh, [-1, 1])
    return t([1, elements], [1, -1]), [
        (lambda f, v: f.all_to_all(v, mesh, [1], cols), None),
        (lambda f, v: f.all_to_all(v, mesh, [1], rows), None),
    ]


def calibration_program(n):
    """The microbenchmark program for n processes, built with the builder,
    as IR text with its locations, and what each of its timed ops is:
    {line: (kind, group size, bytes or flops, repetition)}, the line of the
    op's location. Collectives are blocking and chained (each reduces the
    previous result), so that nothing is dead; a matmul is timed as the
    compute between two one-value allreduces over all processes, the second
    of which reads the matmul's result."""
    import dist  # The builder; the extension loads here, not at import.

    ctx = dist.Context()
    try:
        module = dist.Module.create(ctx)
        f = module.function("main")
        ops = {}

        def timed(what):
            f.at(_SOURCE, len(ops) + 1, 1)
            ops[len(ops) + 1] = what

        def untimed():
            f.at(None)

        f32 = dist.Type.parse("f32", ctx)
        one = f.constant(1.0, f32)
        tiny = f.splat(one, dist.TensorType([1], "f32", context=ctx))
        for g in (g for g in range(2, n + 1) if n % g == 0):
            mesh = dist.Mesh([n // g, g], names=["rest", "group"], context=ctx)
            for kind in CALIBRATE_COLLECTIVES:
                for elements in CALIBRATE_ELEMENTS:
                    # The redistributions split a dim over the group.
                    elements -= elements % g
                    operand, chain = _redistribution_chain(dist, kind, mesh, g, elements)
                    value = f.splat(one, operand)
                    for rep in range(CALIBRATE_REPS + 1):
                        # Each repetition undoes the last one's change of
                        # distribution locally (a slice or a partial view,
                        # untimed), so that the next one has its operand.
                        op, back = chain[rep % len(chain)]
                        if back and rep > 0:
                            value = back(f, value)
                        timed((kind, g, elements * 4, rep))
                        value = op(f, value)
                        untimed()
        world = dist.Mesh([n], names=["all"], context=ctx)
        m, k, nn = CALIBRATE_MATMUL
        flops = 2 * m * k * nn
        T = lambda a, b: dist.TensorType([a, b], "f32", context=ctx)
        x = f.constant(0.5, T(m, k))
        w = f.constant(0.25, T(k, nn))
        dy = f.constant(0.125, T(m, nn))
        f.allreduce(tiny, world, [0], reduce="max")
        forms = [
            ("matmul", flops, lambda: f.matmul(x, w)),
            # The split's dY matmul: x^T dY, contracting the rows.
            ("matmul-transpose-x", flops, lambda: f.matmul(x, dy, transpose_x=True)),
            # The split's dX matmul: dY W^T.
            ("matmul-transpose-y", flops, lambda: f.matmul(dy, w, transpose_y=True)),
            ("matmul-grad", 2 * flops, lambda: f.matmul_grad(x, w, dy)[1]),
        ]
        collapse = dist.Attribute.parse("[[0, 1]]", ctx)
        for form, form_flops, make in forms:
            for rep in range(CALIBRATE_REPS + 1):
                result = make()
                corner = f.extract_slice(result, [0, 0], [1, 1])
                flat = f.op(
                    "tensor.collapse_shape",
                    [corner],
                    [dist.TensorType([1], "f32", context=ctx)],
                    {"reassociation": collapse},
                )[0]
                timed((form, n, form_flops, rep))
                f.allreduce(flat, world, [0], reduce="max")
                untimed()
        # The scaled tensor comes from a collective's result, so that no
        # folding can compute it at compile time. The scales run in a
        # function called twice, and the second call's times count: a step
        # frees its buffers when it returns, and the next call of it finds
        # their pages mapped, while every buffer of a first call is memory
        # the process has never touched (page faults cost several times
        # the streaming itself).
        start = f.allreduce(tiny, world, [0], reduce="max")
        scalar = f.op("tensor.extract", [start, f.index(0)], [f32])[0]
        stream_type = dist.TensorType([CALIBRATE_STREAM], "f32", context=ctx)
        stream = f.splat(scalar, stream_type)
        for _ in range(2):
            f.call("stream", [stream], [tiny.type])
        f.return_()
        g = module.function("stream", [stream_type], private=True)
        (value,) = g.arguments
        for rep in range(CALIBRATE_REPS + 1):
            value = g.scale(value, 0.5)
            corner = g.extract_slice(value, [0], [1])
            g.at(_SOURCE, len(ops) + 1, 1)
            ops[len(ops) + 1] = (MEMORY, n, 2 * 4 * CALIBRATE_STREAM, rep)
            last = g.allreduce(corner, world, [0], reduce="max")
            g.at(None)
        g.return_(last)
        return module.print(debug_info=True), ops
    finally:
        ctx.close()


def fit_link(points):
    """latency (us) and bandwidth (GB/s) of `latency + bytes / bandwidth`
    through the smallest and the largest message's medians."""
    (b0, t0), (b1, t1) = points[0], points[-1]
    per_byte = (t1 - t0) / (b1 - b0) if b1 > b0 else 0.0
    if per_byte <= 0:
        # The largest message was no slower than the smallest (a loaded
        # machine stalled the small one): the line through the largest
        # alone, with no latency term, rather than a negative bandwidth.
        return 0.0, 1e-3 * b1 / max(t1, 1e-3)
    latency = t0 - b0 * per_byte
    if latency < 0:
        # Through the largest point with the latency clamped at zero.
        return 0.0, 1e-3 * b1 / max(t1, 1e-3)
    return latency, 1e-3 / per_byte


def _intervals(events, ops):
    """{(line, rank): (begin, end)} in microseconds: a collective's own
    interval, or the compute interval that ends where the one-value
    allreduce after a matmul or a scale starts. An op that runs more than
    once (the scales' function is called twice) has its last run's."""
    intervals = {}
    for rank in sorted({e["pid"] for e in events}):
        # A call's function interval starts with the compute inside it:
        # only compute and collective intervals are the ops' neighbours.
        mine = sorted(
            (
                e
                for e in events
                if e["pid"] == rank and e["tid"] == 0 and e["cat"] != tracing.FUNCTION
            ),
            key=lambda e: e["ts"],
        )
        for i, e in enumerate(mine):
            line = _line_of(e)
            if e["cat"] != tracing.COLLECTIVE or line not in ops:
                continue
            kind = ops[line][0]
            timed = e
            if _is_compute(kind):
                timed = mine[i - 1] if i > 0 else None
                if timed is None or timed["cat"] != tracing.COMPUTE:
                    fail(f"--calibrate: no compute region before line {line} on rank {rank}")
            intervals[(line, rank)] = (timed["ts"], timed["ts"] + timed["dur"])
    return intervals


def collective_time(kind, group, intervals):
    """The time of one collective from its ranks' intervals {rank: (begin,
    end)}: from the last rank's arrival to the last rank's return. A rank
    that arrived first waits for the others, and the last to arrive may
    find its peers' data already delivered (a slow link's sends complete
    into socket buffers), so neither one rank's interval says it. A
    broadcast's root (group coordinate 0: rank % group == 0 on the
    [N / group, group] mesh) may return as soon as it has sent: only the
    receivers' returns count. The ranks' clocks are one on one machine
    (an emulated cluster included); where they are not, and the span comes
    out empty, the shortest interval is the time."""
    ends = [
        end for r, (_, end) in intervals.items() if not (kind == "broadcast" and r % group == 0)
    ]
    span = max(ends) - max(begin for begin, _ in intervals.values())
    if span > 0:
        return span
    return min(end - begin for begin, end in intervals.values())


def _line_of(event):
    """The line of the op an interval times: its location field (the
    calibration program's ops are at lines of _SOURCE)."""
    args = event.get("args", {})
    return args.get("line") if args.get("file") == _SOURCE else None


def calibrate(config, output, tmp):
    """Runs the microbenchmarks on config.n processes and writes the
    cost-model file `output`; returns the model."""
    if config.n < 2:
        fail("--calibrate needs at least 2 processes (-n): a collective needs a group")
    # Checked before the run, but written only after it: a failed
    # calibration leaves no file behind.
    directory = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(directory) or not os.access(directory, os.W_OK | os.X_OK):
        fail(f"--calibrate {output}: cannot write in {directory}")
    if os.path.isdir(output):
        fail(f"--calibrate {output}: is a directory")
    text, ops = calibration_program(config.n)
    program = os.path.join(tmp, "calibrate.mlir")
    with open(program, "w") as f:
        f.write(text)
    trace_path = os.path.join(tmp, "calibrate.json")
    config.say(f"calibrating on {config.n} processes ({len(ops)} timed ops)...")
    # The run's messages are shown only when it fails.
    errors = io.StringIO()
    inner = RunConfig(
        n=config.n,
        program=program,
        collectives="off",
        trace=trace_path,
        timeout=config.timeout,
        seed=0,
        hosts=config.hosts,
        hostfile=config.hostfile,
        launcher=config.launcher,
        emulated_cluster=config.emulated_cluster,
        keep=config.keep,
        err=errors,
    )
    try:
        status = launch.run(inner, tmp).status
    except RunError as e:
        config.err.write(errors.getvalue())
        fail(f"--calibrate: the microbenchmarks failed: {e.message}", e.returncode)
    if status != 0:
        config.err.write(errors.getvalue())
        fail("--calibrate: the microbenchmarks failed", status)
    events = tracing.intervals(tracing.read(trace_path))
    intervals = _intervals(events, ops)
    missing = [line for line in ops if not any(l == line for l, _ in intervals)]
    if missing:
        fail(f"--calibrate: the trace has no event of line {missing[0]}")
    ranks = sorted({r for _, r in intervals})
    by = {}
    for line, (kind, group, amount, rep) in ops.items():
        if rep == 0:
            continue  # warm-up
        mine = {r: intervals[(line, r)] for r in ranks if (line, r) in intervals}
        if _is_compute(kind):
            # The slower process's: a step takes as long as its slowest
            # rank (on this 2-core machine the ranks' rates differ by up
            # to 30%).
            t = max(end - begin for begin, end in mine.values())
        else:
            t = collective_time(kind, group, mine)
        by.setdefault((kind, group, amount), []).append(t)
    model = {
        "dist-cost-model": 1,
        "measured-on": {
            "processes": config.n,
            "how": "dist-run --calibrate",
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "host": os.uname().nodename,
            "hosts": (
                config.hosts
                or config.hostfile
                or config.launcher
                or ("emulated cluster" if config.on_emulated_cluster else "local")
            ),
            "matmul-m-k-n": list(CALIBRATE_MATMUL),
            "memory-stream-elements": CALIBRATE_STREAM,
            "repetitions": CALIBRATE_REPS,
            "points": [],
        },
        "matmul-tflops": {},
        **{kind: [] for kind in CALIBRATE_COLLECTIVES},
    }
    for (kind, group, amount), times in sorted(by.items()):
        median = statistics.median(times)
        model["measured-on"]["points"].append(
            {
                "op": kind,
                "group-size": group,
                ("flops" if kind.startswith("matmul") else "bytes"): amount,
                "median-us": round(median, 3),
            }
        )
        if kind.startswith("matmul"):
            model["matmul-tflops"][kind] = amount / (median * 1e-6) / 1e12
        elif kind == MEMORY:
            model["memory-gbps"] = amount / (median * 1e-6) / 1e9
    for kind in CALIBRATE_COLLECTIVES:
        for group in sorted({g for k, g, _ in by if k == kind}):
            points = sorted(
                (b, statistics.median(ts))
                for (k, g, b), ts in by.items()
                if k == kind and g == group
            )
            latency, bandwidth = fit_link(points)
            model[kind].append(
                {"group-size": group, "latency-us": round(latency, 3), "bandwidth-gbps": bandwidth}
            )
    try:
        with open(output, "w") as f:
            json.dump(model, f, indent=1)
            f.write("\n")
    except OSError as e:
        fail(f"--calibrate {output}: {e.strerror}")
    rates = ", ".join(f"{k} {v * 1e3:.3g} GFLOP/s" for k, v in model["matmul-tflops"].items())
    config.say(
        f"cost model of {config.n} processes written to {output}: {rates}, "
        f"memory {model['memory-gbps']:.3g} GB/s"
    )
    for kind in CALIBRATE_COLLECTIVES:
        for link in model[kind]:
            config.say(
                f"  {kind} in groups of {link['group-size']}: "
                f"{link['latency-us']:.1f} us + bytes / "
                f"{link['bandwidth-gbps']:.3g} GB/s"
            )
    return model
