"""import_step: trace, name the arguments, resolve the plan, lower."""
import collections
import inspect
import operator

from . import placements as _placements
from ._aten import LIKE, LOWERINGS, NODE_LOWERINGS, find_matmul_grads, in_place
from ._importer import _DTYPES, TENSORS, Collapsed, Const, Importer, Transposed, Val, _aten, _prod
from .errors import TorchImportError

_PRODUCTS = {"aten.mm.default": (0, 1), "aten.bmm.default": (0, 1), "aten.addmm.default": (1, 2)}


def _leaf_names(fn, args):
    """A name per pytree leaf of `args`: a dict's keys, else the
    parameter's name in fn's signature (with .i for sequences)."""
    from torch.utils import _pytree as pytree

    try:
        sig = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        sig = []
    keyword_only = [p.name for p in sig if p.kind == p.KEYWORD_ONLY and p.default is p.empty]
    if keyword_only:
        raise TorchImportError(
            f"the step takes {keyword_only[0]!r} by keyword only; its tensors are passed by position",
            what=keyword_only[0],
        )
    names = []
    for i, arg in enumerate(args):
        base = f"arg{i}"
        if i < len(sig) and sig[i].kind in (sig[i].POSITIONAL_ONLY, sig[i].POSITIONAL_OR_KEYWORD):
            base = sig[i].name
        elif sig and sig[min(i, len(sig) - 1)].kind == sig[0].VAR_POSITIONAL:
            var = next(p for p in sig if p.kind == p.VAR_POSITIONAL)
            base = f"{var.name}.{i - sig.index(var)}"
        if isinstance(arg, dict):
            names += [str(k) for k in arg]
            for k, v in arg.items():
                if pytree.tree_flatten(v)[0] != [v]:
                    raise TorchImportError(
                        f"argument {base!r}: entry {k!r} is not a tensor", what=base
                    )
        elif isinstance(arg, (list, tuple)):
            names += [f"{base}.{j}" for j in range(len(arg))]
        else:
            names.append(base)
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise TorchImportError(f"two arguments are both named {dup[0]!r}", what=dup[0])
    return names


class Step:
    """An imported training step: `module` (a dist.Module holding
    @`name`, marked {dist.complete}), `text` (its IR with locations), the
    arguments' `names`, `shapes`, `dtypes` and `placements`, and the
    results' `outputs` ((path, shape, placements, the parameter it is tied
    to or None) per leaf), `output_dtypes` and `out_spec` (fn's output
    structure)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def collectives(self, pipeline="dist-auto-parallel"):
        """What `pipeline` makes of the step, in program order: a
        Collective per collective (op, location: (file, line) in the user's
        code or None, bytes per process, stream: "mp"/"dp" when it runs
        asynchronously, else None)."""
        return collectives(self, pipeline)

    def __repr__(self):
        return f"<dist.torch.Step @{self.name}: {len(self.names)} arguments, {len(self.outputs)} results>"


class _Lowering(Importer):
    def build(self, out_leaves, out_placements):
        from dist.builder import FunctionBuilder

        dist = self.dist
        self.t_f32 = dist.Type.parse("f32", self.ctx)
        self.t_i64 = dist.Type.parse("i64", self.ctx)
        self.t_i1 = dist.Type.parse("i1", self.ctx)
        self.t_index = dist.Type.parse("index", self.ctx)
        types, vals = [], []
        for name, dtype, shape, given, is_param in self.args:
            splits, partial = _placements.splits_of(given, len(shape))
            t = self.ty(shape, dtype, splits, encoded=True, partial=partial)
            types.append((t, {"dist.param": name}) if is_param else t)
            vals.append((shape, dtype, splits, is_param))
        self.f = FunctionBuilder(self.module, self.name, types, markers={"dist.complete": True})
        graph = self.gm.graph
        nodes = list(graph.nodes)
        placeholders = [n for n in nodes if n.op == "placeholder"]
        for node, value, (shape, dtype, splits, is_param) in zip(
            placeholders, self.f.arguments, vals
        ):
            self.vals[node] = Val(value, shape, dtype, splits, is_param)
        output = next(n for n in nodes if n.op == "output")
        _refuse_view_mutation(nodes, self.locate)
        self.lazy = self._foldable_transposes(nodes)
        self.fusions = find_matmul_grads(self.lazy, nodes)
        needed = self._needed(output)
        for node in nodes:
            if node in self.vals:  # made with another (a matmul_grad's two products)
                continue
            if (
                node.op in ("call_function", "get_attr")
                and node in needed
                and node not in self.lazy
            ):
                self.node = node
                self.loc = self.locate(node.stack_trace)
                self.f.at(*(self.loc or (None,)))
                self.vals[node] = self._lower(node)
        self.node, self.loc = None, None
        self.f.at(None)
        results, self.output_dtypes = [], []
        for (path, leaf), given in zip(out_leaves, out_placements):
            self.node = leaf if hasattr(leaf, "op") else None
            # A result's reshard (a gradient's allreduce) is at the line of
            # the op that made it.
            self.loc = self.locate(leaf.stack_trace) if self.node is not None else None
            self.f.at(*(self.loc or (None,)))
            v = self.vals.get(leaf) if hasattr(leaf, "op") else None
            if v is None and hasattr(leaf, "op") and leaf in self.lazy:
                v = self._materialize(leaf)
            if isinstance(v, (Const, Collapsed, Transposed)):
                v = self.tensor(v)
            if not isinstance(v, Val):
                hint = (
                    " (the gradient of a parameter the loss does not use?)" if leaf is None else ""
                )
                raise TorchImportError(
                    f"result {path} is not a tensor the step computes ({leaf!r}){hint}", what=path
                )
            splits, partial = _placements.splits_of(given, len(v.shape))
            value = self.conform(v, splits)
            want = self.ty(v.shape, v.dtype, splits, encoded=True, partial=partial)
            if value.type != want:
                value = self.f.op("dist.constraint", [value], [want])[0]
            results.append(value)
            self.output_dtypes.append(v.dtype)
        self.f.return_(*results)

    def _needed(self, output):
        needed, work = set(), [output]
        while work:
            n = work.pop()
            for a in n.all_input_nodes:
                if a not in needed:
                    needed.add(a)
                    work.append(a)
        return needed

    def _foldable_transposes(self, nodes):
        """aten.t (and transposes of the last two dims) whose every use is
        an operand of a product, directly or through such transposes: the
        product reads its operand transposed instead."""
        lazy = set()
        for node in reversed(nodes):
            if node.op != "call_function":
                continue
            name = _aten(node)
            meta = node.meta.get("tensor_meta")
            rank = len(meta.shape) if meta is not None else -1
            is_t = name == "aten.t.default" and rank == 2
            if name == "aten.transpose.int" and rank in (2, 3):
                dims = sorted(d % rank for d in node.args[1:3])
                is_t = dims == [rank - 2, rank - 1]
            if not is_t or not node.users:
                continue
            ok = True
            for user in node.users:
                pos = _PRODUCTS.get(_aten(user))
                if user in lazy:
                    continue
                if pos is None or not any(user.args[i] is node for i in pos):
                    ok = False
            if ok:
                lazy.add(node)
        return lazy

    def _materialize(self, node):
        from ._aten import _transpose

        src = self.vals.get(node.args[0])
        if src is None:
            src = self._materialize(node.args[0])
        rank = len(src.shape)
        return _transpose(self, src, rank - 2, rank - 1)

    def get(self, arg):
        import torch.fx

        if isinstance(arg, torch.fx.Node) and arg not in self.vals and arg in self.lazy:
            self.vals[arg] = self._materialize(arg)
        return super().get(arg)

    def _lower(self, node):
        import torch

        if node.op == "get_attr":
            return Const(getattr(self.gm, node.target))
        if node.target is operator.getitem:
            seq, i = self.get(node.args[0]), node.args[1]
            return seq[i]
        name = _aten(node)
        if name in NODE_LOWERINGS:
            return NODE_LOWERINGS[name](self, node)
        args = [self.get(a) for a in node.args]
        kwargs = {k: self.get(v) for k, v in node.kwargs.items()}
        flat = [
            a for a in _flatten(args) + _flatten(list(kwargs.values())) if isinstance(a, TENSORS)
        ]
        if _packet(node) in _RANDOM:
            self.fail(
                f"{name} draws random numbers, which a compiled program cannot draw as torch "
                "does (nn.Dropout in training mode makes it): import the model in eval() mode, "
                "or with p=0",
                what=name,
            )
        if name in LIKE:
            like = args[0]
            dtype = kwargs.get("dtype") or _torch_dtype(like)
            fill = LIKE[name]
            return Const(torch.full(like.shape, fill, dtype=dtype))
        if all(isinstance(a, Const) for a in flat) and not name.startswith("aten.native_dropout"):
            return self._fold(node, args, kwargs)
        for a in flat:
            if a.dtype is None:
                self.fail(
                    f"element type {getattr(a, 'tensor', None) is not None and a.tensor.dtype} is not supported"
                )
        lower = LOWERINGS.get(name)
        if lower is None and in_place(name) in LOWERINGS:
            lower = LOWERINGS[in_place(name)]
        if name == "aten.copy_.default":
            return self.broadcast_to(args[1], list(args[0].shape))
        if lower is None:
            self.fail(
                f"no lowering for {name} (the ATen op this line of the model makes)", what=name
            )
        return lower(self, *args, **kwargs)

    def _fold(self, node, args, kwargs):
        import torch

        def real(x):
            if isinstance(x, Const):
                return x.tensor
            if isinstance(x, (list, tuple)):
                return type(x)(real(y) for y in x)
            return x

        out = node.target(*real(args), **{k: real(v) for k, v in kwargs.items()})
        if isinstance(out, torch.Tensor):
            return Const(out)
        if isinstance(out, (list, tuple)):
            return type(out)(Const(o) if isinstance(o, torch.Tensor) else o for o in out)
        return out


# Ops that draw random numbers: never folded, never lowered.
_RANDOM = {
    "bernoulli",
    "bernoulli_",
    "native_dropout",
    "dropout",
    "rand",
    "rand_like",
    "randn",
    "randn_like",
    "randint",
    "randint_like",
    "randperm",
    "normal",
    "normal_",
    "uniform_",
    "multinomial",
    "exponential_",
    "geometric_",
    "random_",
    "cauchy_",
    "log_normal_",
}

# Ops whose result aliases their first argument's storage.
_VIEWS = {
    "view",
    "_unsafe_view",
    "_reshape_alias",
    "reshape",
    "t",
    "transpose",
    "permute",
    "expand",
    "select",
    "slice",
    "split",
    "split_with_sizes",
    "unsqueeze",
    "squeeze",
    "alias",
    "detach",
    "diagonal",
    "as_strided",
    "narrow",
    "unbind",
}


def _packet(node):
    t = node.target
    return t.overloadpacket.__name__ if hasattr(t, "overloadpacket") else None


def _is_view(node):
    if node.op != "call_function":
        return False
    if node.target is operator.getitem:
        return _is_view(node.args[0])
    return _packet(node) in _VIEWS


def _refuse_view_mutation(nodes, locate):
    """The importer treats an in-place op as making a new value: right for
    a tensor nothing else aliases, wrong where it updates a view (the base
    changes too) or a base whose view is read after the update. Those are
    refused."""
    order = {n: i for i, n in enumerate(nodes)}
    for node in nodes:
        name = _packet(node)
        if node.op != "call_function" or not name or not name.endswith("_") or name.endswith("__"):
            continue
        target = node.args[0]
        where = locate(node.stack_trace)
        if hasattr(target, "op") and _is_view(target):
            raise TorchImportError(
                f"aten.{name} updates in place a view ({_packet(target) or 'getitem'}) of another "
                "tensor, which the importer cannot follow; write the update functionally "
                "(torch.where, torch.cat) or on the tensor itself",
                what=f"aten.{name}",
                location=where,
            )
        for alias in target.users if hasattr(target, "users") else ():
            if alias is node or not _is_view(alias):
                continue
            late = [u for u in alias.users if order.get(u, -1) > order[node]]
            if late:
                raise TorchImportError(
                    f"aten.{name} updates in place a tensor whose view ({_packet(alias)}) is read "
                    "after the update, which the importer cannot follow; update a copy (clone) "
                    "instead",
                    what=f"aten.{name}",
                    location=where,
                )


def _flatten(xs):
    out = []
    for x in xs:
        if isinstance(x, (list, tuple)):
            out += _flatten(list(x))
        else:
            out.append(x)
    return out


def _torch_dtype(x):
    import torch

    return {"f32": torch.float32, "i64": torch.int64, "i1": torch.bool}[x.dtype]


def _output_leaves(gm):
    """(path, node) per leaf of the step's output, and its structure."""
    from torch.utils import _pytree as pytree

    out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    info = getattr(gm.graph._codegen, "pytree_info", None)
    if info is not None and info.out_spec is not None:
        # make_fx returns the leaves; the structure is the codegen's.
        out = pytree.tree_unflatten(list(out), info.out_spec)
    leaves, spec = pytree.tree_flatten(out)
    paths = []

    def walk(x, path):
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, f"{path}[{k!r}]")
        elif isinstance(x, (list, tuple)):
            for i, v in enumerate(x):
                walk(v, f"{path}[{i}]")
        else:
            paths.append(path or "result")

    walk(out, "")
    return list(zip(paths, leaves)), spec, out


def _param_outputs(out, params, shapes):
    """{leaf node: parameter name} for each sequence or dict of the output
    that holds one tensor per parameter, in the parameters' order (the
    gradients of torch.autograd.grad, the updated parameters)."""
    tied = {}

    def walk(x):
        if isinstance(x, dict):
            if list(map(str, x)) == params:
                tied.update({v: k for k, v in zip(params, x.values())})
                return
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            if len(x) == len(params) and all(
                hasattr(v, "meta")
                and "tensor_meta" in v.meta
                and tuple(v.meta["tensor_meta"].shape) == tuple(shapes[p])
                for v, p in zip(x, params)
            ):
                tied.update({v: p for v, p in zip(x, params)})
                return
            for v in x:
                walk(v)

    walk(out)
    return tied


def import_step(
    fn, example_args, mesh=None, placements=None, plan=None, name="train_step", context=None
):
    """Traces `fn(*example_args)` (make_fx) and builds @`name`, a dist
    program marked for completion whose signature carries the placements.

    `example_args` is a tuple of tensors, or of dicts and sequences of
    tensors (a model's parameters); tensors that require grad are the
    parameters. `mesh` is a DeviceMesh (one process when None);
    `placements` maps an argument or parameter name to one placement per
    mesh axis; `plan` maps a module prefix to a parallel style
    (ColwiseParallel, RowwiseParallel, SequenceParallel). Results tied to
    the parameters (a sequence or dict with one tensor per parameter, in
    their order: the gradients, the updated parameters) are distributed
    as their parameter, other results replicated. Raises TorchImportError
    naming the ATen op or the name, and the user's source line."""
    import torch

    import dist
    from . import _trace

    if not callable(fn):
        raise TypeError(f"the step must be a function, not {fn!r}")
    if not isinstance(example_args, (tuple, list)):
        example_args = (example_args,)
    mesh = mesh or _placements.DeviceMesh([1], ["x"])
    if not isinstance(mesh, _placements.DeviceMesh):
        raise TypeError(f"mesh must be a dist.torch.DeviceMesh, not {mesh!r}")
    names = _leaf_names(fn, example_args)
    from torch.utils import _pytree as pytree

    leaves = pytree.tree_flatten(list(example_args))[0]
    if len(leaves) != len(names):
        raise TorchImportError(
            "the step's arguments nest deeper than tensors, dicts and lists of tensors, "
            f"which the importer names ({len(leaves)} tensors, {len(names)} names)"
        )
    for n, t in zip(names, leaves):
        if not isinstance(t, torch.Tensor):
            raise TorchImportError(
                f"argument {n!r} is {type(t).__name__}, not a tensor: bind constants into the step "
                "(functools.partial)",
                what=n,
            )
        if str(t.dtype) not in _DTYPES:
            raise TorchImportError(
                f"argument {n!r} is {t.dtype}; the importer takes float32, int64 and bool tensors",
                what=n,
            )
    gm = _trace.trace(fn, tuple(example_args))
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(leaves):
        raise TorchImportError(
            f"the trace has {len(placeholders)} inputs for {len(leaves)} argument tensors"
        )
    shapes = {n: tuple(t.shape) for n, t in zip(names, leaves)}
    params = [n for n, t in zip(names, leaves) if t.requires_grad]
    embeddings = set()
    by_node = dict(zip(placeholders, names))
    for node in gm.graph.nodes:
        if (
            node.op == "call_function"
            and _aten(node) == "aten.embedding.default"
            and node.args[0] in by_node
        ):
            embeddings.add(by_node[node.args[0]])
    given = _placements.resolve(mesh, names, shapes, set(params), embeddings, placements, plan)
    args = [
        (n, _DTYPES[str(t.dtype)], tuple(t.shape), given[n], n in params)
        for n, t in zip(names, leaves)
    ]
    out_leaves, out_spec, out = _output_leaves(gm)
    tied = _param_outputs(out, params, shapes)
    out_placements = []
    for path, leaf in out_leaves:
        if leaf in tied:
            out_placements.append(list(given[tied[leaf]]))
        else:
            out_placements.append([_placements.Replicate() for _ in mesh.shape])
    ctx = context or dist.Context()
    module = dist.Module.create(ctx)
    lowering = _Lowering(gm, module, mesh, name, args, _trace.user_location)
    lowering.build(out_leaves, out_placements)
    try:
        module.verify()
    except dist.DiagnosticError as e:
        raise TorchImportError(
            f"the imported program does not verify (a bug of dist.torch): {e}"
        ) from e
    outputs = []
    for (path, leaf), p in zip(out_leaves, out_placements):
        meta = leaf.meta.get("tensor_meta") if hasattr(leaf, "meta") else None
        outputs.append((path, tuple(meta.shape) if meta is not None else None, p, tied.get(leaf)))
    return Step(
        module=module,
        text=module.print(debug_info=True),
        name=name,
        mesh=mesh,
        names=names,
        shapes=[tuple(t.shape) for t in leaves],
        dtypes=[_DTYPES[str(t.dtype)] for t in leaves],
        placements=[given[n] for n in names],
        params=params,
        outputs=outputs,
        output_dtypes=lowering.output_dtypes,
        out_spec=out_spec,
        graph=gm,
    )


_COLLECTIVES = (
    "dist.allreduce",
    "dist.all_gather",
    "dist.reduce_scatter",
    "dist.all_to_all",
    "dist.broadcast",
    "dist.c_identity",
)


Collective = collections.namedtuple("Collective", "op location bytes stream")


def collectives(step, pipeline="dist-auto-parallel"):
    """The collectives `pipeline` places in the step (Step.collectives)."""
    import dist
    from dist import _ods

    module = dist.Module.parse(step.text, context=step.module.context)
    module.run(pipeline)
    found = []
    for op in module.walk():
        if op.name not in _COLLECTIVES:
            continue
        loc = _file_line(op.location)
        t = op.results[0].type
        if isinstance(t, dist.FutureType):
            t = t.value_type
        nbytes = _prod(t.shape) * 4
        stream = op.attributes.get("stream")
        if stream is not None:
            # An i32 enum attribute: its spelling from the ODS facts.
            value = int(str(stream).split(":")[0])
            stream = next((k for k, v in _ods.ENUMS["StreamKind"].items() if v == value), value)
        found.append(Collective(op.name, loc, nbytes, stream))
    return found


def _file_line(location):
    import re

    m = re.search(r'"([^"]+)":(\d+):\d+', str(location))
    return (m.group(1), int(m.group(2))) if m else None
