"""Starting a lowered program or an executable on N MPI processes and
supervising the run: a timeout, an interrupt or a failure stops every
process the run started, wherever MPICH's setsid put it."""
import dataclasses
import math
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import time
from typing import List

from . import cluster, native, paths, trace as tracing
from .config import MAX_PROCESSES
from .errors import TIMEOUT_STATUS, deferred_interrupts, fail


@dataclasses.dataclass
class RunResult:
    """A finished run: the launcher's exit status (as dist-run exits) and,
    rank by rank, what each process printed (empty under a --launcher, which
    prints the ranks' output itself)."""

    status: int
    outputs: List[str]


def _marked_processes(marker):
    """The processes whose environment carries `marker`: every rank and
    helper of this run."""
    found = []
    needle = marker.encode() + b"\0"
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read():
                    found.append(int(entry))
        except OSError:
            pass
    return found


def _stop(proc, marker):
    """Stops mpirun (which stops its ranks), then kills whatever is left."""
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            pass
    for attempt in range(50):
        left = _marked_processes(marker)
        if proc.poll() is None:
            left.append(proc.pid)
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _report_last_collectives(config, trace_dir, timed_out=False):
    """Where each rank was, from the runtime's trace files. None of them
    after a failure means the program has no collective; after a timeout
    that short, the ranks may not have started (the JIT compiles the
    program first): each rank is named all the same."""
    if not os.listdir(trace_dir):
        if timed_out:
            for rank in range(config.n):
                config.say(
                    f"rank {rank}: had entered no collective (still starting, "
                    "or in compute before its first collective: the JIT "
                    "compiles the program before it runs)"
                )
        return
    for rank in range(config.n):
        path = os.path.join(trace_dir, f"rank.{rank}")
        state = "had entered no collective"
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                state = f.read().strip() or "state unknown"
        config.say(f"rank {rank}: {state}")


def _launch_command(config, mpirun, tmp, program_command):
    """mpirun (or the launcher) starting `program_command` on n processes."""
    if config.launcher:
        try:
            launcher = shlex.split(config.launcher)
        except ValueError as e:
            fail(f"--launcher: {e}")
        if not launcher or not shutil.which(launcher[0]):
            fail(f"--launcher '{config.launcher}': no such command")
        return launcher + ["-n", str(config.n)] + program_command
    hosts = []
    if config.on_emulated_cluster:
        try:
            hosts = cluster.hydra_arguments(config.n)
        except cluster.ClusterError as e:
            fail(f"--emulated-cluster: {e}")
    if config.hosts:
        hosts = ["-hosts", config.hosts]
    if config.hostfile:
        if not os.path.isfile(config.hostfile):
            fail(f"--hostfile {config.hostfile}: no such file")
        hosts = ["-f", os.path.abspath(config.hostfile)]
    preload = []
    if os.environ.get("DIST_RUN_PRELOAD"):
        # A sanitizer build's runtime library needs the sanitizers' runtime
        # loaded first into mlir-runner, which is not instrumented.
        preload = [
            "-genv",
            "LD_PRELOAD",
            os.environ["DIST_RUN_PRELOAD"],
            "-genv",
            "ASAN_OPTIONS",
            "detect_leaks=0:allow_user_poisoning=false",
            # UCX's mmap patch cannot always reach its hook beside the
            # ASan runtime (see test/lit.cfg.py).
            "-genv",
            "UCX_MEM_MMAP_HOOK_MODE",
            "none",
        ]
    pattern = os.path.join(tmp, "out.%r")
    return (
        [mpirun, "-n", str(config.n), "-outfile-pattern", pattern]
        + hosts
        + preload
        + program_command
    )


def _check(config):
    """The checks the command line's parser makes, for a RunConfig made in
    Python, then what only a run can say."""
    if isinstance(config.n, bool) or not isinstance(config.n, int):
        fail(f"-n must be a number of processes, not {config.n!r}")
    if (
        isinstance(config.timeout, bool)
        or not isinstance(config.timeout, (int, float))
        or not math.isfinite(config.timeout)
        or config.timeout <= 0
    ):
        fail(f"--timeout {config.timeout!r} is not a positive number of seconds")
    if config.collectives not in ("check", "trace", "off"):
        fail(f"--collectives {config.collectives!r}: expected check, trace or off")
    if config.matmul not in ("blas", "loops"):
        fail(f"--matmul {config.matmul!r}: expected blas or loops")
    if not config.program:
        fail("a PROGRAM is required")
    if config.n < 1:
        fail("-n must be at least 1")
    if config.n > MAX_PROCESSES:
        fail(f"-n {config.n}: at most {MAX_PROCESSES} processes on one machine")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", config.entry):
        fail(f"--entry '{config.entry}' is not a function name")
    if not os.path.isfile(config.program):
        fail(f"{config.program}: no such file")
    if config.hosts and config.hostfile:
        fail("--hosts and --hostfile: give one of them")
    if config.launcher and (config.hosts or config.hostfile):
        fail("--launcher takes its hosts itself: --hosts/--hostfile are mpirun.mpich's")
    if config.emulated_cluster and (config.hosts or config.hostfile or config.launcher):
        fail("--emulated-cluster picks its hosts itself: no --hosts, --hostfile or --launcher")
    if config.keep:
        try:
            os.makedirs(config.keep, exist_ok=True)
        except OSError as e:
            fail(f"--keep {config.keep}: {e.strerror}")
        if not os.access(config.keep, os.W_OK | os.X_OK):
            fail(f"--keep {config.keep}: not writable")


def jit_command(runner, lowered, entry, runtime):
    """Runs `entry` of the lowered program in mlir-runner's JIT, optimized as
    a native build is (native.OPT_LEVEL), with the runtime `runtime`."""
    shared = [
        paths.llvm_lib("libmlir_runner_utils.so"),
        paths.llvm_lib("libmlir_c_runner_utils.so"),
        paths.LIBMPI,
        runtime,
    ]
    return [
        runner,
        lowered,
        f"--O{native.OPT_LEVEL}",
        "-e",
        entry,
        "-entry-point-result=void",
        f"--shared-libs={','.join(shared)}",
    ]


def run(config, tmp):
    """Lowers config.program and runs it, or with config.build links it (a
    RunResult without outputs). Raises RunError when it cannot."""
    _check(config)
    is_native = native.is_executable(config.program)
    if is_native and (config.build or config.pass_flags):
        fail(
            f"{config.program} is an executable already: --build and --pass-flags "
            "apply to .mlir programs"
        )
    paths.require_libmpi()
    mpirun = paths.mpirun()
    if not mpirun and not config.build and not config.launcher:
        fail("MPICH is missing (mpirun.mpich not found): apt-get install mpich libmpich-dev")

    text = ""
    if is_native:
        program_command = [os.path.abspath(config.program)]
    else:
        dist_opt = paths.dist_opt()
        if config.build:
            native.build(config, dist_opt, tmp)
            return RunResult(0, [])
        runner = paths.llvm_tool("mlir-runner")
        # Collectives call into the project's runtime library (communicators,
        # non-blocking allreduces, checks): it is always loaded.
        runtime = os.path.join(paths.lib_dir(dist_opt), "libdist_runtime.so")
        if not os.path.exists(runtime):
            fail(f"{runtime} is missing: build the dist_runtime target (needs MPICH)")
        lowered = native.lower(config, dist_opt, config.keep or tmp, config.collectives != "off")
        with open(lowered) as f:
            text = f.read()
        program_command = jit_command(runner, lowered, config.entry, runtime)

    marker = f"DIST_RUN_ID={os.getpid()}-{secrets.token_hex(8)}"
    env = dict(os.environ)
    env[marker.split("=", 1)[0]] = marker.split("=", 1)[1]
    # mlir-runner's JIT writes perf dumps under $JITDUMPDIR/.debug/jit.
    env["JITDUMPDIR"] = tmp
    trace_dir = os.path.join(tmp, "trace")
    os.mkdir(trace_dir)
    env["DIST_RUN_TRACE_DIR"] = trace_dir
    env["DIST_RUNTIME_CHECK"] = "1" if config.collectives == "check" else "0"
    events_dir = os.path.join(tmp, "events")
    if config.trace:
        os.mkdir(events_dir)
        env["DIST_RUN_EVENTS_DIR"] = events_dir
    # An executable may draw from the run seed; a lowered program says so.
    if is_native or "@dist_random_seed" in text:
        seed = config.seed if config.seed is not None else secrets.randbits(63)
        env["DIST_RUN_SEED"] = str(seed)
        config.say(f"run seed {seed} (--seed {seed} repeats this run)")

    command = _launch_command(config, mpirun, tmp, program_command)
    # mpirun's own messages (not the ranks' output, which goes to the
    # pattern's files) are shown on stderr, unless the run was stopped. A
    # --launcher prints the ranks' output itself.
    hydra_log = open(os.path.join(tmp, "mpirun.log"), "w+")
    ranks_err = config.stderr_sink(tmp, "ranks.err")
    timed_out = False
    proc = None
    try:
        with deferred_interrupts():
            proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=None if config.launcher else hydra_log,
                stderr=ranks_err,
                env=env,
                start_new_session=True,
            )
        status = proc.wait(timeout=config.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        # Also on an interrupt: nothing of the run survives it.
        if proc is not None:
            _stop(proc, marker)
        config.forward(ranks_err)
    outputs = []
    if not config.launcher:
        for rank in range(config.n):
            path = os.path.join(tmp, f"out.{rank}")
            output = ""
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    output = f.read()
            outputs.append(output)
            if config.out is not None:
                config.out.write(f"== rank {rank} ==\n{output}")
        if config.out is not None:
            config.out.flush()
    watched = config.collectives != "off"
    if timed_out:
        config.say(
            f"error: the program did not finish within --timeout "
            f"{config.timeout:g} s; every process was stopped"
        )
        if watched:
            _report_last_collectives(config, trace_dir, timed_out=True)
        return RunResult(TIMEOUT_STATUS, outputs)
    hydra_log.seek(0)
    config.err.write(hydra_log.read())
    hydra_log.close()
    if status != 0:
        config.say(f"error: the program failed (mpirun exit status {status})")
        if watched:
            _report_last_collectives(config, trace_dir)
    elif config.trace:
        tracing.merge(config, events_dir)
        return RunResult(0, outputs)
    return RunResult(status if status >= 0 else 128 - status, outputs)
