"""dist.run: lowering, building, launching, tracing and calibrating dist
programs on MPI, in pure Python. dist-run and dist-compile are its command
lines (dist.run.cli); the functions here are the same runs from Python:

    ranks = dist.run.run_on_mpi(module, 2)      # each rank's printed arrays
    exe = dist.run.build_native(module, 4, "step")
    model = dist.run.calibrate(2, "costs.json")

Modules: config (RunConfig, what a run is asked to do), launch (starting
and supervising the processes), native (lowering and native executables),
trace (the run trace format), calibration (the cost-model microbenchmarks),
timeline (the SVG drawing of a trace), cli (the command lines)."""
import io
import os
import re
import tempfile

from . import calibration as _calibration, launch as _launch
from .config import RunConfig
from .errors import TIMEOUT_STATUS, RunError

__all__ = ["RunConfig", "RunError", "build_native", "calibrate", "parse_rank_output", "run_on_mpi"]

_MEMREF = re.compile(
    r"Unranked Memref base@ = \S+ rank = (\d+) offset = \d+ "
    r"sizes = \[([^\]]*)\] strides = \[[^\]]*\] data =\s*"
)
_NUMBER = re.compile(r"-?(?:inf|nan|\d+(?:\.\d*)?(?:e[+-]?\d+)?)")


def parse_rank_output(text):
    """The arrays one rank printed (FunctionBuilder.print), in order, with
    their shapes, as numpy arrays: for executables another launcher
    started."""
    import numpy as np

    arrays = []
    matches = list(_MEMREF.finditer(text))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        shape = [int(s) for s in m.group(2).split(",") if s.strip()]
        values = [float(v) for v in _NUMBER.findall(text[m.end() : end])]
        arrays.append(np.array(values, dtype=np.float32).reshape(shape))
    return arrays


def _text(module):
    return module if isinstance(module, str) else str(module)


def _in_process(config, body):
    """Runs body(tmp) with config's messages captured; a failure raises
    RunError carrying them."""
    errors = io.StringIO()
    config.err = errors
    with tempfile.TemporaryDirectory(prefix="dist-run-") as tmp:
        try:
            result = body(tmp)
        except RunError as e:
            raise RunError(e.message, e.returncode, errors.getvalue()) from None
    status = result.status
    if status == TIMEOUT_STATUS:
        raise RunError(f"timed out after {config.timeout:g} s", status, errors.getvalue())
    if status != 0:
        raise RunError(f"the run exited {status}", status, errors.getvalue())
    return result


def _write_program(config, tmp, text):
    """Writes the program `text` into `tmp` as config's program."""
    config.program = os.path.join(tmp, "program.mlir")
    with open(config.program, "w") as f:
        f.write(text)


def run_on_mpi(
    module,
    procs,
    entry="main",
    pass_flags="",
    timeout=300,
    seed=None,
    native=False,
    hosts=None,
    trace=None,
    check_collectives=True,
    matmul="blas",
    verify=True,
):
    """Lowers `module` (a dist.Module or IR text), runs it on `procs` MPICH
    processes and returns, for each rank, the list of arrays its program
    printed (FunctionBuilder.print), as numpy arrays.

    `pass_flags` are dist-opt flags applied before lowering, e.g.
    "--dist-auto-parallel". `timeout` (seconds) bounds the run: every
    process is then stopped. `seed` is the run seed of unseeded random ops
    (a random one when None). With `native`, the program is built into a
    native executable (dist-compile) and that is run instead of the JIT.
    `hosts` ("a,b" or a list) are the hosts mpirun starts the processes on.
    With `trace` (a path), the run's Chrome trace is written there. Setting
    `check_collectives=False` turns off the run-time check that a group's
    processes start the same collective (for timing). `matmul` is "blas"
    (OpenBLAS computes f32/f64 matrix products) or "loops" (compiled loops,
    as without BLAS). `verify=False` lowers without checking the program's
    distributions first (to run what the check rejects). Raises RunError
    when lowering, building or running fails or times out."""
    text = _text(module)
    if hosts and not isinstance(hosts, str):
        hosts = ",".join(hosts)
    trace = os.path.abspath(trace) if trace else None

    def body(tmp):
        _write_program(config, tmp, text)
        if native:
            exe = os.path.join(tmp, "program")
            config.build, config.trace = exe, "" if trace else None
            _launch.run(config, tmp)
            config.program, config.build, config.trace = exe, None, trace
            config.pass_flags = ""
        return _launch.run(config, tmp)

    config = RunConfig(n=procs, entry=entry, pass_flags=pass_flags, timeout=timeout, seed=seed)
    config.hosts, config.trace = hosts, trace
    config.collectives = "check" if check_collectives else "off"
    config.matmul = matmul
    config.verify = verify
    result = _in_process(config, body)
    return [parse_rank_output(output) for output in result.outputs]


def build_native(
    module,
    procs,
    output,
    entry="main",
    pass_flags="",
    timeout=300,
    traced=False,
    matmul="blas",
    verify=True,
):
    """Builds `module` (a dist.Module or IR text) into the native MPI
    executable `output` for `procs` processes (dist-compile): it needs only
    MPICH and libc where it runs; `traced` instruments it for dist-run
    --trace; `matmul` and `verify` are as for run_on_mpi. Returns the executable's path;
    raises RunError when lowering or linking fails."""
    text = _text(module)
    output = os.path.abspath(output)
    config = RunConfig(n=procs, entry=entry, pass_flags=pass_flags, timeout=timeout, build=output)
    config.trace = "" if traced else None
    config.matmul = matmul
    config.verify = verify

    def body(tmp):
        _write_program(config, tmp, text)
        return _launch.run(config, tmp)

    _in_process(config, body)
    return output


def calibrate(procs, output, timeout=300):
    """Measures this machine's collectives and lowered matmuls on `procs`
    processes (dist-run --calibrate) and writes the cost-model file `output`
    that the estimating passes read (cost_model=... of overlap_report,
    cost-model=FILE of the passes). Returns the file's contents as a dict."""
    output = os.path.abspath(output)
    config = RunConfig(n=procs, timeout=timeout)
    model = {}

    def body(tmp):
        model.update(_calibration.calibrate(config, output, tmp))
        return _launch.RunResult(0, [])

    _in_process(config, body)
    return model
