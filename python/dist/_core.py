"""The half of the dist package that stands on the extension (dist._dist):
imported on first use of one of its names (see __init__.py)."""

from ._dist import (
    Attribute,
    Block,
    Context,
    FutureType,
    Mesh,
    Module,
    Operation,
    Region,
    TensorDist,
    TensorType,
    Type,
    Value,
)
from .builder import FunctionBuilder

import json as _json
import os as _os
import tempfile as _tempfile

__all__ = [
    "Attribute",
    "Block",
    "Context",
    "FunctionBuilder",
    "FutureType",
    "Mesh",
    "Module",
    "Operation",
    "PassManager",
    "Region",
    "TensorDist",
    "TensorType",
    "Type",
    "Value",
    "overlap_report",
]


class PassManager:
    """A textual pass pipeline, checked when made and run on modules:

    pm = dist.PassManager("dist-auto-parallel{peak-tflops=50}")
    pm.run(module)
    """

    def __init__(self, pipeline, context=None):
        self.pipeline = pipeline
        # Parse now, on an empty module, so that a bad pipeline fails here.
        Module.create(context).run(pipeline)

    def run(self, module):
        """Runs the pipeline on `module`; returns its warnings and remarks."""
        return module.run(self.pipeline)


def overlap_report(module, **options):
    """The --dist-overlap-report of `module` as data: {"functions": [{"name",
    "compute_us", "comm_us", "exposed_comm_us", "makespan_us", "collectives"
    ({op name: {"count", "bytes"}}, per process), "peak_live_bytes",
    "argument_bytes", "state_bytes", "unsharded_state_bytes" (the optimizer
    states' memory per process, and unsharded)}, ...]}.
    `options` are the pass's (peak_tflops=..., link_latency_us=...,
    link_bandwidth_gbps=..., memory_bandwidth_gbps=..., or cost_model=FILE
    from dist-run --calibrate).
    The module is not changed."""
    copy = Module.parse(str(module), context=module.context)
    return _run_with_report(copy, "", options)


def _run_with_report(module, pipeline, options):
    """Runs `pipeline` (may be empty) and then --dist-overlap-report with
    `options` on `module`, in one pass manager; returns the report's data."""
    with _tempfile.TemporaryDirectory() as tmp:
        path = _os.path.join(tmp, "report.json")
        flags = [f"output={path}", "format=json"]
        for key, value in options.items():
            flags.append(f"{key.replace('_', '-')}={value}")
        report = "dist-overlap-report{" + " ".join(flags) + "}"
        module.run(f"{pipeline},{report}" if pipeline else report)
        with open(path) as f:
            return _json.load(f)


def _read(path, context=None):
    """Parses the module in file `path`: MLIR text or bytecode."""
    with open(path, "rb") as f:
        return Module.parse(f.read(), filename=path, context=context)


def _walk(self):
    """Every operation of the module, nested ones included, in pre-order."""
    stack = list(reversed(self.operations))
    while stack:
        op = stack.pop()
        yield op
        for region in reversed(op.regions):
            for block in reversed(region.blocks):
                stack.extend(reversed(block.operations))


def _function(self, name, args=(), private=False, markers=None):
    """A FunctionBuilder for a new function `name` of this module."""
    return FunctionBuilder(self, name, args, private, markers)


Module.read = staticmethod(_read)
Module.walk = _walk
Module.function = _function
Module.overlap_report = overlap_report
