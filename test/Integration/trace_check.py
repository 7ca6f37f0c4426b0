#!/usr/bin/env python3
"""Traced runs (dist-run --trace) open as valid Chrome traces.

  trace_check.py

Runs the MLP step after --dist-auto-parallel on 2 and 4 processes and the
GPT block on its [2, 4] mesh (8 processes) with a trace, JIT and native,
and checks each trace as Perfetto would read it: every rank is a named
process; every traced collective is there (the runtime's own count); on
every thread intervals are disjoint or nested; each asynchronous
collective on a stream lane is issued and waited for on the compute stream
exactly when its interval begins and ends; every thread is named; the
trace says its format's version, and every interval of an op (collective,
issue, wait) carries the op's location as fields, the same the name begins
with.
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python", "examples"))
import dist  # noqa: E402
import cases  # noqa: E402
import gpt_block  # noqa: E402

EPS = 0.01  # microseconds: the printed precision of ts/dur


def location_problems(e):
    """An op's interval must carry its location as args.file/line/col, the
    same its name begins with ("FILE:LINE:COL: ...", after "issue "/"wait ")."""
    if e["cat"] not in ("collective", "issue", "wait"):
        return []
    site = e["name"].split(" ", 1)[1] if e["cat"] in ("issue", "wait") else e["name"]
    args = e.get("args", {})
    where = f"{args.get('file')}:{args.get('line')}:{args.get('col')}: "
    if not site.startswith(where) or not isinstance(args.get("line"), int):
        return [f"{e['name']}: location fields {args} do not match the name"]
    return []


def problems(trace, procs):
    found = []
    if trace.get("dist-trace") != 1:
        found.append(f"trace version {trace.get('dist-trace')}, expected 1")
    events = trace["traceEvents"]
    meta = [e for e in events if e["ph"] == "M"]
    timed = [e for e in events if e["ph"] == "X"]
    names = {e["pid"] for e in meta if e["name"] == "process_name"}
    if names != set(range(procs)):
        found.append(f"processes {sorted(names)}, expected ranks 0..{procs - 1}")
    threads = {(e["pid"], e["tid"]) for e in meta if e["name"] == "thread_name"}
    for rank in range(procs):
        mine = [e for e in timed if e["pid"] == rank]
        count = [
            e["args"]["count"] for e in meta if e["pid"] == rank and e["name"] == "dist_collectives"
        ]
        collectives = [e for e in mine if e["cat"] == "collective"]
        if not count or count[0] != len(collectives) or not collectives:
            found.append(
                f"rank {rank}: {len(collectives)} collectives in the trace, "
                f"the runtime counted {count}"
            )
        if not any(e["cat"] == "function" and e["tid"] == 0 for e in mine):
            found.append(f"rank {rank}: no function call on the compute stream")
        for e in mine:
            found += location_problems(e)
        for tid in {e["tid"] for e in mine}:
            if (rank, tid) not in threads:
                found.append(f"rank {rank}: thread {tid} has no name")
            # Parents first: a function's call and the compute it starts
            # with begin together.
            lane = sorted((e for e in mine if e["tid"] == tid), key=lambda e: (e["ts"], -e["dur"]))
            open_intervals = []
            for b in lane:
                while (
                    open_intervals
                    and open_intervals[-1]["ts"] + open_intervals[-1]["dur"] <= b["ts"] + EPS
                ):
                    open_intervals.pop()
                if open_intervals:
                    a = open_intervals[-1]
                    if b["ts"] + b["dur"] > a["ts"] + a["dur"] + EPS:
                        found.append(
                            f"rank {rank} thread {tid}: {a['name']} and "
                            f"{b['name']} overlap without nesting"
                        )
                open_intervals.append(b)
        for c in collectives:
            if c["tid"] == 0:
                continue
            issue = [
                e
                for e in mine
                if e["tid"] == 0
                and e["name"] == "issue " + c["name"]
                and abs(e["ts"] - c["ts"]) <= EPS
            ]
            wait = [
                e
                for e in mine
                if e["tid"] == 0
                and e["name"] == "wait " + c["name"]
                and abs(e["ts"] + e["dur"] - c["ts"] - c["dur"]) <= EPS
            ]
            if len(issue) != 1 or len(wait) != 1:
                found.append(
                    f"rank {rank}: {c['name']} on thread {c['tid']} has "
                    f"{len(issue)} issues and {len(wait)} waits that bound it"
                )
    return found


def check(name, module, procs, flags, native):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        dist.run_on_mpi(module, procs, pass_flags=flags, native=native, trace=path, seed=1)
        with open(path) as f:
            trace = json.load(f)
    found = problems(trace, procs)
    streams = sorted(
        {e["tid"] // 100 for e in trace["traceEvents"] if e["ph"] == "X" and e["tid"] >= 100}
    )
    form = "native" if native else "JIT"
    for p in found:
        print(f"MISMATCH {name}: {p}")
    print(
        f"{'FAILED' if found else 'ok'}: {name} ({form}, {procs} processes) is a valid "
        f"trace, async streams {streams}"
    )
    return not found


def checker_finds_broken_traces():
    """The checker itself: a missing rank, a missing collective, partial
    overlap and an unbounded async interval are all reported."""
    X = lambda name, cat, ts, dur, tid=0: {
        "name": name,
        "cat": cat,
        "ph": "X",
        "ts": ts,
        "dur": dur,
        "pid": 0,
        "tid": tid,
    }
    M = lambda kind, tid=0, **args: {"ph": "M", "name": kind, "pid": 0, "tid": tid, "args": args}
    named = [M("process_name", name="rank 0"), M("thread_name", name="compute")]
    bad = {
        "traceEvents": named
        + [
            M("dist_collectives", count=3),
            X("compute", "compute", 0, 10),
            X("c", "collective", 5, 10),
            X("a", "collective", 20, 5, tid=100),
        ]
    }
    found = problems(bad, 2)
    expected = [
        "processes [0]",
        "2 collectives in the trace",
        "overlap without nesting",
        "thread 100 has no name",
        "0 issues and 0 waits",
        "no function call",
        "trace version None",
        "c: location fields {} do not match",
    ]
    missing = [e for e in expected if not any(e in f for f in found)]
    # A call and the compute it starts with begin together: that nests.
    located = dict(
        X("f.mlir:3:7: dist.allreduce", "collective", 5, 10),
        args={"file": "f.mlir", "line": 3, "col": 7},
    )
    nested = {
        "dist-trace": 1,
        "traceEvents": named
        + [
            M("dist_collectives", count=1),
            X("compute", "compute", 0, 5),
            X("main", "function", 0, 20),
            located,
            X("compute", "compute", 15, 5),
        ],
    }
    if problems(nested, 1):
        missing.append(f"a well-nested trace is reported: {problems(nested, 1)}")
    print(
        f"{'FAILED' if missing else 'ok'}: the checker reports broken traces"
        f"{' (missed: ' + str(missing) + ')' if missing else ''}"
    )
    return not missing


def main():
    ctx = dist.Context()
    ok = checker_finds_broken_traces()
    for procs in (2, 4):
        _, spmd = cases.mlp(ctx, procs, False)
        for native in (False, True):
            ok &= check("mlp step", spmd, procs, "--dist-auto-parallel", native)
    ok &= check(
        "gpt block [2, 4]", gpt_block.build_run(ctx, 2, 4), 8, "--dist-auto-parallel", False
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
