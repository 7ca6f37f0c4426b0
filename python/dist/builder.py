"""Building dist programs: functions with encoded tensor arguments, the dist
ops, constants, calls and returns, through the C API (no IR text)."""

import numpy as np

from . import _dist, _ods
from ._dist import FutureType, TensorDist, TensorType, Type

# The IR spellings of the enums and their values, from the ODS definitions.
_STREAMS = _ods.ENUMS["StreamKind"]
_REDUCTIONS = _ods.ENUMS["ReductionKind"]


def _i32(value, ctx):
    return _dist._integer(value, 32, ctx)


def _enum_attr(enum, spelling, what, ctx):
    """The i32 attribute of `spelling` in `enum` ({spelling: value})."""
    if spelling not in enum:
        raise ValueError(f"unknown {what} {spelling!r}; expected one of {tuple(enum)}")
    return _i32(enum[spelling], ctx)


def _i64(value, ctx):
    return _dist._integer(value, 64, ctx)


def _stream_attr(stream, ctx):
    return _enum_attr(_STREAMS, stream, "stream", ctx)


def _marker_dict(markers, ctx):
    """{'dist.param': 'w', 'dist.loss_scale': True} as a DictionaryAttr."""
    entries = {}
    for name, value in (markers or {}).items():
        if value is True:
            entries[name] = _dist._unit(ctx)
        elif isinstance(value, str):
            entries[name] = _dist._string(value, ctx)
        elif isinstance(value, _dist.Attribute):
            entries[name] = value
        else:
            raise TypeError(
                f"marker {name}: expected True, a string or an " f"Attribute, got {value!r}"
            )
    return _dist._dictionary(entries, ctx)


def _tensor(value, what):
    if not isinstance(value, _dist.Value):
        raise TypeError(f"{what} must be a dist.Value, got {value!r}")
    t = value.type
    if not isinstance(t, TensorType):
        raise TypeError(f"{what} must be a ranked tensor, got {t}")
    return t


class FunctionBuilder:
    """Builds one `func.func` of a module.

    `args` is a list of argument types, each optionally paired with its
    markers: `(TensorType(...), {"dist.param": "w"})`; `markers` are the
    function's own (`{"dist.startup": True}`). Ops are appended in
    order; `return_` finishes the function and adds it to the module (its
    result types are those of the returned values).
    """

    def __init__(self, module, name, args=(), private=False, markers=None):
        self.module = module
        self.context = module.context
        self.name = name
        types, attrs = [], []
        for arg in args:
            t, arg_markers = arg if isinstance(arg, tuple) else (arg, None)
            if not isinstance(t, Type):
                raise TypeError(f"argument types must be dist.Type, got {t!r}")
            types.append(t)
            attrs.append(_marker_dict(arg_markers, self.context))
        self._private = private
        # Markers of the function itself ({"dist.startup": True}).
        self._markers = markers or {}
        self._f = _dist._function(module, name, types, attrs)
        self._loc = (None, 0, 0)

    # -- generic ---------------------------------------------------------------

    @property
    def arguments(self):
        """The function's arguments, as values."""
        return self._f.arguments

    def op(self, name, operands=(), result_types=(), attributes=None):
        """Appends any op by name, at the location `at` set; returns its
        results."""
        attributes = dict(attributes or {})
        facts = _ods.OPS.get(name)
        if facts:
            # What ODS declares, checked before the op is made: a builder that
            # drifted from the dialect fails here, naming both.
            given, declared = set(attributes), set(facts["attributes"])
            required = declared - set(facts["optional_attributes"])
            if given - declared or required - given:
                raise ValueError(
                    f"'{name}' takes the attributes {facts['attributes']} "
                    f"({tuple(sorted(required))} required), not {tuple(sorted(given))}"
                )
        file, line, column = self._loc
        return self._f.append(
            name, list(operands), list(result_types), attributes, file, line, column
        )

    def op_with_body(self, name, operands=(), result_types=(), attributes=None, body_args=()):
        """Appends op `name` with one region of one block whose arguments
        have the types `body_args`, and starts that block: ops appended from
        now on go into it until `end_body`. Returns (the op's results, the
        block's arguments). Use `body` for the usual case."""
        attributes = dict(attributes or {})
        file, line, column = self._loc
        types = [Type.parse(t, self.context) if isinstance(t, str) else t for t in body_args]
        results = self._f.append(
            name,
            list(operands),
            list(result_types),
            attributes,
            file,
            line,
            column,
            body_arg_types=types,
        )
        return results, self._f.body_arguments

    def end_body(self):
        """Ends the innermost body `op_with_body` started."""
        self._f.end_body()

    def body(self, name, operands, result_types, attributes, body_args, build):
        """An op with a one-block body: `build(*arguments)` appends the
        body's ops, terminator included. Returns the op's results."""
        results, arguments = self.op_with_body(name, operands, result_types, attributes, body_args)
        try:
            build(*arguments)
        finally:
            self.end_body()
        return results

    def generic(self, inputs, outputs, indexing_maps, iterator_types, build, result_types=None):
        """A `linalg.generic` over `inputs` and `outputs` (tensors):
        `indexing_maps` one affine map per operand as text ("(d0, d1) ->
        (d0)"), `iterator_types` "parallel" or "reduction" per loop.
        `build(*scalars)` gets the block's arguments (an element of each
        input, then of each output), appends the body with this builder
        and returns the values to yield, one per output. The results have
        the outputs' types unless `result_types` says otherwise (a
        completion's undecided result keeps the output's type)."""
        operands = list(inputs) + list(outputs)
        if len(indexing_maps) != len(operands):
            raise ValueError(
                f"linalg.generic: {len(indexing_maps)} indexing maps for "
                f"{len(operands)} operands"
            )
        kinds = {"parallel", "reduction"}
        if any(k not in kinds for k in iterator_types):
            raise ValueError(
                f"iterator types must be 'parallel' or 'reduction', got {iterator_types}"
            )
        ctx = self.context
        maps = "[" + ", ".join(f"affine_map<{m}>" for m in indexing_maps) + "]"
        its = "[" + ", ".join(f"#linalg.iterator_type<{k}>" for k in iterator_types) + "]"
        attrs = {
            "indexing_maps": _dist.Attribute.parse(maps, ctx),
            "iterator_types": _dist.Attribute.parse(its, ctx),
            "operandSegmentSizes": _dist.Attribute.parse(
                f"array<i32: {len(inputs)}, {len(outputs)}>", ctx
            ),
        }
        types = [_tensor(v, "a linalg.generic operand").element_type for v in operands]
        if result_types is None:
            result_types = [v.type for v in outputs]

        def body(*scalars):
            yielded = build(*scalars)
            if not isinstance(yielded, (list, tuple)):
                yielded = [yielded]
            self.op("linalg.yield", yielded)

        return self.body("linalg.generic", operands, result_types, attrs, types, body)

    def at(self, file, line=0, column=0):
        """Ops appended from now on get the location FILE:LINE:COLUMN
        (file=None: an unknown location, the default). It is printed with
        Module.print(debug_info=True) and names the op in diagnostics, in
        the lowered program's messages and in run traces. Returns self."""
        self._loc = (None, 0, 0) if file is None else (str(file), int(line), int(column))
        return self

    def _one(self, *args, **kwargs):
        return self.op(*args, **kwargs)[0]

    # -- constants, casts, calls -----------------------------------------------

    def constant(self, values, type):
        """An `arith.constant` of `type` (a TensorType, encoded or not) with
        `values` (anything numpy turns into an array of its shape, or one
        value for every element: a splat)."""
        if isinstance(type, str):
            type = Type.parse(type, self.context)
        if isinstance(type, TensorType):
            attr = _dist._dense(type, np.asarray(values).reshape(-1))
        else:
            attr = _dist.Attribute.parse(f"{values} : {type}", self.context)
        return self._one("arith.constant", [], [type], {"value": attr})

    def index(self, value):
        """An `index` constant."""
        return self.constant(int(value), "index")

    def cast(self, value, type):
        """`tensor.cast`: the same tensor under another (compatible) type,
        for instance to put a distribution on it."""
        return self._one("tensor.cast", [value], [type])

    def call(self, callee, args, result_types):
        """`func.call @callee(args)`."""
        return self.op(
            "func.call",
            args,
            result_types,
            {"callee": _dist.Attribute.parse(f"@{callee}", self.context)},
        )

    def arith(self, name, *operands, result_type=None, predicate=None):
        """`arith.<name>` on `operands`; the result type defaults to the
        first operand's (i1 of its shape for `cmpi`). `predicate` names a
        comparison of `cmpi` (eq, ne, slt, ...)."""
        attrs = {}
        if predicate is not None:
            preds = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
            if predicate not in preds:
                raise ValueError(f"unknown predicate {predicate!r}")
            attrs["predicate"] = _i64(preds.index(predicate), self.context)
        if result_type is None and name == "cmpi":
            t = operands[0].type
            result_type = (
                TensorType(t.shape, "i1", t.dist, context=self.context)
                if isinstance(t, TensorType)
                else Type.parse("i1", self.context)
            )
        return self._one(f"arith.{name}", list(operands), [result_type or operands[0].type], attrs)

    def splat(self, scalar, type):
        """`tensor.splat`: a tensor of `type` filled with `scalar`."""
        return self._one("tensor.splat", [scalar], [type])

    def _slice_attrs(self, offsets, sizes, dynamic_prefix):
        dynamic = [o for o in offsets if isinstance(o, _dist.Value)]
        static = [(-(2**63) if isinstance(o, _dist.Value) else int(o)) for o in offsets]
        attrs = {
            "static_offsets": _dist._i64_array(static, self.context),
            "static_sizes": _dist._i64_array(list(sizes), self.context),
            "static_strides": _dist._i64_array([1] * len(sizes), self.context),
            "operandSegmentSizes": _dist.Attribute.parse(
                f"array<i32: {', '.join(map(str, dynamic_prefix + [len(dynamic), 0, 0]))}>",
                self.context,
            ),
        }
        return dynamic, attrs

    def extract_slice(self, source, offsets, sizes, result_type=None):
        """`tensor.extract_slice` of `sizes` at `offsets` (ints or index
        values), unit strides."""
        t = _tensor(source, "source")
        dynamic, attrs = self._slice_attrs(offsets, sizes, [1])
        result = result_type or TensorType(list(sizes), t.element_type, context=self.context)
        return self._one("tensor.extract_slice", [source] + dynamic, [result], attrs)

    def insert_slice(self, source, dest, offsets):
        """`tensor.insert_slice` of `source` into `dest` at `offsets`."""
        sizes = _tensor(source, "source").shape
        dynamic, attrs = self._slice_attrs(offsets, sizes, [1, 1])
        return self._one("tensor.insert_slice", [source, dest] + dynamic, [dest.type], attrs)

    # -- dist ops ---------------------------------------------------------------

    def process_coord(self, mesh, axis):
        """This process's coordinate along `axis` of `mesh` (index)."""
        return self._one(
            "dist.process_coord",
            [],
            [Type.parse("index", self.context)],
            {"mesh": mesh, "axis": _i64(axis, self.context)},
        )

    def matmul(self, x, y, transpose_x=False, transpose_y=False, dist=None):
        """`dist.matmul`: the result shape follows matmul_v2's rules; `dist`
        is the result's declared distribution."""
        tx, ty = _tensor(x, "x"), _tensor(y, "y")
        # The verifier's shape rule (MatmulGeometry.h), not one of our own.
        shape = _dist._matmul_shape(tx, ty, transpose_x, transpose_y)
        attrs = {}
        if transpose_x:
            attrs["transpose_x"] = _dist._unit(self.context)
        if transpose_y:
            attrs["transpose_y"] = _dist._unit(self.context)
        result = TensorType(shape, tx.element_type, dist, context=self.context)
        return self._one("dist.matmul", [x, y], [result], attrs)

    def matmul_grad(
        self,
        x,
        y,
        out_grad,
        transpose_x=False,
        transpose_y=False,
        x_grad_dist="like",
        y_grad_dist="like",
    ):
        """`dist.matmul_grad`: returns (x_grad, y_grad), shaped like x and y;
        their distributions are x's and y's unless given."""
        tx, ty = _tensor(x, "x"), _tensor(y, "y")
        dx = (
            tx
            if x_grad_dist == "like"
            else TensorType(tx.shape, tx.element_type, x_grad_dist, context=self.context)
        )
        dy = (
            ty
            if y_grad_dist == "like"
            else TensorType(ty.shape, ty.element_type, y_grad_dist, context=self.context)
        )
        attrs = {}
        if transpose_x:
            attrs["transpose_x"] = _dist._unit(self.context)
        if transpose_y:
            attrs["transpose_y"] = _dist._unit(self.context)
        r = self.op("dist.matmul_grad", [x, y, out_grad], [dx, dy], attrs)
        return r[0], r[1]

    def embedding(self, ids, weight, dist=None):
        """`dist.embedding`: rows of `weight` at `ids`."""
        ti, tw = _tensor(ids, "ids"), _tensor(weight, "weight")
        result = TensorType(ti.shape + [tw.shape[1]], tw.element_type, dist, context=self.context)
        return self._one("dist.embedding", [ids, weight], [result])

    def embedding_grad(self, ids, weight, out_grad, dist="like"):
        """`dist.embedding_grad`: the table gradient, shaped like `weight`."""
        tw = _tensor(weight, "weight")
        result = (
            tw
            if dist == "like"
            else TensorType(tw.shape, tw.element_type, dist, context=self.context)
        )
        return self._one("dist.embedding_grad", [ids, weight, out_grad], [result])

    def c_embedding(self, ids, weight, start, dist=None):
        """`dist.c_embedding`: the lookup into one row shard from `start`."""
        ti, tw = _tensor(ids, "ids"), _tensor(weight, "weight")
        result = TensorType(ti.shape + [tw.shape[1]], tw.element_type, dist, context=self.context)
        return self._one("dist.c_embedding", [ids, weight, start], [result])

    def c_embedding_grad(self, ids, weight, out_grad, start, dist="like"):
        """`dist.c_embedding_grad`: the shard's table gradient."""
        tw = _tensor(weight, "weight")
        result = (
            tw
            if dist == "like"
            else TensorType(tw.shape, tw.element_type, dist, context=self.context)
        )
        return self._one("dist.c_embedding_grad", [ids, weight, out_grad, start], [result])

    def seed(self, value, dist=None):
        """`dist.seed` (0: drawn at run time) as a tensor<1xi32>."""
        t = TensorType([1], "i32", dist, context=self.context)
        return self._one("dist.seed", [], [t], {"value": _i32(value, self.context)})

    def dropout(self, x, prob, seed=None, fix_seed=None, id=None, recompute_of=None, is_test=False):
        """`dist.dropout` with probability `prob`."""
        attrs = {"prob": _dist._float(float(prob), 32, self.context)}
        if fix_seed is not None:
            attrs["fix_seed"] = _i32(fix_seed, self.context)
        if id is not None:
            attrs["id"] = _dist._string(id, self.context)
        if recompute_of is not None:
            attrs["recompute_of"] = _dist._string(recompute_of, self.context)
        if is_test:
            attrs["is_test"] = _dist._unit(self.context)
        operands = [x] if seed is None else [x, seed]
        return self._one("dist.dropout", operands, [x.type], attrs)

    def scale(self, x, factor):
        """`dist.scale`: every element times `factor`."""
        return self._one(
            "dist.scale", [x], [x.type], {"factor": _dist._float(float(factor), 64, self.context)}
        )

    def check_finite_and_unscale(self, grads, scale, found_inf_dist=None):
        """AMP: returns (unscaled grads, found_inf)."""
        flag = TensorType([1], "i1", found_inf_dist, context=self.context)
        r = self.op(
            "dist.check_finite_and_unscale", list(grads) + [scale], [g.type for g in grads] + [flag]
        )
        return r[:-1], r[-1]

    def _collective(self, name, x, mesh, axes, result, attrs, stream):
        attrs = dict(attrs, mesh=mesh, axes=_dist._i64_array(list(axes), self.context))
        if stream is not None:
            attrs["stream"] = _stream_attr(stream, self.context)
            if stream != "compute":
                result = FutureType(result)
        return self._one(name, [x], [result], attrs)

    def allreduce(self, x, mesh, axes, reduce="sum", stream=None, dist="auto"):
        """`dist.allreduce` over `axes`. The result's distribution is the
        input's with `axes` no longer partial (dist="auto"). With a stream
        other than "compute" the result is a future: `wait` completes it."""
        t = _tensor(x, "x")
        if dist == "auto":
            dist = t.dist
            if dist is not None:
                partial = {a: k for a, k in dist.partial.items() if a not in axes}
                dist = TensorDist(dist.mesh, dist.dims_mapping, partial)
        result = TensorType(t.shape, t.element_type, dist, context=self.context)
        return self._collective(
            "dist.allreduce",
            x,
            mesh,
            axes,
            result,
            {"kind": _enum_attr(_REDUCTIONS, reduce, "reduction", self.context)},
            stream,
        )

    def broadcast(self, x, mesh, axes, root=0, stream=None):
        """`dist.broadcast` from group-local `root` over `axes`."""
        return self._collective(
            "dist.broadcast",
            x,
            mesh,
            axes,
            _tensor(x, "x"),
            {"root": _i64(root, self.context)},
            stream,
        )

    def c_identity(self, x, mesh, axes, stream=None):
        """`dist.c_identity` over `axes`."""
        return self._collective("dist.c_identity", x, mesh, axes, _tensor(x, "x"), {}, stream)

    # -- redistribution ----------------------------------------------------------

    def _redistributed(self, x, dist):
        """The type of `x`'s global tensor distributed as `dist`."""
        t = _tensor(x, "x")
        if t.dist is None or dist is None:
            raise TypeError(
                "redistribution needs #dist.tensor encodings on " "the operand and the result"
            )
        sizes = t.dist.mesh.shape
        glob = [n * (sizes[a] if a >= 0 else 1) for n, a in zip(t.shape, t.dist.dims_mapping)]
        local = []
        for n, a in zip(glob, dist.dims_mapping):
            if a >= 0 and n % sizes[a]:
                raise ValueError(f"dim of {n} does not divide over mesh axis {a}")
            local.append(n // sizes[a] if a >= 0 else n)
        return TensorType(local, t.element_type, dist, context=self.context)

    def reshard(self, x, dist):
        """`dist.reshard` of `x` to `dist` (same mesh and global tensor);
        --dist-lower-reshard plans it."""
        return self._one("dist.reshard", [x], [self._redistributed(x, dist)])

    def all_gather(self, x, mesh, axes, dist, stream=None):
        """`dist.all_gather` over `axes` to `dist` (those axes replicated)."""
        return self._collective(
            "dist.all_gather", x, mesh, axes, self._redistributed(x, dist), {}, stream
        )

    def reduce_scatter(self, x, mesh, axes, dist, reduce="sum", stream=None):
        """`dist.reduce_scatter` over `axes` to `dist` (those axes split)."""
        return self._collective(
            "dist.reduce_scatter",
            x,
            mesh,
            axes,
            self._redistributed(x, dist),
            {"kind": _enum_attr(_REDUCTIONS, reduce, "reduction", self.context)},
            stream,
        )

    def all_to_all(self, x, mesh, axes, dist, stream=None):
        """`dist.all_to_all` over one axis to `dist` (its split moved)."""
        return self._collective(
            "dist.all_to_all", x, mesh, axes, self._redistributed(x, dist), {}, stream
        )

    def all_slice(self, x, mesh, axes, dist):
        """`dist.all_slice` over `axes` to `dist` (local)."""
        attrs = dict(mesh=mesh, axes=_dist._i64_array(list(axes), self.context))
        return self._one("dist.all_slice", [x], [self._redistributed(x, dist)], attrs)

    def make_partial(self, x, mesh, axes, dist, reduce="sum"):
        """`dist.make_partial` over `axes` to `dist` (local)."""
        attrs = dict(
            mesh=mesh,
            axes=_dist._i64_array(list(axes), self.context),
            kind=_enum_attr(_REDUCTIONS, reduce, "reduction", self.context),
        )
        return self._one("dist.make_partial", [x], [self._redistributed(x, dist)], attrs)

    def wait(self, future):
        """`dist.wait`: the tensor of an asynchronous collective."""
        t = future.type
        if not isinstance(t, FutureType):
            raise TypeError(f"wait needs a future, got {t}")
        return self._one("dist.wait", [future], [t.value_type])

    # -- output and end ----------------------------------------------------------

    def print(self, value):
        """Prints `value` (an f32 tensor without encoding) at run time with
        MLIR's printMemrefF32; run_on_mpi reads these back."""
        t = _tensor(value, "value")
        if t.dist is not None:
            value = self.cast(value, TensorType(t.shape, t.element_type, context=self.context))
        if str(t.element_type) != "f32":
            raise TypeError("print takes f32 tensors")
        memref = Type.parse(
            f"memref<{'x'.join(map(str, t.shape))}xf32>" if t.shape else "memref<f32>", self.context
        )
        unranked = Type.parse("memref<*xf32>", self.context)
        _dist._declare(self.module, "printMemrefF32", [unranked], [])
        buffer = self._one("bufferization.to_buffer", [value], [memref])
        cast = self._one("memref.cast", [buffer], [unranked])
        self.call("printMemrefF32", [cast], [])

    def return_(self, *values, result_markers=None):
        """Ends the function with `func.return values` and adds it to the
        module; `result_markers` gives each result's markers
        ({"dist.grad": "w"})."""
        attrs = None
        if result_markers is not None:
            attrs = [_marker_dict(m, self.context) for m in result_markers]
        own = {}
        for name, value in self._markers.items():
            own[name] = (
                _dist._unit(self.context)
                if value is True
                else _dist._string(value, self.context)
                if isinstance(value, str)
                else value
            )
        self._f.finish(list(values), attrs, self._private, own)
