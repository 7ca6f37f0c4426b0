"""Choosing a plan: every candidate layout of a program priced by the cost
model, the fastest that fits in memory chosen.

A model says what can be chosen by listing its candidates (`Candidate`): a
name, the mesh, the choices that make it, the `--dist-auto-parallel`
options it needs and a function that builds its annotated program.
`search` completes each one (`--dist-auto-parallel`), prices it with
`--dist-overlap-report` (the cost-model constants, or a `dist-run
--calibrate` file) and ranks them: the plans that fit in the memory limit
by estimated step, then by memory, then by name, so that the ranking does
not depend on the order of the candidates. `table` prints the top plans
and why each lost to the first. examples/gpt_layer.py's `--plan` is the
GPT layer's space, examples/gpt_model.py's the whole model's.

A plan's memory per process is its arguments (parameters, data, optimizer
states) and the peak of the tensors its step holds at once (the overlap
report's `peak_live_bytes`, gradients and updated parameters included).
"""

import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Callable, Dict, Tuple

MIB = 1024.0 * 1024.0
# A mesh of more processes than this is a typo, as dist.mesh says.
MAX_DEVICES = 1 << 20


class PlanError(ValueError):
    """A search that cannot run or finds nothing: bad limits, no candidate,
    no candidate that fits."""


@dataclass(frozen=True)
class Candidate:
    """One way to run the program: `build()` returns its annotated text,
    which `--dist-auto-parallel{pipeline}` completes."""

    name: str
    mesh: Tuple[int, ...]
    choices: Tuple[Tuple[str, str], ...]
    build: Callable[[], str] = field(compare=False, repr=False)
    pipeline: str = ""
    # What the model made the candidate from (e.g. the GPT layer's
    # Layout), for a caller that builds more than the step around it.
    spec: object = field(default=None, compare=False, repr=False)
    # The function whose call is the step (a program may also have, say, a
    # @startup that runs once); empty: the program's only function.
    function: str = ""

    def command(self, path="PROGRAM.mlir"):
        """The dist-opt command that completes the emitted program."""
        flag = (
            f"--dist-auto-parallel='{self.pipeline}'" if self.pipeline else "--dist-auto-parallel"
        )
        return f"dist-opt {path} {flag}"


@dataclass
class Plan:
    """A priced candidate. Times are microseconds, memory bytes per process."""

    candidate: Candidate
    step_us: float
    compute_us: float
    comm_us: float
    exposed_us: float
    argument_bytes: int
    peak_live_bytes: int
    collectives: Dict[str, Tuple[int, int]]
    fits: bool = True

    @property
    def memory_bytes(self):
        return self.argument_bytes + self.peak_live_bytes

    def key(self):
        """The ranking: what fits first, then the step, the memory, the
        name. Times are compared at a nanosecond so that a float's last
        bits do not order equal plans."""
        return (not self.fits, round(self.step_us, 3), self.memory_bytes, self.candidate.name)


def check_devices(devices):
    """`devices` as a positive int, or a PlanError saying why not."""
    if isinstance(devices, bool) or not isinstance(devices, int):
        raise PlanError(f"the device count must be an integer, not {devices!r}")
    if devices < 1:
        raise PlanError(f"the device count must be positive, not {devices}")
    if devices > MAX_DEVICES:
        raise PlanError(f"the device count {devices} exceeds {MAX_DEVICES}")
    return devices


def check_memory_limit(limit_bytes):
    """`limit_bytes` as a positive number (None: no limit, infinity), or a
    PlanError."""
    if limit_bytes is None:
        return math.inf
    try:
        value = float(limit_bytes)
    except (TypeError, ValueError):
        raise PlanError(f"the memory limit must be a number, not {limit_bytes!r}") from None
    if math.isnan(value) or value <= 0:
        raise PlanError(f"the memory limit must be positive, not {limit_bytes}")
    return value


def limit_text(limit_bytes):
    """A memory limit in words."""
    return (
        "no memory limit" if math.isinf(limit_bytes) else f"{limit_bytes / MIB:.2f} MiB per device"
    )


def factorizations(devices, axes):
    """Every tuple of `axes` positive sizes whose product is `devices`, in
    lexicographic order."""
    check_devices(devices)
    if axes == 1:
        return [(devices,)]
    out = []
    for first in range(1, devices + 1):
        if devices % first == 0:
            out += [(first,) + rest for rest in factorizations(devices // first, axes - 1)]
    return out


def _step_function(candidate, functions):
    """The report's entry of `candidate`'s step function."""
    if candidate.function:
        named = [f for f in functions if f["name"] == candidate.function]
        if len(named) != 1:
            raise PlanError(f"{candidate.name}: the program has no function @{candidate.function}")
        return named[0]
    if len(functions) != 1:
        raise PlanError(
            f"{candidate.name}: the program has {len(functions)} functions; name the step's"
        )
    return functions[0]


def price(candidate, **cost):
    """`candidate` completed and priced; `cost` are the overlap report's
    options (peak_tflops=..., cost_model=FILE)."""
    import dist
    from dist._core import _run_with_report

    text = candidate.build()
    if "dist.param" not in text:
        # Nothing to distribute but data: every plan is data parallelism.
        raise PlanError(f"{candidate.name}: the program has no parameters (no dist.param argument)")
    pipeline = f"dist-auto-parallel{{{candidate.pipeline}}}"
    try:
        report = _run_with_report(dist.Module.parse(text), pipeline, cost)
    except dist.DiagnosticError as e:
        # A candidate the compiler refuses is the model's error, not a plan
        # to leave out quietly.
        errors = [d for d in e.diagnostics if d.severity == "error"] or e.diagnostics
        first = errors[0].message if errors else str(e)
        raise PlanError(f"{candidate.name}: the pipeline refused the program: {first}") from e
    f = _step_function(candidate, report["functions"])
    return Plan(
        candidate=candidate,
        step_us=f["makespan_us"],
        compute_us=f["compute_us"],
        comm_us=f["comm_us"],
        exposed_us=f["exposed_comm_us"],
        argument_bytes=f["argument_bytes"],
        peak_live_bytes=f["peak_live_bytes"],
        collectives={k: (v["count"], v["bytes"]) for k, v in sorted(f["collectives"].items())},
    )


def search(candidates, memory_limit_bytes, **cost):
    """Every candidate priced and ranked (`Plan.key`); a PlanError when
    there is none or none fits, naming the smallest."""
    limit = check_memory_limit(memory_limit_bytes)
    if not candidates:
        raise PlanError("no candidate plan: nothing divides the program's sizes")
    names = [c.name for c in candidates]
    if len(set(names)) != len(names):
        raise PlanError("two candidates have one name")
    plans = []
    for c in candidates:
        plan = price(c, **cost)
        plan.fits = plan.memory_bytes <= limit
        plans.append(plan)
    plans.sort(key=Plan.key)
    if not plans[0].fits:
        smallest = min(plans, key=lambda p: (p.memory_bytes, p.candidate.name))
        raise PlanError(
            f"no plan fits in {limit / MIB:.2f} MiB per device: the smallest, "
            f"{smallest.candidate.name}, needs {smallest.memory_bytes / MIB:.2f} MiB"
        )
    return plans


def why_lost(best, plan, limit_bytes):
    """Why `plan` ranks below `best`, in words."""
    if not plan.fits:
        over = plan.memory_bytes - limit_bytes
        return f"needs {plan.memory_bytes / MIB:.2f} MiB, {over / MIB:.2f} MiB over the limit"
    d_step = plan.step_us - best.step_us
    if round(d_step, 3) == 0:
        return f"same step, {(plan.memory_bytes - best.memory_bytes) / MIB:+.2f} MiB"
    parts = []
    for what, mine, theirs in (
        ("compute", plan.compute_us, best.compute_us),
        ("exposed communication", plan.exposed_us, best.exposed_us),
    ):
        if round(mine - theirs, 1):
            parts.append(f"{what} {mine - theirs:+.1f} us")
    pct = 100.0 * d_step / best.step_us if best.step_us else math.inf
    return f"step {pct:+.1f}%" + (f": {', '.join(parts)}" if parts else "")


def table(plans, memory_limit_bytes, top=10):
    """The `top` plans as a text table, the chosen one first, and a line
    for the ones left out."""
    limit = check_memory_limit(memory_limit_bytes)
    best = plans[0]
    rows = [("#", "plan", "step us", "compute us", "exposed us", "memory MiB", "why not chosen")]
    for i, p in enumerate(plans[:top]):
        rows.append(
            (
                str(i + 1),
                p.candidate.name,
                f"{p.step_us:.1f}",
                f"{p.compute_us:.1f}",
                f"{p.exposed_us:.1f}",
                f"{p.memory_bytes / MIB:.2f}",
                "chosen" if i == 0 else why_lost(best, p, limit),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    if len(plans) > top:
        fits = sum(p.fits for p in plans[top:])
        lines.append(f"... {len(plans) - top} more ({fits} of them fit)")
    return "\n".join(lines) + "\n"


def summary(plans, memory_limit_bytes, devices):
    """One line: how many plans, how many fit, which was chosen."""
    fits = sum(p.fits for p in plans)
    best = plans[0]
    return (
        f"{len(plans)} plans for {devices} devices, {fits} within "
        f"{limit_text(check_memory_limit(memory_limit_bytes))}; chosen: "
        f"{best.candidate.name}, estimated step {best.step_us:.1f} us"
    )


# The ops of a program as written that the cost model prices as compute:
# products by their flops, and, with a memory bandwidth, the memory-bound
# ops by their traffic (CostModel::memoryTraffic).
_PRICED_OP = re.compile(
    r"= (dist\.matmul(?:_grad)?|linalg\.[a-z_]+|dist\.(?:c_)?embedding(?:_grad)?|"
    r"dist\.(?:dropout|scale|sgd|adamw|check_finite_and_unscale|pack|unpack)) "
)


def op_costs(candidate, **cost):
    """What the step of `candidate` spends, op by op, as the estimate
    schedules it: {key: row}, a row per priced compute op of the program
    as written (dist.matmul, dist.matmul_grad, and with a memory bandwidth
    the memory-bound ops; key: its ordinal k among those ops, so that the
    k-th op of two plans of one model meet; "nth": which op of its name it
    is, as explain labels it), with its line, its time
    (the products a pass made of it included) and the communication
    exposed after it (blocking collectives and waits on the compute stream)
    until the next. Key -1, "start", holds what is exposed before the first.
    The compute and exposed times of the rows add up to the estimated
    step."""
    import tempfile

    import dist
    from dist._core import _run_with_report

    text = candidate.build()
    ordinal, nth = {}, {}
    for n, line in enumerate(text.splitlines(), 1):
        m = _PRICED_OP.search(line)
        if m:
            nth[m.group(1)] = nth.get(m.group(1), 0) + 1
            ordinal[n] = (len(ordinal), m.group(1), nth[m.group(1)])
    module = dist.Module.parse(text)
    pipeline = f"dist-auto-parallel{{{candidate.pipeline}}}"
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        report = _run_with_report(module, pipeline, dict(cost, trace_file=trace))
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
    # The trace has a process per function, in the report's order.
    pid = report["functions"].index(_step_function(candidate, report["functions"]))
    rows = {-1: dict(op="start", line="", compute_us=0.0, exposed_us=0.0)}
    current = -1
    timed = [e for e in events if e.get("ph") == "X" and e.get("tid") == 0 and e["pid"] == pid]
    for e in sorted(timed, key=lambda e: e["ts"]):
        if e["cat"] == "compute":
            line = e.get("args", {}).get("line")
            k, name, count = ordinal.get(line, (None, e["name"], None))
            if k is None:  # not an op of the program as written
                k = len(ordinal) + len(rows)
            row = rows.setdefault(
                k,
                dict(op=name, nth=count, line=str(line or "?"), compute_us=0.0, exposed_us=0.0),
            )
            row["compute_us"] += e["dur"]
            current = k
        elif e["cat"] in ("collective", "wait"):
            rows[current]["exposed_us"] += e["dur"]
    return rows


def explain(chosen, other, **cost):
    """Where `other` (a Candidate) spends more or less than `chosen`, op by
    op (`op_costs`: the k-th compute op of one program against the k-th of
    the other), each with its compute and the communication exposed after
    it, and the difference. Rows that differ by less than 0.05 us are left
    out; the totals are the estimated steps."""
    mine, theirs = op_costs(chosen, **cost), op_costs(other, **cost)

    def cost_of(r):
        return r["compute_us"] + r["exposed_us"] if r else 0.0

    def cell(r):
        if not r:
            return "-"
        exposed = f" + {r['exposed_us']:.1f} exposed" if r["exposed_us"] else ""
        return f"{r['compute_us']:.1f}{exposed}"

    rows = [("op", "line", "chosen us", "other us", "difference")]
    for k in sorted(set(mine) | set(theirs)):
        a, b = mine.get(k), theirs.get(k)
        d = cost_of(b) - cost_of(a)
        if abs(d) < 0.05:
            continue
        # "dist.matmul #8": the program's 8th dist.matmul as written.
        nth = (a or b).get("nth")
        label = (a or b)["op"] + (f" #{nth}" if nth else "")
        line = f"{a['line'] if a else '-'}/{b['line'] if b else '-'}" if k >= 0 else ""
        rows.append((label, line, cell(a), cell(b), f"{d:+.1f}"))
    total_a = sum(cost_of(r) for r in mine.values())
    total_b = sum(cost_of(r) for r in theirs.values())
    rows.append(("step", "", f"{total_a:.1f}", f"{total_b:.1f}", f"{total_b - total_a:+.1f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    head = f"{other.name} against the chosen {chosen.name}, op by op (line: chosen/other program):"
    body = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return head + "\n" + "\n".join(body) + "\n"


def choices_text(candidate):
    """`key=value` pairs of a candidate's choices, in order."""
    return " ".join(f"{k}={v}" for k, v in candidate.choices)


__all__ = [
    "Candidate",
    "Plan",
    "PlanError",
    "check_devices",
    "check_memory_limit",
    "limit_text",
    "factorizations",
    "price",
    "search",
    "table",
    "summary",
    "why_lost",
    "choices_text",
    "op_costs",
    "explain",
]
