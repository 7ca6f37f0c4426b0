#!/usr/bin/env python3
"""dist-run leaves nothing behind: after a timeout, SIGTERM or SIGINT, no
process of the run is left and its temporary directory is gone; nor after
SIGTERM during --calibrate, while it runs its microbenchmarks.

  dist_run_cleanup.py DIST_RUN HANGING_PROGRAM FINISHING_PROGRAM

The first program hangs (one rank waits in a collective the other never
starts); the second finishes (nothing may be left after a good run either,
mlir-runner's JIT dumps included).
dist-run runs with TMPDIR set to a fresh directory, which must be empty
again afterwards; the program is copied to a uniquely named file, and no
process whose command line names it may survive.
"""
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def survivors(tag):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if tag.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            pass
    return found


def jit_dumps():
    """What mlir-runner's JIT would leave in the usual places."""
    found = set()
    for base in ["/tmp", os.path.expanduser("~")]:
        found |= set(glob.glob(os.path.join(base, ".debug", "jit", "*")))
    return found


def nothing_left(label, tag, tmpdir):
    """Whether no process whose command line names `tag` and no file in
    `tmpdir` is left (says what is, and kills the processes)."""
    ok = True
    left = survivors(tag)
    if left:
        print(f"FAILED: {label}: processes left: {left}")
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        ok = False
    files = os.listdir(tmpdir)
    if files:
        print(f"FAILED: {label}: files left in TMPDIR: {files}")
        ok = False
    return ok


def check(label, dist_run, program, tmpdir, tag, send=None, launcher=None):
    env = dict(os.environ, TMPDIR=tmpdir)
    timeout = "3" if send is None else "120"
    if send == "finish":
        send, timeout = None, "120"
    # The hanging program waits for a rank that has finished: the runtime's
    # collective check would stop it at once, so it is off (only traced).
    command = [dist_run, "-n", "2", "--no-verify", "--timeout", timeout, "--collectives", "trace"]
    if launcher:
        command += ["--launcher", launcher]
    proc = subprocess.Popen(
        command + [program], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    if send is not None:
        # Wait until rank 0 is in the collective, then interrupt dist-run.
        deadline = time.time() + 60
        while not glob.glob(os.path.join(tmpdir, "dist-run-*", "trace", "rank.0")):
            if time.time() > deadline or proc.poll() is not None:
                print(f"FAILED: {label}: the run never started")
                return False
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(send)
    out, err = proc.communicate(timeout=60)
    ok = True
    want = 128 + send if send else (0 if timeout == "120" else 124)
    if proc.returncode != want:
        print(f"FAILED: {label}: exit status {proc.returncode}, expected {want}\n{err}")
        ok = False
    ok &= nothing_left(label, tag, tmpdir)
    sys.stdout.write(err)
    print(
        f"{'ok' if ok else 'FAILED'}: {label}: exit {proc.returncode}, "
        f"no process and no file left"
    )
    return ok


def check_calibrate(dist_run, tmpdir):
    """SIGTERM during --calibrate: the traced run of the microbenchmarks is
    stopped and cleaned up too, and no cost-model file is written."""
    out_file = os.path.join(os.path.dirname(tmpdir), "costs.json")
    env = dict(os.environ, TMPDIR=tmpdir)
    proc = subprocess.Popen(
        [dist_run, "-n", "2", "--calibrate", out_file],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.time() + 60
    # dist-run's directory in TMPDIR, with the run's trace state.
    while not glob.glob(os.path.join(tmpdir, "dist-run-*", "trace")):
        if time.time() > deadline or proc.poll() is not None:
            print("FAILED: calibrate: the run never started")
            return False
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    ok = proc.returncode == 128 + signal.SIGTERM
    if not ok:
        print(f"FAILED: calibrate: exit status {proc.returncode}\n{err}")
    ok &= nothing_left("calibrate", tmpdir, tmpdir)
    if os.path.exists(out_file):
        print("FAILED: calibrate: a cost model was written")
        ok = False
    sys.stdout.write(err)
    print(
        f"{'ok' if ok else 'FAILED'}: calibrate SIGTERM: exit {proc.returncode}, "
        "no process, no file and no cost model left"
    )
    return ok


def main():
    dist_run, hanging, finishing = sys.argv[1], sys.argv[2], sys.argv[3]
    work = tempfile.mkdtemp(prefix="dist-run-cleanup-")
    ok = True
    dumps = jit_dumps()
    try:
        for label, source, send in [
            ("finished", finishing, "finish"),
            ("timeout", hanging, None),
            ("SIGTERM", hanging, signal.SIGTERM),
            ("SIGINT", hanging, signal.SIGINT),
        ]:
            tag = f"{label}-{os.getpid()}.mlir"
            program = os.path.join(work, tag)
            shutil.copy(source, program)
            tmpdir = os.path.join(work, label)
            os.mkdir(tmpdir)
            ok &= check(label, dist_run, program, tmpdir, tag, send)
        # A launcher that ignores SIGTERM and leaves a detached grandchild
        # (setsid) that ignores it too: dist-run's timeout must still leave
        # nothing behind.
        tag = f"stubborn-{os.getpid()}.mlir"
        program = os.path.join(work, tag)
        shutil.copy(hanging, program)
        launcher = os.path.join(work, "stubborn-launcher.sh")
        with open(launcher, "w") as f:
            f.write(
                "#!/bin/sh\n"
                "# Ignores SIGTERM; its grandchild, in a session of its own,\n"
                "# too; both name the program, so a survivor is seen.\n"
                "trap '' TERM\n"
                f"setsid {sys.executable} -c 'import signal, time; "
                f"signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)' "
                f"{tag} &\n"
                f'exec mpirun.mpich "$@"\n'
            )
        os.chmod(launcher, 0o755)
        tmpdir = os.path.join(work, "stubborn")
        os.mkdir(tmpdir)
        ok &= check("stubborn launcher timeout", dist_run, program, tmpdir, tag, launcher=launcher)
        tmpdir = os.path.join(work, "calibrate")
        os.mkdir(tmpdir)
        ok &= check_calibrate(dist_run, tmpdir)
        new = jit_dumps() - dumps
        if new:
            print(f"FAILED: JIT dumps left behind: {sorted(new)}")
            ok = False
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
