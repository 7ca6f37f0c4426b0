"""The one error type of dist.run, the exit statuses the commands use, and
how an interrupt reaches them."""
import contextlib

# Exit status of a run stopped by its timeout (as timeout(1)).
TIMEOUT_STATUS = 124


class RunError(RuntimeError):
    """Lowering, building or running a program failed.

    `.returncode` is the status the command-line tools exit with; `.stderr`
    what the tools and the processes wrote to stderr, when the caller asked
    for it to be captured (dist.run_on_mpi does). str() gives both."""

    def __init__(self, message, returncode=1, stderr=""):
        super().__init__(f"{message}\n{stderr}" if stderr else message)
        self.message = message
        self.returncode = returncode
        self.stderr = stderr


class Interrupted(Exception):
    """A signal asked the command-line tool to stop (its handlers raise
    this, so that every `finally` stops the processes it started)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


class _Deferral:
    depth = 0
    pending = None


def interrupt(signum, frame):
    """The command line's handler of SIGINT, SIGTERM and SIGHUP: raises
    Interrupted, or, inside deferred_interrupts(), keeps the signal for the
    end of that block."""
    if _Deferral.depth:
        _Deferral.pending = signum
        return
    raise Interrupted(signum)


@contextlib.contextmanager
def deferred_interrupts():
    """A block an interrupt must not cut short: starting a process, which
    would otherwise run on unstopped when the signal lands after the fork
    but before the caller holds the process (and its try/finally). The
    interrupt is raised as the block ends."""
    _Deferral.depth += 1
    try:
        yield
    finally:
        _Deferral.depth -= 1
        if not _Deferral.depth and _Deferral.pending is not None:
            signum, _Deferral.pending = _Deferral.pending, None
            raise Interrupted(signum)


def fail(message, status=1):
    raise RunError(message, status)
