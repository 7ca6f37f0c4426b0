"""Lowering a program for N processes, and linking it into a native MPI
executable."""
import os
import shlex
import subprocess

from . import paths
from .errors import TIMEOUT_STATUS, deferred_interrupts, fail

# The LLVM optimization level of the lowered program, natively built (clang
# -O2) or JIT-compiled (mlir-runner --O2): one level, so that a run through
# dist-run computes as fast as its executable. mlir-runner without a level
# runs no LLVM optimization at all (measured: a chain of four 1024^3 f32
# matmuls took 2.86 s unoptimized, 0.79 s at -O2).
OPT_LEVEL = 2


def _run(cmd, timeout=None):
    """subprocess.run(cmd) capturing its output as text, started so that an
    interrupt cannot leave the tool running (see deferred_interrupts), and
    stopped on a timeout or an interrupt."""
    with deferred_interrupts():
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def lowering_flags(config):
    """The user's pass flags, checked: the lowering and the process count are
    dist-run's, and an MPI lowering among them gets the world size too."""
    try:
        flags = shlex.split(config.pass_flags)
    except ValueError as e:
        fail(f"--pass-flags: {e}")
    result = []
    for flag in flags:
        name = flag.lstrip("-").split("=", 1)[0]
        if name == "dist-to-llvm" or "world-size" in flag:
            fail(
                f"--pass-flags: '{flag}': dist-run lowers with --dist-to-llvm "
                f"itself, on world-size={config.n} (set by -n)"
            )
        if name in ("o", "pass-pipeline", "split-input-file") or not flag.startswith("-"):
            fail(
                f"--pass-flags: '{flag}' is not a pass flag dist-run can apply "
                "(give passes as --pass-name[=options])"
            )
        if name == "convert-dist-to-mpi":
            options = flag.split("=", 1)[1] if "=" in flag else ""
            flag = f"--convert-dist-to-mpi=world-size={config.n} {options}".strip()
        result.append(flag)
    return result


def lower(config, dist_opt, out_dir, trace):
    """The program lowered to the LLVM dialect for config.n processes: the
    path of the lowered file in `out_dir`."""
    lowered = os.path.join(out_dir, "lowered.mlir")
    events = "true" if config.trace_events else "false"
    pipeline = (
        f"--dist-to-llvm=world-size={config.n} entry={config.entry} "
        f"require-entry=true trace-collectives={'true' if trace else 'false'} "
        f"trace-events={events} blas={'true' if config.matmul == 'blas' else 'false'} "
        f"verify-distributions={'true' if config.verify else 'false'}"
    )
    # An absolute path: a file name that starts with '-' is not an option.
    cmd = (
        [dist_opt, os.path.abspath(config.program)]
        + lowering_flags(config)
        + [pipeline, "-o", lowered]
    )
    try:
        result = _run(cmd, timeout=config.timeout)
    except subprocess.TimeoutExpired:
        fail(
            f"lowering {config.program} took longer than --timeout {config.timeout:g} s",
            TIMEOUT_STATUS,
        )
    if result.returncode != 0:
        config.err.write(result.stderr)
        fail(f"cannot lower {config.program} for {config.n} processes")
    return lowered


def _run_steps(config, steps):
    for step in steps:
        result = _run(step, timeout=config.timeout)
        if result.returncode != 0:
            config.err.write(result.stdout + result.stderr)
            fail(f"cannot build {config.build}: {os.path.basename(step[0])} failed")


def compile_command(ll, obj):
    """Compiles the LLVM IR file `ll` into the object `obj` at OPT_LEVEL."""
    return [paths.llvm_tool("clang"), f"-O{OPT_LEVEL}", "-Wno-override-module", "-c", ll, "-o", obj]


def build(config, dist_opt, tmp):
    """Links the lowered program into the native executable config.build:
    LLVM IR, an object whose entry is renamed to the dist_entry that
    libdist_native.a's main calls, linked against MPICH and OpenBLAS. C++'s
    runtime is linked statically, so nothing of LLVM's or the compiler's is
    needed where it runs."""
    native = os.path.join(paths.lib_dir(dist_opt), "libdist_native.a")
    if not os.path.exists(native):
        fail(f"{native} is missing: build the dist_native target (needs MPICH)")
    out_dir = config.keep or tmp
    lowered = lower(config, dist_opt, out_dir, config.collectives != "off")
    ll = os.path.join(out_dir, "program.ll")
    obj = os.path.join(out_dir, "program.o")
    compile_steps = [
        [paths.llvm_tool("mlir-translate"), "--mlir-to-llvmir", lowered, "-o", ll],
        compile_command(ll, obj),
    ]
    link_steps = [
        [paths.llvm_tool("llvm-objcopy"), f"--redefine-sym={config.entry}=dist_entry", obj],
        [
            paths.llvm_tool("clang++"),
            obj,
            native,
            paths.LIBMPI,
            *([paths.LIBBLAS] if paths.LIBBLAS else []),
            "-static-libstdc++",
            "-static-libgcc",
            "-o",
            os.path.abspath(config.build),
        ],
    ]
    _run_steps(config, compile_steps)
    if config.entry != "dist_entry":
        # The name main calls: the entry is renamed to it.
        symbols = _run(
            [paths.llvm_tool("llvm-nm"), "--defined-only", "-j", obj], timeout=config.timeout
        ).stdout.split()
        if "dist_entry" in symbols:
            fail(
                f"cannot build {config.build}: the program defines dist_entry, the "
                "name the executable's main calls; rename that function"
            )
    _run_steps(config, link_steps)


def is_executable(path):
    """Whether `path` is a native executable (ELF), not a program's text."""
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"
