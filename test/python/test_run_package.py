"""dist.run, the pure-Python run-and-measure package: it loads no native
code, its errors are RunError with the tools' status and messages, its
trace reader checks the format's version, and the old spellings
(dist.mpi, dist.timeline) still work."""
import json
import os
import subprocess
import sys

import pytest

import dist
import dist.run
from dist.run import RunConfig, RunError, launch, trace
from conftest import requires_mpich


def test_importing_dist_run_loads_no_extension():
    code = (
        "import sys, dist.run, dist.run.cli\n"
        "print('dist._dist' in sys.modules, 'numpy' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


def test_the_extension_loads_on_first_use():
    assert isinstance(dist.Context, type)
    assert "Context" in dir(dist)
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
        dist.NoSuchName


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"n": 0}, "-n must be at least 1"),
        ({"n": 2000}, "-n 2000: at most 1024 processes"),
        ({"n": 2, "entry": "a b"}, "--entry 'a b' is not a function name"),
        ({"n": 2, "hosts": "a", "hostfile": "b"}, "--hosts and --hostfile: give one"),
        ({"n": 2.5}, "-n must be a number of processes, not 2.5"),
        ({"n": 2, "timeout": float("nan")}, "--timeout nan is not a positive number"),
        ({"n": 2, "timeout": 0}, "--timeout 0 is not a positive number"),
        ({"n": 2, "collectives": "maybe"}, "--collectives 'maybe': expected check"),
        ({"n": 2, "matmul": "gemm"}, "--matmul 'gemm': expected blas or loops"),
        ({"n": 2, "program": None}, "a PROGRAM is required"),
    ],
)
def test_bad_settings_raise_before_anything_runs(tmp_path, settings, message):
    program = tmp_path / "p.mlir"
    program.write_text("func.func @main() {\n  return\n}\n")
    config = RunConfig(**dict({"program": str(program)}, **settings))
    with pytest.raises(RunError, match=message) as e:
        launch.run(config, str(tmp_path))
    assert e.value.returncode == 1


def test_trace_reader_checks_the_version(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"dist-trace": 2, "traceEvents": []}))
    with pytest.raises(RunError, match="trace version 2; this dist reads version 1"):
        trace.read(str(path))
    path.write_text(json.dumps({"events": []}))
    with pytest.raises(RunError, match="no 'traceEvents' array"):
        trace.read(str(path))
    assert trace.stream_of(0) == "compute" and trace.stream_of(201) == "dp"
    assert trace.lane_name(0) == "compute stream" and trace.lane_name(100) == "mp stream"
    assert trace.lane_name(201) == "dp stream (2)"


def test_old_spellings_are_aliases():
    import dist.mpi
    import dist.timeline
    from dist.run import timeline

    assert dist.mpi.run_on_mpi is dist.run.run_on_mpi is dist.run_on_mpi
    assert dist.mpi.RunError is RunError is dist.RunError
    assert dist.timeline.timeline_svg is timeline.timeline_svg


@requires_mpich
def test_run_error_carries_the_messages_and_status():
    text = (
        "func.func @main() {\n  %c = arith.constant 1 : index\n"
        "  %b = tensor.empty(%c) : tensor<?xf32>\n  return\n}\n"
    )
    with pytest.raises(RunError) as e:
        dist.run_on_mpi(text, 2, entry="nowhere")
    assert e.value.returncode == 1
    assert "cannot lower" in e.value.message
    assert "nowhere" in e.value.stderr


def test_an_interrupt_while_a_process_starts_waits_for_the_block_to_end():
    """The command line's handler raises Interrupted at once, except inside
    deferred_interrupts (around starting a process), where the signal is
    kept and raised as the block ends, so the caller holds the process (and
    stops it) by then."""
    import signal
    from dist.run.errors import Interrupted, deferred_interrupts, interrupt

    previous = signal.signal(signal.SIGUSR1, interrupt)
    try:
        reached = []
        with pytest.raises(Interrupted) as e:
            with deferred_interrupts():
                os.kill(os.getpid(), signal.SIGUSR1)
                reached.append("after the signal")
        assert reached == ["after the signal"] and e.value.signum == signal.SIGUSR1
        with pytest.raises(Interrupted):
            os.kill(os.getpid(), signal.SIGUSR1)
            reached.append("not reached")
        assert reached == ["after the signal"]
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_the_jit_is_optimized_as_a_native_build():
    """mlir-runner given no level runs no LLVM optimization at all: the JIT
    gets the native build's level."""
    from dist.run import launch, native

    jit = launch.jit_command("mlir-runner", "p.mlir", "main", "libdist_runtime.so")
    build = native.compile_command("p.ll", "p.o")
    assert native.OPT_LEVEL >= 2
    assert f"--O{native.OPT_LEVEL}" in jit and f"-O{native.OPT_LEVEL}" in build
