"""Compiled: an imported step with a @main that runs it on MPI."""
import numpy as np

from . import placements as _placements
from .errors import TorchImportError

_NUMPY = {"f32": np.float32, "i64": np.int64, "i1": np.bool_}


class Compiled:
    """A step ready to run: call it with arguments shaped like the example
    arguments (torch tensors or numpy arrays) to run it on the mesh's
    processes; it returns the step's results, whole, in the step's
    structure (torch tensors when it was given torch tensors). `text` is
    the imported program and `write(path)` writes it for dist-opt."""

    def __init__(self, step, pass_flags="--dist-auto-parallel", run_options=None):
        self.step = step
        self.pass_flags = pass_flags
        self.run_options = dict(run_options or {})

    @property
    def text(self):
        return self.step.text

    def write(self, path):
        with open(path, "w") as f:
            f.write(self.step.text)
        return path

    def program(self, *args):
        """The step and a @main that calls it on `args` (each process its
        block) and prints every result whole."""
        import dist
        from dist.builder import FunctionBuilder

        step = self.step
        leaves = _leaves(args)
        if len(leaves) != len(step.names):
            raise TorchImportError(f"the step takes {len(step.names)} tensors, not {len(leaves)}")
        ctx = step.module.context
        module = dist.Module.parse(step.text, context=ctx)
        mesh = dist.Mesh(step.mesh.shape, names=step.mesh.names, context=ctx)
        f = FunctionBuilder(module, "main", [])
        coords = [f.process_coord(mesh, a) for a in range(len(step.mesh.shape))]
        values = []
        for name, shape, dtype, given, leaf in zip(
            step.names, step.shapes, step.dtypes, step.placements, leaves
        ):
            a = _numpy(leaf)
            if tuple(a.shape) != tuple(shape):
                raise TorchImportError(
                    f"argument {name!r} has shape {list(a.shape)}, the step was imported with {list(shape)}",
                    what=name,
                )
            if dtype == "i1":
                raise TorchImportError(
                    f"argument {name!r}: bool arguments cannot be passed to a compiled step",
                    what=name,
                )
            splits, partial = _placements.splits_of(given, len(shape))
            if partial:
                raise TorchImportError(
                    f"argument {name!r} is Partial(): pass its whole value with another placement",
                    what=name,
                )
            whole = f.constant(
                a.astype(_NUMPY[dtype]), dist.TensorType(list(shape), dtype, context=ctx)
            )
            local = [
                n // (step.mesh.shape[s] if s is not None else 1) for n, s in zip(shape, splits)
            ]
            if any(s is not None for s in splits):
                offsets = []
                for n, s in zip(local, splits):
                    offsets.append(0 if s is None else f.arith("muli", coords[s], f.index(n)))
                whole = f.extract_slice(whole, offsets, local)
            enc = dist.TensorDist(mesh, [s if s is not None else -1 for s in splits])
            values.append(f.cast(whole, dist.TensorType(local, dtype, enc, context=ctx)))
        result_types = []
        for path, shape, given, _ in step.outputs:
            splits, partial = _placements.splits_of(given, len(shape))
            local = [
                n // (step.mesh.shape[s] if s is not None else 1) for n, s in zip(shape, splits)
            ]
            enc = dist.TensorDist(
                mesh,
                [s if s is not None else -1 for s in splits],
                {a: "sum" for a in partial} or None,
            )
            result_types.append(dist.TensorType(local, "f32", enc, context=ctx))
        results = f.call(step.name, values, result_types)
        for (path, shape, _, _), r in zip(step.outputs, results):
            whole = dist.TensorType(
                list(shape), "f32", dist.TensorDist(mesh, [-1] * len(shape)), context=ctx
            )
            f.print(f.op("dist.reshard", [r], [whole])[0])
        f.return_()
        return module.print(debug_info=True)

    def __call__(self, *args):
        import dist

        step = self.step
        for (path, _, _, _), dtype in zip(step.outputs, step.output_dtypes):
            if dtype != "f32":
                raise TorchImportError(
                    f"result {path} is {dtype}: a compiled step returns float32 results "
                    "(print it from the program with dist-run instead)",
                    what=path,
                )
        text = self.program(*args)
        options = dict(timeout=600)
        options.update(self.run_options)
        ranks = dist.run_on_mpi(text, step.mesh.size, pass_flags=self.pass_flags, **options)
        first = ranks[0]
        for r, arrays in enumerate(ranks[1:], 1):
            for k, (x, y) in enumerate(zip(first, arrays)):
                if not np.array_equal(x, y, equal_nan=True):
                    raise TorchImportError(
                        f"rank {r} printed another value of result {step.outputs[k][0]} than rank 0"
                    )
        arrays = [a.reshape(shape) for a, (_, shape, _, _) in zip(first, step.outputs)]
        if any(_is_torch(x) for x in _leaves(args)):
            import torch

            arrays = [torch.from_numpy(a) for a in arrays]
        from torch.utils import _pytree as pytree

        return pytree.tree_unflatten(arrays, step.out_spec)


def _is_torch(x):
    return type(x).__module__.startswith("torch")


def _numpy(x):
    if _is_torch(x):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _leaves(args):
    out = []
    for a in args:
        if isinstance(a, dict):
            out += list(a.values())
        elif isinstance(a, (list, tuple)):
            out += list(a)
        else:
            out.append(a)
    return out
