"""The command lines of dist-run and dist-compile (the installed scripts
call main() and compile_main())."""
import argparse
import json
import math
import os
import re
import shutil
import signal
import sys
import tempfile

from . import calibration, launch
from .config import RunConfig
from .errors import Interrupted, RunError, interrupt

RUN_DESCRIPTION = """Compile a dist program for MPI and run it on N processes.
"""


def _positive_seconds(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds")
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive number of seconds")
    return value


def _seed_value(text):
    if not re.fullmatch(r"[0-9]+", text) or int(text) >= 2**64:
        raise argparse.ArgumentTypeError(f"'{text}' is not a seed (0 to 2^64-1)")
    return int(text)


def _parser(prog):
    parser = argparse.ArgumentParser(
        prog=prog, description=RUN_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", type=int, required=True, help="number of MPI processes")
    parser.add_argument(
        "program",
        nargs="?",
        help="the .mlir file or a native executable "
        "built by dist-compile ('--' before a name that starts with '-')",
    )
    parser.add_argument(
        "--calibrate",
        metavar="FILE",
        help="instead of running a program, "
        "measure collectives and matmuls on -n processes and write a "
        "cost-model file for the passes' cost-model=FILE option",
    )
    parser.add_argument(
        "--build",
        metavar="EXE",
        help="link a native executable for -n "
        "processes instead of running (what dist-compile does)",
    )
    parser.add_argument(
        "--trace",
        metavar="FILE",
        nargs="?",
        const="",
        help="write a Chrome trace of the run "
        "(Perfetto, chrome://tracing): per rank, the compute between "
        "collectives, each collective, issue and wait, and asynchronous "
        "collectives on their streams; with --build (dist-compile), "
        "instrument the executable for it (no FILE needed)",
    )
    parser.add_argument("--hosts", help="comma-separated hosts to run on (mpirun -hosts)")
    parser.add_argument("--hostfile", help="a file of hosts to run on (mpirun -f)")
    parser.add_argument(
        "--launcher",
        help="start the processes with this command "
        "instead of mpirun.mpich, e.g. 'srun' or 'mpiexec -f hosts'; "
        "it gets '-n N PROGRAM' appended and prints the ranks' output itself",
    )
    parser.add_argument(
        "--emulated-cluster",
        action="store_true",
        default=None,
        help="run the processes on the emulated cluster that is up "
        "(scripts/emulated_cluster.py), round-robin over its hosts; "
        "DIST_RUN_CLUSTER=1 makes it the default unless --hosts, "
        "--hostfile or --launcher is given",
    )
    parser.add_argument("--entry", default="main", help="the function to run (default: main)")
    parser.add_argument("--pass-flags", default="", help="dist-opt flags to apply before lowering")
    parser.add_argument("--keep", help="keep the lowered program in this directory")
    parser.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=120.0,
        help="stop every process after this many seconds (default: 120)",
    )
    parser.add_argument(
        "--seed",
        type=_seed_value,
        help="the run seed of unseeded random ops (default: a random one)",
    )
    parser.add_argument(
        "--matmul",
        choices=["blas", "loops"],
        default="blas",
        help="how matrix products are computed: blas: f32/f64 ones by "
        "OpenBLAS's GEMM through the runtime (default); loops: compiled "
        "loops, as for a target without BLAS",
    )
    parser.add_argument(
        "--no-verify",
        action="store_true",
        help="lower without checking the program's distributions first "
        "(--dist-verify-distributions), to see what the runtime does with "
        "a program the check rejects",
    )
    parser.add_argument(
        "--collectives",
        choices=["check", "trace", "off"],
        default="check",
        help="check: verify that a group's processes start the same "
        "collective (default); trace: only record the last one for the "
        "timeout report; off: neither (for timing)",
    )
    return parser


def _parse_args(prog, argv):
    parser = _parser(prog)
    args = parser.parse_args(argv)
    if args.calibrate and (args.program or args.build or args.trace is not None or args.pass_flags):
        parser.error(
            "--calibrate runs its own programs: no PROGRAM, --build, --trace " "or --pass-flags"
        )
    if args.build and args.trace and not args.program:
        # "dist-compile --trace prog.mlir -o exe": the optional FILE took the
        # program.
        args.program, args.trace = args.trace, ""
    if not args.calibrate and not args.program:
        parser.error("a PROGRAM (or --calibrate FILE) is required")
    if args.trace == "" and not args.build:
        parser.error(
            "--trace needs a FILE to write the trace to (only "
            "--build/dist-compile takes it alone)"
        )
    return args


def _warn_if_oversubscribed(config):
    """Says so when more processes than this machine's cores would run here:
    they then time-share the cores, so traces and calibrations measure the
    scheduler as much as the program."""
    if config.remote or config.build:
        return
    cores = len(os.sched_getaffinity(0))
    if config.n > cores:
        config.say(
            f"warning: {config.n} processes on {cores} cores: they "
            "time-share the cores, so timings and traces measure the "
            "scheduler too"
        )


def _restore_outer_environment():
    """Undoes what a sanitizer build's entry point preloaded for this
    interpreter (see tools/dist-run/dist-run.in), so that the processes a
    run starts get the environment dist-run was started with."""
    outer = os.environ.pop("DIST_RUN_OUTER_ENV", None)
    if outer is None:
        return
    for key, value in json.loads(outer).items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def main(argv=None, prog="dist-run"):
    """dist-run's command line; returns the exit status."""
    _restore_outer_environment()
    args = _parse_args(prog, sys.argv[1:] if argv is None else argv)
    config = RunConfig(
        n=args.n,
        program=args.program,
        entry=args.entry,
        pass_flags=args.pass_flags,
        keep=args.keep,
        timeout=args.timeout,
        seed=args.seed,
        collectives=args.collectives,
        verify=not args.no_verify,
        matmul=args.matmul,
        hosts=args.hosts,
        hostfile=args.hostfile,
        launcher=args.launcher,
        emulated_cluster=args.emulated_cluster,
        trace=args.trace,
        build=args.build,
        err=sys.stderr,
        out=sys.stdout,
    )
    _warn_if_oversubscribed(config)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, interrupt)
    tmp = tempfile.mkdtemp(prefix="dist-run-")
    status = 1
    try:
        if args.calibrate:
            calibration.calibrate(config, args.calibrate, tmp)
            status = 0
        else:
            result = launch.run(config, tmp)
            status = result.status
    except RunError as e:
        sys.stdout.flush()
        config.say(f"error: {e.message}")
        status = e.returncode
    except Interrupted as e:
        config.say(f"interrupted by signal {e.signum}; every process was stopped")
        status = 128 + e.signum
    finally:
        # Another signal must not cut the clean-up short.
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        shutil.rmtree(tmp, ignore_errors=True)
    return status


def compile_main(argv=None):
    """dist-compile -n N prog.mlir -o EXE [dist-run options]: the same as
    dist-run --build EXE."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out = None
    rest = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-o":
            if i + 1 >= len(argv):
                print("dist-compile: error: -o needs a file name", file=sys.stderr)
                return 1
            out = argv[i + 1]
            i += 2
            continue
        if a.startswith("-o") and not a.startswith("--"):
            out = a[2:]
        else:
            rest.append(a)
        i += 1
    if not out:
        print(
            "dist-compile: error: -o EXE is required (usage: dist-compile -n N "
            "prog.mlir -o EXE)",
            file=sys.stderr,
        )
        return 1
    return main(["--build", out] + rest)
