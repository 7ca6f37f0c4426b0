"""What one dist-run invocation is asked to do, as the command line or the
Python API says it."""
import dataclasses
import os
import sys
from typing import Optional, TextIO

MAX_PROCESSES = 1024


@dataclasses.dataclass
class RunConfig:
    """The settings of one lowering, build or run.

    `program` is a .mlir file or a native executable; `build` the executable
    to link instead of running; `trace` the Chrome trace to write (with
    `build`, "" instruments the executable without writing one);
    `collectives` is "check", "trace" or "off" (see dist-run --help);
    `verify` checks the program's distributions before lowering it;
    `matmul` is "blas" or "loops", how contractions are computed. `err`
    receives every message and the processes' stderr."""

    n: int
    program: Optional[str] = None
    entry: str = "main"
    pass_flags: str = ""
    keep: Optional[str] = None
    timeout: float = 120.0
    seed: Optional[int] = None
    collectives: str = "check"
    verify: bool = True
    matmul: str = "blas"
    hosts: Optional[str] = None
    hostfile: Optional[str] = None
    launcher: Optional[str] = None
    # Run the processes on the emulated cluster that is up (cluster.py).
    # None: DIST_RUN_CLUSTER=1 (scripts/emulated_cluster.py run sets it)
    # decides, unless hosts, a hostfile or a launcher are given.
    emulated_cluster: Optional[bool] = None
    trace: Optional[str] = None
    build: Optional[str] = None
    err: TextIO = dataclasses.field(default=sys.stderr, repr=False)
    # Where the ranks' output is printed, rank by rank under "== rank r =="
    # headers, as the run ends; None keeps it only in the RunResult.
    out: Optional[TextIO] = dataclasses.field(default=None, repr=False)

    @property
    def trace_events(self):
        """Whether the lowering records a timeline of events."""
        return self.trace is not None

    @property
    def on_emulated_cluster(self):
        """Whether the processes run on the emulated cluster."""
        if self.emulated_cluster is not None:
            return self.emulated_cluster
        explicit = self.hosts or self.hostfile or self.launcher
        return not explicit and os.environ.get("DIST_RUN_CLUSTER") == "1"

    @property
    def remote(self):
        """Whether the processes may run on other machines."""
        return bool(self.hosts or self.hostfile or self.launcher or self.on_emulated_cluster)

    def say(self, message):
        print(f"dist-run: {message}", file=self.err, flush=True)

    def stderr_sink(self, tmp, name):
        """Where a child's stderr goes: inherited when `err` is this
        process's stderr (so it appears as it is written), else a file of
        `tmp` that forward() copies into `err`."""
        if self.err is sys.stderr:
            return None
        return open(f"{tmp}/{name}", "w+")

    def forward(self, sink):
        if sink is not None:
            sink.seek(0)
            self.err.write(sink.read())
            sink.close()
