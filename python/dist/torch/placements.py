"""DTensor-style placements and parallel styles, and how a plan becomes the
encodings of a step's signature.

A placement list has one entry per mesh axis, as in
torch.distributed._tensor: Shard(d) splits dim d over that axis,
Replicate() keeps it whole, Partial() says each process holds a summand
(inputs only). A plan maps a module prefix (or a parameter or input name) to
a style, as parallelize_module does:

  ColwiseParallel()    nn.Linear: weight [out, in] Shard(0), bias Shard(0)
                       (nn.Embedding: Shard(1), the embedding dim)
  RowwiseParallel()    nn.Linear: weight Shard(1), bias Replicate()
                       (nn.Embedding: Shard(0), dist's vocab-parallel lookup)
  SequenceParallel()   an input (activations [batch, seq, ...]): Shard(1); a
                       module (a LayerNorm): its parameters stay replicated,
                       and the activations around it keep the sequence split
                       they arrive with

Each style works over the mesh axis named `axis` ("tp" by default)."""
from .errors import TorchImportError

# dist.Mesh's limit: a typo'd size must not allocate gigabytes of ids.
MAX_PROCESSES = 2**20


class Placement:
    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self):
        return hash((type(self).__name__, tuple(sorted(vars(self).items()))))


class Shard(Placement):
    def __init__(self, dim):
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError(f"Shard takes a dim (int), not {dim!r}")
        self.dim = dim

    def __repr__(self):
        return f"Shard({self.dim})"


class Replicate(Placement):
    def __repr__(self):
        return "Replicate()"


class Partial(Placement):
    def __repr__(self):
        return "Partial()"


class DeviceMesh:
    """The process mesh: `shape` (a size per axis) and axis `names`."""

    def __init__(self, shape, names=None):
        shape = [shape] if isinstance(shape, int) else list(shape)
        if not shape or any(not isinstance(n, int) or n < 1 for n in shape):
            raise ValueError(f"mesh sizes must be positive integers, not {shape}")
        size = 1
        for n in shape:
            size *= n
        if size > MAX_PROCESSES:
            raise ValueError(f"a mesh of {size} processes is larger than dist's limit of 2^20")
        names = list(names) if names is not None else [f"x{i}" for i in range(len(shape))]
        if len(names) != len(shape) or len(set(names)) != len(names):
            raise ValueError(
                f"a mesh of {len(shape)} axes needs as many distinct names, not {names}"
            )
        self.shape, self.names = shape, names

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def axis(self, name, who):
        if name not in self.names:
            raise TorchImportError(
                f"{who} works over mesh axis {name!r}, which the mesh {self} lacks", what=name
            )
        return self.names.index(name)

    def __repr__(self):
        return f"DeviceMesh({self.shape}, {self.names})"


class _Style:
    def __init__(self, axis="tp"):
        self.axis = axis

    def __repr__(self):
        return f"{type(self).__name__}(axis={self.axis!r})"


class ColwiseParallel(_Style):
    def placement(self, param, shape, embedding):
        if embedding:
            return Shard(1)
        return Shard(0)


class RowwiseParallel(_Style):
    def placement(self, param, shape, embedding):
        if embedding:
            return Shard(0)
        return Shard(1) if len(shape) == 2 else Replicate()


class SequenceParallel(_Style):
    def __init__(self, axis="tp", dim=1):
        super().__init__(axis)
        self.dim = dim

    def placement(self, param, shape, embedding):
        return Replicate()

    def input_placement(self):
        return Shard(self.dim)


STYLES = (ColwiseParallel, RowwiseParallel, SequenceParallel)


def resolve(mesh, names, shapes, params, embeddings, placements, plan):
    """{name: [placement per mesh axis]} for every argument name: the
    explicit `placements`, then the plan's styles, Replicate() elsewhere.
    `params` is the set of parameter names; `embeddings` those used as an
    nn.Embedding table."""
    out = {n: [Replicate() for _ in mesh.shape] for n in names}
    for name, given in (placements or {}).items():
        if name not in out:
            raise TorchImportError(
                f"placements name {name!r}, which is not an argument or parameter of the step "
                f"(it has {', '.join(names)})",
                what=name,
            )
        given = list(given)
        if len(given) != len(mesh.shape):
            raise TorchImportError(
                f"{name!r} has {len(given)} placements for a mesh of {len(mesh.shape)} axes",
                what=name,
            )
        for p in given:
            if not isinstance(p, Placement):
                raise TorchImportError(
                    f"{name!r}: {p!r} is not a placement (Shard, Replicate, Partial)", what=name
                )
        out[name] = given
    for prefix, style in (plan or {}).items():
        if not isinstance(style, STYLES):
            raise TorchImportError(
                f"plan entry {prefix!r}: {style!r} is not a parallel style", what=prefix
            )
        axis = mesh.axis(style.axis, f"plan entry {prefix!r} ({type(style).__name__})")
        if prefix in out and prefix not in params:
            if not isinstance(style, SequenceParallel):
                raise TorchImportError(
                    f"plan entry {prefix!r}: {type(style).__name__} applies to a module's "
                    "parameters; for an input use SequenceParallel or placements",
                    what=prefix,
                )
            out[prefix][axis] = style.input_placement()
            continue
        matched = [p for p in params if p == prefix or p.startswith(prefix + ".")]
        if not matched:
            raise TorchImportError(
                f"the plan names {prefix!r}, but the model has no parameter {prefix!r} or "
                f"{prefix + '.*'!r}",
                what=prefix,
            )
        for p in matched:
            out[p][axis] = style.placement(p, shapes[p], p in embeddings)
    for name, given in out.items():
        check(mesh, name, shapes[name], given)
    return out


def check(mesh, name, shape, given):
    """Each Shard names a dim of `shape` that divides over its axis, and no
    dim is sharded over two axes."""
    seen = {}
    for axis, p in enumerate(given):
        if not isinstance(p, Shard):
            continue
        d = p.dim + len(shape) if p.dim < 0 else p.dim
        if not 0 <= d < len(shape):
            raise TorchImportError(
                f"{name!r}: {p!r} over mesh axis {mesh.names[axis]!r} names no dim of a tensor "
                f"of shape {list(shape)}",
                what=name,
            )
        if d in seen:
            raise TorchImportError(
                f"{name!r}: dim {d} is sharded over mesh axes {mesh.names[seen[d]]!r} and "
                f"{mesh.names[axis]!r}; dist splits a dim over one axis",
                what=name,
            )
        seen[d] = axis
        if shape[d] % mesh.shape[axis]:
            raise TorchImportError(
                f"{name!r}: {p!r} over mesh axis {mesh.names[axis]!r} ({mesh.shape[axis]} "
                f"processes) does not divide dim {d} of size {shape[d]}",
                what=name,
            )
        given[axis] = Shard(d)


def splits_of(given, rank):
    """The mesh axis splitting each dim (None: whole), and the partial axes."""
    splits = [None] * rank
    partial = []
    for axis, p in enumerate(given):
        if isinstance(p, Shard):
            splits[p.dim] = axis
        elif isinstance(p, Partial):
            partial.append(axis)
    return splits, partial
