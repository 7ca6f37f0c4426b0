"""Tracing a training step into an FX graph of ATen ops, with each op's
source line in the user's code.

make_fx records the Python stack of every op when its tracer is asked to
(`record_stack_traces`); the ops autograd runs for the backward pass are
made inside torch.autograd.grad, so their stack is the grad call's. Under
anomaly mode autograd keeps, on each backward node, the stack of the
forward op that made it; the hooks functorch's aot_autograd installs
(`setup_stacktrace_preservation_hooks`) hand that stack to the tracer while
the node runs. torch.autograd.grad is wrapped for the trace to install
them, so a backward op points at the line of its forward op."""
import contextlib
import os
import re
import warnings

import torch
import torch.fx.traceback as fx_traceback
from functorch import make_fx
from functorch._src.aot_autograd import setup_stacktrace_preservation_hooks
from torch.fx.experimental import proxy_tensor

from .errors import TorchImportError

_TORCH_DIRS = tuple(
    os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (torch, __import__("functorch"))
)
_DIST_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in ')


def _is_user_file(path):
    path = os.path.abspath(path) if not path.startswith("<") else path
    return not path.startswith(_TORCH_DIRS) and not path.startswith(_DIST_DIR)


def user_location(stack_trace):
    """(file, line) of the innermost frame of `stack_trace` (FX's formatted
    stack, innermost first) that is neither torch's nor dist's, or None."""
    for path, line in _FRAME.findall(stack_trace or ""):
        if _is_user_file(path):
            return path, int(line)
    return None


@contextlib.contextmanager
def _located_grad():
    """torch.autograd.grad, for the trace, runs the backward with the
    forward ops' stacks (see the module's note)."""
    grad = torch.autograd.grad

    def located(outputs, inputs, *args, **kwargs):
        outs = [outputs] if isinstance(outputs, torch.Tensor) else list(outputs)
        setup_stacktrace_preservation_hooks([o.grad_fn for o in outs if o.grad_fn is not None])
        with fx_traceback.override_stack_trace():
            return grad(outputs, inputs, *args, **kwargs)

    torch.autograd.grad = located
    try:
        yield
    finally:
        torch.autograd.grad = grad


def _innermost_user_frame(tb):
    found = None
    while tb is not None:
        if _is_user_file(tb.tb_frame.f_code.co_filename):
            found = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return found


def trace(fn, args):
    """The FX graph of fn(*args) in ATen ops (make_fx, fake tensors)."""
    tracer = proxy_tensor.PythonKeyTracer
    saved = tracer.record_stack_traces
    tracer.record_stack_traces = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with _located_grad(), torch.autograd.detect_anomaly(check_nan=False):
                return make_fx(fn, tracing_mode="fake")(*args)
    except TorchImportError:
        raise
    except Exception as e:  # the user's code failed under the tracer
        where = _innermost_user_frame(e.__traceback__)
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        kind = type(e).__name__
        if (
            "data-dependent" in text
            or "tracing tensor" in text
            or kind in ("DataDependentOutputException", "DynamicOutputShapeException")
        ):
            text = (
                "the step reads a tensor's value or makes a shape that depends on it "
                f"(data-dependent), which a compiled program cannot: {text}"
            )
        raise TorchImportError(f"tracing the step failed: {text}", location=where) from e
    finally:
        tracer.record_stack_traces = saved
