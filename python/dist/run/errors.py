"""The one error type of dist.run, and the exit statuses the commands use."""

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


def fail(message, status=1):
    raise RunError(message, status)
