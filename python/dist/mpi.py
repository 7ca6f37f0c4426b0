"""Running a dist program on MPI processes and reading its results back."""

import json
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))


class RunError(RuntimeError):
    """dist-run failed: `.returncode`, `.stderr`."""

    def __init__(self, message, returncode, stderr):
        super().__init__(f"{message}\n{stderr}")
        self.returncode = returncode
        self.stderr = stderr


def _find_dist_run():
    candidates = [
        os.environ.get("DIST_RUN"),
        # The build tree: build/python_packages/dist -> build/bin.
        os.path.join(_HERE, "..", "..", "bin", "dist-run"),
        # An install prefix: P/lib/python3.X/site-packages/dist -> P/bin.
        os.path.join(_HERE, "..", "..", "..", "..", "bin", "dist-run"),
        shutil.which("dist-run"),
    ]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    raise RunError("dist-run not found: build dist, or set DIST_RUN", 1, "")


_MEMREF = re.compile(r"Unranked Memref base@ = \S+ rank = (\d+) offset = \d+ "
                     r"sizes = \[([^\]]*)\] strides = \[[^\]]*\] data =\s*")
_NUMBER = re.compile(r"-?(?:inf|nan|\d+(?:\.\d*)?(?:e[+-]?\d+)?)")


def _parse_prints(text):
    """The arrays printMemrefF32 printed, in order, with their shapes."""
    arrays = []
    matches = list(_MEMREF.finditer(text))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        shape = [int(s) for s in m.group(2).split(",") if s.strip()]
        values = [float(v) for v in _NUMBER.findall(text[m.end():end])]
        arrays.append(np.array(values, dtype=np.float32).reshape(shape))
    return arrays


def run_on_mpi(module, procs, entry="main", pass_flags="", timeout=300,
               seed=None, native=False, hosts=None, trace=None,
               check_collectives=True):
    """Lowers `module` (a dist.Module or IR text) with dist-run, runs it on
    `procs` MPICH processes and returns, for each rank, the list of arrays
    its program printed (FunctionBuilder.print), as numpy arrays.

    `pass_flags` are dist-opt flags applied before lowering, e.g.
    "--dist-auto-parallel". `timeout` (seconds) bounds the run: dist-run
    then stops every process. `seed` is the run seed of unseeded random ops
    (dist-run picks one when None). With `native`, the program is built into
    a native executable (dist-compile) and that is run instead of the JIT.
    `hosts` ("a,b" or a list) are the hosts mpirun starts the processes on.
    With `trace` (a path), the run's Chrome trace is written there (dist-run
    --trace). `check_collectives=False` turns off the run-time check that a
    group's processes start the same collective (for timing). Raises
    RunError when lowering, building or running fails or times out.
    """
    text = module if isinstance(module, str) else str(module)
    dist_run = _find_dist_run()
    with tempfile.TemporaryDirectory() as tmp:
        if native:
            exe = build_native(text, procs, os.path.join(tmp, "program"), entry,
                               pass_flags, timeout, traced=bool(trace))
            cmd = [dist_run, "-n", str(procs), f"--timeout={timeout}", exe]
        else:
            path = os.path.join(tmp, "program.mlir")
            with open(path, "w") as f:
                f.write(text)
            cmd = [dist_run, path, "-n", str(procs), "--entry", entry,
                   f"--timeout={timeout}"]
            if pass_flags:
                cmd.append(f"--pass-flags={pass_flags}")
        if seed is not None:
            cmd.append(f"--seed={seed}")
        if hosts:
            cmd.append("--hosts=" + (hosts if isinstance(hosts, str) else ",".join(hosts)))
        if trace:
            cmd.append("--trace=" + os.path.abspath(trace))
        if not check_collectives:
            cmd.append("--collectives=off")
        out = _dist_run(cmd, timeout)
    sections = re.split(r"^== rank (\d+) ==$", out.stdout, flags=re.M)
    results = [None] * procs
    for rank, body in zip(sections[1::2], sections[2::2]):
        results[int(rank)] = _parse_prints(body)
    return results


def build_native(module, procs, output, entry="main", pass_flags="", timeout=300,
                 traced=False):
    """Builds `module` (a dist.Module or IR text) into the native MPI
    executable `output` for `procs` processes (dist-compile): it needs only
    MPICH and libc where it runs; `traced` instruments it for dist-run
    --trace. Returns the executable's path; raises
    RunError when lowering or linking fails."""
    text = module if isinstance(module, str) else str(module)
    output = os.path.abspath(output)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "program.mlir")
        with open(path, "w") as f:
            f.write(text)
        cmd = [_find_dist_run(), "--build", output, path, "-n", str(procs),
               "--entry", entry, f"--timeout={timeout}"]
        if pass_flags:
            cmd.append(f"--pass-flags={pass_flags}")
        if traced:
            cmd.append("--trace=" + os.path.join(tmp, "unused.json"))
        _dist_run(cmd, timeout)
    return output


def calibrate(procs, output, timeout=300):
    """Measures this machine's collectives and lowered matmuls on `procs`
    processes (dist-run --calibrate) and writes the cost-model file `output`
    that the estimating passes read (cost_model=... of overlap_report,
    cost-model=FILE of the passes). Returns the file's contents as a dict."""
    output = os.path.abspath(output)
    _dist_run([_find_dist_run(), "-n", str(procs), "--calibrate", output,
               f"--timeout={timeout}"], timeout)
    with open(output) as f:
        return json.load(f)


def parse_rank_output(text):
    """The arrays one rank printed (FunctionBuilder.print), from its output:
    for executables started by another launcher."""
    return _parse_prints(text)


def _dist_run(cmd, timeout):
    # dist-run enforces the timeout and cleans up after itself; this one is
    # a backstop for dist-run itself.
    try:
        out = subprocess.run(cmd, capture_output=True, text=True,
                             timeout=timeout + 60)
    except subprocess.TimeoutExpired as e:
        raise RunError(f"dist-run did not stop after {timeout} s", -1,
                       e.stderr or "") from None
    if out.returncode == 124:
        raise RunError(f"dist-run timed out after {timeout} s", 124,
                       out.stderr)
    if out.returncode != 0:
        raise RunError(f"dist-run exited {out.returncode}", out.returncode,
                       out.stderr)
    return out
