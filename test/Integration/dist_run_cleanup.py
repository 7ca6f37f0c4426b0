#!/usr/bin/env python3
"""dist-run leaves nothing behind: after a timeout, SIGTERM or SIGINT, no
process of the run is left and its temporary directory is gone.

  dist_run_cleanup.py DIST_RUN HANGING_PROGRAM

The program hangs (one rank waits in a collective the other never starts).
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


def check(label, dist_run, program, tmpdir, tag, send=None):
    env = dict(os.environ, TMPDIR=tmpdir)
    timeout = "3" if send is None else "120"
    proc = subprocess.Popen([dist_run, "-n", "2", "--timeout", timeout, program],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
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
    want = 124 if send is None else 128 + send
    if proc.returncode != want:
        print(f"FAILED: {label}: exit status {proc.returncode}, expected {want}\n{err}")
        ok = False
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
    sys.stdout.write(err)
    print(f"{'ok' if ok else 'FAILED'}: {label}: exit {proc.returncode}, "
          f"no process and no file left")
    return ok


def main():
    dist_run, hanging = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="dist-run-cleanup-")
    ok = True
    try:
        tag = f"hang-{os.getpid()}.mlir"
        program = os.path.join(work, tag)
        shutil.copy(hanging, program)
        for label, send in [("timeout", None), ("SIGTERM", signal.SIGTERM),
                            ("SIGINT", signal.SIGINT)]:
            tmpdir = os.path.join(work, label)
            os.mkdir(tmpdir)
            ok &= check(label, dist_run, program, tmpdir, tag, send)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
