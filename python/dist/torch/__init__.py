"""dist.torch: compile a PyTorch training step.

    import dist.torch as dt
    mesh = dt.DeviceMesh([2], ["tp"])
    step = dt.import_step(train_step, (params, ids, targets), mesh=mesh,
                          plan={"mlp.fc1": dt.ColwiseParallel(),
                                "mlp.fc2": dt.RowwiseParallel()})
    print(step.text)                         # the program, for dist-opt
    run = dt.compile(train_step, (params, ids, targets), mesh=mesh, plan=...)
    loss, grads = run(params, ids, targets)  # on 2 MPI processes

`train_step` is a function of tensors (and dicts or sequences of them)
that returns the loss and the gradients (torch.autograd.grad), or the
updated parameters: functorch's make_fx traces it, forward and backward,
into ATen ops, which become dist ops (dist.matmul, dist.embedding, ...),
linalg generics and tensor reshapes, each at the line of the model that
made it. The placements (Shard, Replicate, Partial per mesh axis) become
the signature's encodings; --dist-auto-parallel places the collectives.

torch is imported when a function of this module is first called, so
`import dist` never needs it. docs/pytorch.md is the guide."""
from .errors import TorchImportError
from .placements import (
    ColwiseParallel,
    DeviceMesh,
    Partial,
    Replicate,
    RowwiseParallel,
    SequenceParallel,
    Shard,
)

__all__ = [
    "ColwiseParallel",
    "Compiled",
    "DeviceMesh",
    "Partial",
    "Replicate",
    "RowwiseParallel",
    "SequenceParallel",
    "Shard",
    "Step",
    "TorchImportError",
    "compile",
    "import_step",
]


def import_step(
    fn, example_args, mesh=None, placements=None, plan=None, name="train_step", context=None
):
    """Traces fn(*example_args) and builds its dist program, a Step (see
    dist.torch._step.import_step for the arguments)."""
    from ._step import import_step as impl

    return impl(fn, example_args, mesh, placements, plan, name, context)


def compile(
    fn,
    example_args,
    mesh=None,
    placements=None,
    plan=None,
    pass_flags="--dist-auto-parallel",
    **run_options,
):
    """import_step, then a Compiled: call it with arguments like
    example_args to run the step on mesh.size MPI processes; `write(path)`
    writes the program for dist-opt."""
    from ._compile import Compiled

    step = import_step(fn, example_args, mesh, placements, plan)
    return Compiled(step, pass_flags, run_options)


def __getattr__(name):
    if name == "Step":
        from ._step import Step

        return Step
    if name == "Compiled":
        from ._compile import Compiled

        return Compiled
    raise AttributeError(f"module 'dist.torch' has no attribute {name!r}")
