"""dist: build, inspect, rewrite and run auto-parallel training programs.

    import dist
    ctx = dist.Context()
    mesh = dist.Mesh([2, 4], names=["dp", "mp"], context=ctx)
    module = dist.Module.parse(text, context=ctx)
    module.run("dist-auto-parallel")
    report = dist.overlap_report(module)

The package stands on dist's C API (libDistCAPI.so): attributes, types and
the mesh arithmetic are the C++ ones. Failures raise DiagnosticError with
every diagnostic; nothing is printed to stderr.

The extension is loaded on first use of a name that needs it (dist.Context,
dist.Module, ...): dist.run, which lowers and runs programs through the
tools, is pure Python and loads no native code of its own.
"""

from ._version import __version__
from ._errors import Diagnostic, DiagnosticError, Location
from .run import RunError, build_native, calibrate, parse_rank_output, run_on_mpi

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # What __getattr__ gives, for type checkers.
    from ._core import (
        Attribute,
        Block,
        Context,
        FunctionBuilder,
        FutureType,
        Mesh,
        Module,
        Operation,
        PassManager,
        Region,
        TensorDist,
        TensorType,
        Type,
        Value,
        overlap_report,
    )

__all__ = [
    "Attribute",
    "Block",
    "Context",
    "Diagnostic",
    "DiagnosticError",
    "FunctionBuilder",
    "FutureType",
    "Location",
    "Mesh",
    "Module",
    "Operation",
    "PassManager",
    "Region",
    "RunError",
    "TensorDist",
    "TensorType",
    "Type",
    "Value",
    "build_native",
    "calibrate",
    "overlap_report",
    "parse_rank_output",
    "run_on_mpi",
    "__version__",
]


def __getattr__(name):
    # The public names not defined here are _core's (the extension and what
    # stands on it), loaded on first use.
    if name in __all__:
        from . import _core

        value = getattr(_core, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dist' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
