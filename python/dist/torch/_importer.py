"""ATen graph -> dist program.

Every tensor of the graph becomes a Val: its SSA value, global shape,
element type and `splits` (the mesh axis splitting each dim, or None).
Types hold local shapes, so the importer decides which dims are split; it
does not decide partial sums or place collectives: intermediate types are
left undecided in a function marked {dist.complete}, and --dist-complete
decides their distributions and places every collective.

Where an op needs an operand split otherwise than it is (a LayerNorm's
sequence-split output entering a column-parallel product), the importer
writes a dist.reshard to the split it needs, with that encoding; a Val keeps
every such version, so a backward op that reads the forward's saved tensor
reuses the gathered copy. Which splits an op runs with is chosen per op
(`_decide`): the candidates are its operands' splits, and the cost is the
elements gathered (a parameter is never gathered when another choice
exists: the plan keeps weights split, activations move), then the number of
reshards written, then the op's local work."""
import itertools
import struct

import numpy as np

from .errors import TorchImportError

F32, I64, I1 = "f32", "i64", "i1"
_DTYPES = {"torch.float32": F32, "torch.int64": I64, "torch.bool": I1}
_NEVER = 1e18


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def f32_literal(x):
    """The exact f32 attribute text of `x` (hex of its bits)."""
    return "0x%08X : f32" % struct.unpack("<I", struct.pack("<f", float(x)))[0]


class Val:
    """A tensor of the graph as the program holds it."""

    __slots__ = ("value", "shape", "dtype", "splits", "param", "versions")

    def __init__(self, value, shape, dtype, splits, param=False):
        self.value, self.shape, self.dtype = value, tuple(shape), dtype
        self.splits, self.param = tuple(splits), param
        self.versions = {self.splits: value}


class Collapsed:
    """A view merging leading dims of `inner` whose inner dims are split
    (torch.matmul's [b, n, s, d] -> [b * n, s, d] around a bmm, with the
    heads split): the merged dim's global order would need a gather, so it
    stays `inner` until an op other than a batched product reads it."""

    __slots__ = ("inner", "shape", "dtype", "lead")

    def __init__(self, inner, shape, lead):
        self.inner, self.shape, self.dtype, self.lead = inner, tuple(shape), inner.dtype, lead


class Transposed:
    """The transpose of a 2-d Val, not built: a product reads it through
    its transpose attribute, a transpose of it is the Val itself."""

    __slots__ = ("inner", "shape", "dtype")

    def __init__(self, inner):
        self.inner, self.shape, self.dtype = inner, tuple(reversed(inner.shape)), inner.dtype


class Const:
    """A tensor that does not depend on the step's arguments (a causal mask,
    ones_like's ones): folded at import time with torch."""

    __slots__ = ("tensor", "shape", "dtype", "cache")

    def __init__(self, tensor):
        self.tensor = tensor
        self.shape = tuple(tensor.shape)
        self.dtype = _DTYPES.get(str(tensor.dtype))
        self.cache = {}

    def splat(self):
        """The one value of every element, or None."""
        flat = self.tensor.reshape(-1)
        if flat.numel() == 0:
            return None
        first = flat[0]
        return first.item() if bool((flat == first).all()) else None


# What a node's value may be when it is a tensor.
TENSORS = (Val, Const, Collapsed, Transposed)


def _aten(node):
    t = node.target
    return (
        str(t)
        if not hasattr(t, "overloadpacket")
        else f"aten.{t.overloadpacket.__name__}.{t._overloadname}"
    )


class Importer:
    def __init__(self, gm, module, mesh, name, args, locate):
        """`args`: per placeholder (name, dtype, shape, placements, is_param)."""
        import dist

        self.dist = dist
        self.gm, self.module, self.ctx = gm, module, module.context
        self.M = mesh
        self.mesh = dist.Mesh(mesh.shape, names=mesh.names, context=self.ctx)
        self.name, self.args, self.locate = name, args, locate
        self.vals = {}
        self.lookups = {}  # ids node -> the embedding's table Val
        self.constants = {}  # (element type, shape, bytes) -> Val
        self.loc = None
        self.node = None

    # -- types -----------------------------------------------------------------

    def local(self, shape, splits):
        return [n // (self.M.shape[a] if a is not None else 1) for n, a in zip(shape, splits)]

    def enc(self, splits, partial=()):
        dims = [a if a is not None else -1 for a in splits]
        return self.dist.TensorDist(self.mesh, dims, {a: "sum" for a in partial} or None)

    def ty(self, shape, dtype, splits, encoded=False, partial=()):
        e = self.enc(splits, partial) if encoded else None
        return self.dist.TensorType(self.local(shape, splits), dtype, e, context=self.ctx)

    def attr(self, text):
        return self.dist.Attribute.parse(text, self.ctx)

    # -- errors ----------------------------------------------------------------

    def fail(self, message, what=None):
        raise TorchImportError(
            message, what=what or (_aten(self.node) if self.node else None), location=self.loc
        )

    # -- scalars in bodies -----------------------------------------------------

    def c(self, x, dtype=F32):
        if dtype == F32:
            return self.f.op(
                "arith.constant", [], [self.t_f32], {"value": self.attr(f32_literal(x))}
            )[0]
        if dtype == I1:
            return self.f.op(
                "arith.constant", [], [self.t_i1], {"value": self.attr("true" if x else "false")}
            )[0]
        return self.f.op(
            "arith.constant", [], [self.t_i64], {"value": self.attr(f"{int(x)} : i64")}
        )[0]

    def a(self, name, *xs):
        return self.f.arith(name, *xs)

    def mth(self, name, x):
        return self.f.op(f"math.{name}", [x], [x.type])[0]

    def select(self, cond, x, y):
        return self.f.op("arith.select", [cond, x, y], [x.type])[0]

    def cmpf(self, pred, x, y):
        preds = [
            "false",
            "oeq",
            "ogt",
            "oge",
            "olt",
            "ole",
            "one",
            "ord",
            "ueq",
            "ugt",
            "uge",
            "ult",
            "ule",
            "une",
            "uno",
            "true",
        ]
        return self.f.op(
            "arith.cmpf",
            [x, y],
            [self.t_i1],
            {"predicate": self.attr(f"{preds.index(pred)} : i64")},
        )[0]

    def erf(self, x):
        """erf by Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7): the
        lowering has no math.erf."""
        ax = self.mth("absf", x)
        t = self.a(
            "divf", self.c(1.0), self.a("addf", self.c(1.0), self.a("mulf", ax, self.c(0.3275911)))
        )
        poly = self.c(1.061405429)
        for k in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
            poly = self.a("addf", self.a("mulf", poly, t), self.c(k))
        poly = self.a("mulf", poly, t)
        e = self.mth("exp", self.a("negf", self.a("mulf", ax, ax)))
        y = self.a("subf", self.c(1.0), self.a("mulf", poly, e))
        return self.select(self.cmpf("olt", x, self.c(0.0)), self.a("negf", y), y)

    # -- values ----------------------------------------------------------------

    def get(self, arg):
        """The Val, Const or Python value of a node argument."""
        import torch.fx

        if isinstance(arg, torch.fx.Node):
            return self.vals[arg]
        if isinstance(arg, (list, tuple)):
            return type(arg)(self.get(a) for a in arg)
        return arg

    def tensor(self, x, splits=None):
        """`x` (Val or Const) as a Val; a Const is materialized (a splat at
        any split, other constants whole)."""
        if isinstance(x, Val):
            return x
        if isinstance(x, Collapsed):
            return self.reshape(x.inner, x.shape, lazy=False)
        if isinstance(x, Transposed):
            return self.permute(x.inner, [1, 0])
        if not isinstance(x, Const):
            self.fail(f"expected a tensor, got {x!r}")
        if x.dtype is None:
            self.fail(
                f"constant of element type {x.tensor.dtype} is not supported (float32, int64, bool are)"
            )
        s = x.splat()
        splits = tuple(splits) if splits is not None and s is not None else (None,) * len(x.shape)
        if splits in x.cache:
            return x.cache[splits]
        if s is None:
            v = self._dense(x)
        else:
            t = self.ty(x.shape, x.dtype, splits)
            lit = {F32: lambda: f32_literal(s).split(" :")[0], I1: lambda: "true" if s else "false"}
            text = lit.get(x.dtype, lambda: str(int(s)))()
            attr = self.attr(f"dense<{text}> : {self._tensor_text(t)}")
            v = Val(
                self.f.op("arith.constant", [], [t], {"value": attr})[0], x.shape, x.dtype, splits
            )
        x.cache[splits] = v
        return v

    def _tensor_text(self, t):
        return f"tensor<{''.join(f'{n}x' for n in t.shape)}{t.element_type}>"

    def _dense(self, x):
        """A constant of `x`'s values, one per distinct content (the same
        causal mask of every layer is one constant). Bools are stored as
        i8 bytes (hex, fast to print and parse) and compared with 0."""
        a = x.tensor.detach().cpu().numpy()
        stored = {F32: "<f4", I64: "<i8", I1: "<i1"}[x.dtype]
        data = np.ascontiguousarray(a, dtype=stored).tobytes()
        key = (x.dtype, a.shape, data)
        if key in self.constants:
            return self.constants[key]
        element = "i8" if x.dtype == I1 else x.dtype
        shape = "".join(f"{n}x" for n in a.shape)
        attr = self.attr(f'dense<"0x{data.hex().upper()}"> : tensor<{shape}{element}>')
        t = self.dist.TensorType(list(a.shape), element, None, context=self.ctx)
        value = self.f.op("arith.constant", [], [t], {"value": attr})[0]
        v = Val(value, a.shape, element, [None] * a.ndim)
        if x.dtype == I1:
            i8 = self.dist.Type.parse("i8", self.ctx)
            zero = self.f.op("arith.constant", [], [i8], {"value": self.attr("0 : i8")})[0]
            dims = list(range(a.ndim))
            v = self.generic(
                list(a.shape),
                [(v, dims)],
                dims,
                lambda b: self.f.arith("cmpi", b, zero, predicate="ne"),
                dtype=I1,
            )
        self.constants[key] = v
        return v

    def conform(self, v, splits):
        """`v`'s value split as `splits`: the Val's own, a version made
        before, or a new dist.reshard to that encoding."""
        splits = tuple(splits)
        if splits in v.versions:
            return v.versions[splits]
        r = self.f.op("dist.reshard", [v.value], [self.ty(v.shape, v.dtype, splits, encoded=True)])[
            0
        ]
        v.versions[splits] = r
        return r

    # -- choosing splits -------------------------------------------------------

    def decide(self, loops, operands, index_loops=(), fixed=None):
        """The mesh axis (or None) of each loop: `operands` are (Val,
        loop of each dim) pairs."""
        cands = []
        for l, size in enumerate(loops):
            c = [None]
            if fixed and l in fixed:
                cands.append([fixed[l]])
                continue
            if l not in index_loops:
                for v, dl in operands:
                    for splits in v.versions:
                        for d, ll in enumerate(dl):
                            a = splits[d]
                            if (
                                ll == l
                                and a is not None
                                and a not in c
                                and size % self.M.shape[a] == 0
                            ):
                                c.append(a)
            cands.append(c)
        best = None
        for combo in itertools.product(*cands):
            axes = [a for a in combo if a is not None]
            if len(axes) != len(set(axes)):
                continue
            cost = self.cost(combo, loops, operands)
            if best is None or cost < best[0]:
                best = (cost, combo)
        return best[1]

    def cost(self, combo, loops, operands):
        total = 0.0
        for v, dl in operands:
            need = tuple(combo[l] for l in dl)
            if need in v.versions:
                continue
            moved = min(
                any(s is not None and s != n for s, n in zip(have, need)) for have in v.versions
            )
            if moved:
                total += _NEVER if v.param else 4.0 * _prod(self.local(v.shape, need))
            total += 1.0
        work = _prod(n // (self.M.shape[a] if a is not None else 1) for n, a in zip(loops, combo))
        return total + 1e-3 * work

    # -- linalg ----------------------------------------------------------------

    def generic(
        self,
        loops,
        operands,
        out_loops,
        body,
        reduce=None,
        init=0.0,
        dtype=F32,
        index_loops=(),
        fixed=None,
        splits=None,
        param=False,
        scalar_dtype=F32,
    ):
        """A linalg.generic over `loops` (global sizes). `operands` are (Val,
        loop of each dim) or ("scalar", Python number or Const splat, a
        constant of `scalar_dtype` in the body);
        `out_loops` are the result's dims, the other loops are reductions
        combined by `reduce` ("addf", "maximumf") from `init`. `body(*xs)`
        gets an element of each tensor operand, in order, then the scalar
        operands' constants, and returns the result's element."""
        tensors = [(v, dl) for v, dl in operands if isinstance(v, Val)]
        if splits is None:
            splits = self.decide(loops, tensors, index_loops, fixed)
        values = [self.conform(v, [splits[l] for l in dl]) for v, dl in tensors]
        if reduce is None and len(out_loops) != len(loops):
            raise AssertionError("loops without a reduction")
        order = list(out_loops) + [l for l in range(len(loops)) if l not in out_loops]
        pos = {l: i for i, l in enumerate(order)}
        ds = ", ".join(f"d{i}" for i in range(len(order)))

        def amap(dl):
            return f"({ds}) -> ({', '.join(f'd{pos[l]}' for l in dl)})"

        out_shape = [loops[l] for l in out_loops]
        out_splits = [splits[l] for l in out_loops]
        rty = self.ty(out_shape, dtype, out_splits)
        e = self.f.op("tensor.empty", [], [rty])[0]
        scalar_t = {F32: self.t_f32, I1: self.t_i1, I64: self.t_i64}[dtype]
        if reduce is not None:
            c = self.c(init, dtype)
            e = self.f.body(
                "linalg.fill",
                [c, e],
                [rty],
                {"operandSegmentSizes": self.attr("array<i32: 1, 1>")},
                [scalar_t, scalar_t],
                lambda value, _: self.f.op("linalg.yield", [value]),
            )[0]
        scalars = [x for v, x in operands if not isinstance(v, Val)]

        def build(*xs):
            consts = [self.c(s, scalar_dtype) for s in scalars]
            r = body(*(list(xs[:-1]) + consts))
            return self.a(reduce, r, xs[-1]) if reduce is not None else r

        maps = [amap(dl) for _, dl in tensors] + [amap(out_loops)]
        its = ["parallel" if l in out_loops else "reduction" for l in order]
        (r,) = self.f.generic(values, [e], maps, its, build)
        return Val(r, out_shape, dtype, out_splits, param)

    def operand(self, x, out_shape):
        """An elementwise operand of result shape `out_shape` (numpy
        broadcasting): (Val, loops) with broadcast unit dims dropped, or
        ("scalar", value) for a Python number, a 0-d or splat constant."""
        if isinstance(x, (int, float, bool)):
            return ("scalar", float(x))
        if isinstance(x, Const) and x.splat() is not None:
            return ("scalar", float(x.splat()))
        v = self.tensor(x)
        lead = len(out_shape) - len(v.shape)
        if lead < 0:
            self.fail(f"operand of shape {list(v.shape)} does not broadcast to {list(out_shape)}")
        keep = [d for d, n in enumerate(v.shape) if not (n == 1 and out_shape[lead + d] != 1)]
        if len(keep) != len(v.shape):
            v = self.reshape(v, [v.shape[d] for d in keep])
        return (v, [lead + d for d in keep])

    def ew(self, inputs, body, dtype=F32, index_loops=(), integer=False):
        """Elementwise over broadcast `inputs`; `body` gets an element of
        each input in order (Python numbers as constants, f32 unless
        `integer`). Float arithmetic on int64 tensors is refused."""
        for x in inputs:
            if isinstance(x, TENSORS) and x.dtype == I64 and not integer:
                self.fail(
                    "arithmetic on int64 tensors is not supported (float32 is; int64 ids feed embeddings and losses)"
                )
        shapes = [tuple(x.shape) for x in inputs if isinstance(x, TENSORS)]
        out = list(np.broadcast_shapes(*shapes)) if shapes else []
        ops = [self.operand(x, out) for x in inputs]
        order = [i for i, (v, _) in enumerate(ops) if isinstance(v, Val)] + [
            i for i, (v, _) in enumerate(ops) if not isinstance(v, Val)
        ]
        ordered = [ops[i] for i in order]

        def b(*xs):
            back = [None] * len(xs)
            for k, i in enumerate(order):
                back[i] = xs[k]
            return body(*back)

        return self.generic(
            out,
            ordered,
            list(range(len(out))),
            b,
            dtype=dtype,
            index_loops=index_loops,
            scalar_dtype=I64 if integer else F32,
        )

    def reduce(self, v, dims, kind="addf", init=0.0, square=False):
        """`v` reduced over `dims` (keepdim=False)."""
        v = self.tensor(v)
        loops = list(v.shape)
        out = [l for l in range(len(loops)) if l not in dims]
        fn = (lambda x: self.a("mulf", x, x)) if square else (lambda x: x)
        return self.generic(loops, [(v, list(range(len(loops))))], out, fn, reduce=kind, init=init)

    def keepdim(self, v, shape):
        return self.reshape(v, shape) if tuple(v.shape) != tuple(shape) else v

    # -- views -----------------------------------------------------------------

    def reshape(self, v, shape, lazy=True):
        shape = [int(n) for n in shape]
        if isinstance(v, Collapsed) and tuple(shape) == v.inner.shape:
            return v.inner
        v = self.tensor(v)
        if -1 in shape:
            known = _prod(n for n in shape if n != -1)
            shape[shape.index(-1)] = _prod(v.shape) // max(known, 1)
        if tuple(shape) == v.shape:
            return v
        if _prod(shape) != _prod(v.shape):
            self.fail(f"cannot view {list(v.shape)} as {shape}")
        groups = _reassociation(list(v.shape), shape)
        if lazy and groups and len(groups[0][0]) > 1 and groups[0][1] == [0]:
            lead = groups[0][0]
            rest_same = all(len(gi) == 1 and len(gj) == 1 for gi, gj in groups[1:])
            big = [d for d in lead if v.shape[d] != 1]
            if rest_same and any(v.splits[d] is not None for d in big[1:]):
                return Collapsed(v, shape, len(lead))
        need = list(v.splits)
        out_splits = [None] * len(shape)
        for gi, gj in groups:
            big_in = [d for d in gi if v.shape[d] != 1]
            big_out = [d for d in gj if shape[d] != 1]
            for d in big_in[1:]:
                need[d] = None
            for d in gi:
                if v.shape[d] == 1:
                    need[d] = None
            a = need[big_in[0]] if big_in else None
            if a is not None:
                if big_out and shape[big_out[0]] % self.M.shape[a] == 0:
                    out_splits[big_out[0]] = a
                else:
                    need[big_in[0]] = None
        src = self.conform(v, need)
        local_in = self.local(v.shape, need)
        local_out = self.local(shape, out_splits)
        collapse_only = all(len(gj) == 1 for _, gj in groups)
        expand_only = all(len(gi) == 1 for gi, _ in groups)
        if not groups:  # 0-d <-> all unit dims
            collapse_only, expand_only = len(shape) == 0, len(v.shape) == 0
        if collapse_only:
            r = self._collapse(src, [gi for gi, _ in groups], local_out, v.dtype)
        elif expand_only:
            r = self._expand(src, [gj for _, gj in groups], local_out, v.dtype)
        else:
            mid = [_prod(local_in[d] for d in gi) for gi, _ in groups]
            m = self._collapse(src, [gi for gi, _ in groups], mid, v.dtype)
            r = self._expand(m, [gj for _, gj in groups], local_out, v.dtype)
        return Val(r, shape, v.dtype, out_splits, v.param)

    def _reassoc_attr(self, groups):
        return self.attr("[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]")

    def _collapse(self, src, groups, local_out, dtype):
        t = self.dist.TensorType(local_out, dtype, None, context=self.ctx)
        return self.f.op(
            "tensor.collapse_shape", [src], [t], {"reassociation": self._reassoc_attr(groups)}
        )[0]

    def _expand(self, src, groups, local_out, dtype):
        t = self.dist.TensorType(local_out, dtype, None, context=self.ctx)
        sizes = ", ".join(map(str, local_out))
        return self.f.op(
            "tensor.expand_shape",
            [src],
            [t],
            {
                "reassociation": self._reassoc_attr(groups),
                "static_output_shape": self.attr(f"array<i64: {sizes}>"),
            },
        )[0]

    def permute(self, v, perm):
        if isinstance(v, Transposed) and list(perm) == [1, 0]:
            return v.inner
        v = self.tensor(v)
        if list(perm) == list(range(len(perm))):
            return v
        # Result dim i is loop i, which is the source's dim perm[i].
        src_loops = [0] * len(perm)
        for i, p in enumerate(perm):
            src_loops[p] = i
        return self._copy(
            v, [v.shape[p] for p in perm], src_loops, splits=[v.splits[p] for p in perm]
        )

    def broadcast_to(self, v, shape):
        v = self.tensor(v)
        lead = len(shape) - len(v.shape)
        shape = [v.shape[d - lead] if n == -1 else n for d, n in enumerate(shape)]
        if tuple(shape) == v.shape:
            return v
        src, dl = self.operand(v, shape)
        return self._copy(src, shape, dl, fixed={l: src.splits[d] for d, l in enumerate(dl)})

    def _copy(self, v, shape, loops_of_dims, **how):
        """A generic that copies `v` (its dim d read at loop
        loops_of_dims[d]) into a tensor of `shape`."""
        loops = list(range(len(shape)))
        return self.generic(
            shape, [(v, loops_of_dims)], loops, lambda x: x, dtype=v.dtype, param=v.param, **how
        )

    def slice(self, v, dim, start, size):
        v = self.tensor(v)
        need = list(v.splits)
        need[dim] = None
        src = self.conform(v, need)
        local = self.local(v.shape, need)
        offsets = [0] * len(v.shape)
        offsets[dim] = start
        local[dim] = size
        shape = list(v.shape)
        shape[dim] = size
        t = self.ty(shape, v.dtype, need)
        r = self.f.extract_slice(src, offsets, local, result_type=t)
        return Val(r, shape, v.dtype, need, v.param)


def _reassociation(a, b):
    """Groups (dims of a, dims of b) of equal products, unit dims attached
    to a neighbour; [] when one side is 0-d."""
    if not a or not b:
        return []
    groups, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        gi, gj, pa, pb = [i], [j], a[i], b[j]
        while pa != pb:
            if pa < pb:
                i += 1
                gi.append(i)
                pa *= a[i]
            else:
                j += 1
                gj.append(j)
                pb *= b[j]
        i, j = i + 1, j + 1
        # Trailing unit dims join this group when nothing else follows them.
        groups.append((gi, gj))
    for k in range(i, len(a)):
        groups[-1][0].append(k)
    for k in range(j, len(b)):
        groups[-1][1].append(k)
    # A group of only unit dims on one side joins the next group instead.
    merged = []
    for gi, gj in groups:
        if merged and (all(a[d] == 1 for d in gi) and all(b[d] == 1 for d in gj)):
            merged[-1][0].extend(gi)
            merged[-1][1].extend(gj)
        else:
            merged.append((list(gi), list(gj)))
    return merged
