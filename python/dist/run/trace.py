"""The run trace: the one definition of the format that dist-run --trace
writes, the runtime's per-rank timelines it is merged from, and the readers
(dist.run.timeline, dist-run --calibrate, --dist-overlap-report's
measured-trace=FILE) expect. docs/running.md describes it for users.

A trace is a Chrome trace (Perfetto, chrome://tracing) object:

  {"dist-trace": VERSION, "displayTimeUnit": "ms", "traceEvents": [...]}

with, per process (`pid` = its world rank):
- metadata ("ph": "M"): "process_name" ("rank R"; its args may carry a
  one-line "summary"), a "thread_name" per lane ("compute stream",
  "dp stream", "dp stream (2)", ...: lane_name, added by the merge), and
  "dist_collectives" whose args.count is how many collectives the rank
  entered (a check that every one of them was timed);
- intervals ("ph": "X", `ts` and `dur` in microseconds, the run's first
  interval at 0) of the categories below, `tid` the lane: 0 is the compute
  stream, STREAM * 100 + k the k-th lane of a stream (DistStream numbers:
  1 mp, 2 dp, 3 sharding) where asynchronous collectives are in flight.
An interval of an op has its location as fields: args.file, args.line and
args.col (the op's FileLineColLoc; absent where it has none), and `name`
says what it is ("FILE:LINE:COL: dist.allreduce sum of 32 x f32 ...").
The object may have a "title".

--dist-overlap-report's trace-file writes its estimate in this format too:
a process per function (named "@NAME", its figures as the summary, a
"function" interval over its makespan). One drawer draws either: the C++
renderTraceSvg (lib/Support/TraceSvg.cpp), behind dist.run.timeline and the
report's svg-file.
"""
import json
import os

from .. import _ods
from .errors import fail

VERSION = 1

# The interval categories (`cat`).
COMPUTE = "compute"  # the compute stream between collectives
COLLECTIVE = "collective"  # a blocking collective, or one in flight on a stream
ISSUE = "issue"  # the start of an asynchronous collective
WAIT = "wait"  # the wait for one
FUNCTION = "function"  # a call of a function with a body
CATEGORIES = (COMPUTE, COLLECTIVE, ISSUE, WAIT, FUNCTION)

# The lanes of a stream: STREAM * LANES_PER_STREAM + k.
LANES_PER_STREAM = 100
# The streams' names by number: the dialect's StreamKind (from its ODS
# definitions), whose values the runtime's DistStream numbers are.
STREAMS = tuple(sorted(_ods.ENUMS["StreamKind"], key=_ods.ENUMS["StreamKind"].get))


def stream_of(tid):
    """The stream name of lane `tid`."""
    index = tid // LANES_PER_STREAM
    return STREAMS[index] if 0 <= index < len(STREAMS) else f"stream {index}"


def lane_name(tid):
    """The name of lane `tid`: "compute stream", "dp stream", "dp stream (2)"."""
    k = tid % LANES_PER_STREAM
    return f"{stream_of(tid)} stream" + (f" ({k + 1})" if k else "")


def intervals(trace):
    """The timed events of `trace` (a dict as read())."""
    return [e for e in trace["traceEvents"] if e.get("ph") == "X"]


def read(path):
    """The trace in file `path`, checked to be one this version writes."""
    try:
        with open(path) as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read the trace {path}: {e}")
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        fail(f"{path} is not a dist-run trace: no 'traceEvents' array")
    version = trace.get("dist-trace", VERSION)
    if version != VERSION:
        fail(f"{path}: trace version {version}; this dist reads version {VERSION}")
    return trace


def merge(config, events_dir):
    """Merges the ranks' timelines in `events_dir` into the trace
    config.trace, its clock starting at the run's first interval."""
    events = []
    for rank in range(config.n):
        path = os.path.join(events_dir, f"rank.{rank}.json")
        if not os.path.exists(path):
            fail(
                f"--trace: rank {rank} wrote no timeline (an executable needs "
                "dist-compile --trace)"
            )
        with open(path) as f:
            mine = json.load(f)
        counted = sum(e["args"]["count"] for e in mine if e.get("name") == "dist_collectives")
        timed = sum(1 for e in mine if e.get("cat") == COLLECTIVE)
        if counted != timed:
            fail(
                f"--trace: rank {rank} ran {counted} collectives but timed {timed}: "
                "the program was not instrumented (an executable needs dist-compile --trace)"
            )
        events += mine
        lanes = sorted({e["tid"] for e in mine if e.get("ph") == "X"} | {0})
        events += [
            {
                "ph": "M",
                "name": "thread_name",
                "pid": rank,
                "tid": tid,
                "args": {"name": lane_name(tid)},
            }
            for tid in lanes
        ]
    timed = [e for e in events if e.get("ph") == "X"]
    start = min((e["ts"] for e in timed), default=0.0)
    for e in timed:
        e["ts"] = round(e["ts"] - start, 3)
    try:
        with open(config.trace, "w") as f:
            json.dump(
                {"dist-trace": VERSION, "displayTimeUnit": "ms", "traceEvents": events}, f, indent=0
            )
    except OSError as e:
        fail(f"--trace {config.trace}: {e.strerror}")
    config.say(f"trace of {config.n} processes written to {config.trace}")
