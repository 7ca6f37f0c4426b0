"""The program builder against hand-written IR, and a full round trip."""
import numpy as np
import pytest

import dist

HAND_WRITTEN = """
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @step(%x: tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>, %w: tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>> {dist.param = "w"}, %d: tensor<4x16xf32, #dist.tensor<#mesh, [-1, 0]>>, %ls: tensor<1xf32> {dist.loss_scale}) -> (tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>> {dist.grad = "w"}) {
  %h = dist.matmul %x, %w : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>> -> tensor<4x16xf32, #dist.tensor<#mesh, [-1, 0]>>
  %s = dist.seed 7 : tensor<1xi32>
  %y = dist.dropout %h seed(%s : tensor<1xi32>) prob = 1.000000e-01 {id = "a"} : tensor<4x16xf32, #dist.tensor<#mesh, [-1, 0]>> -> tensor<4x16xf32, #dist.tensor<#mesh, [-1, 0]>>
  %dx, %dw = dist.matmul_grad %x, %w, %d : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>, tensor<4x16xf32, #dist.tensor<#mesh, [-1, 0]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>, tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>
  %f = dist.allreduce %dx on #mesh axes = [0] reduce = sum stream = mp : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> !dist.future<tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>>
  %r = dist.wait %f : !dist.future<tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>>
  %sc = dist.scale %dw by 5.000000e-01 : tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>
  return %r, %sc : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>, tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>
}
"""


def build_step(ctx):
    mesh = dist.Mesh([2], names=["mp"], context=ctx)
    rep = dist.TensorDist(mesh, [-1, -1])
    col = dist.TensorDist(mesh, [-1, 0])
    X = dist.TensorType([4, 8], "f32", rep)
    W = dist.TensorType([8, 16], "f32", col)
    D = dist.TensorType([4, 16], "f32", col)
    LS = dist.TensorType([1], "f32", context=ctx)
    m = dist.Module.create(ctx)
    f = m.function("step", [X, (W, {"dist.param": "w"}), D, (LS, {"dist.loss_scale": True})])
    x, w, d, _ = f.arguments
    h = f.matmul(x, w, dist=col)
    s = f.seed(7)
    f.dropout(h, 0.1, seed=s, id="a")
    dx, dw = f.matmul_grad(x, w, d, x_grad_dist=dist.TensorDist(mesh, [-1, -1], {0: "sum"}))
    fut = f.allreduce(dx, mesh, [0], "sum", stream="mp")
    r = f.wait(fut)
    sc = f.scale(dw, 0.5)
    f.return_(r, sc, result_markers=[None, {"dist.grad": "w"}])
    return m


def test_builder_matches_hand_written_ir(ctx):
    built = build_step(ctx)
    built.verify()
    hand = dist.Module.parse(HAND_WRITTEN, context=ctx)
    assert str(built) == str(hand)


def test_round_trip_build_print_parse_pipeline_inspect(ctx):
    m = dist.Module.parse(str(build_step(ctx)), context=ctx)
    m.run("dist-auto-parallel")
    ops = [op.name for op in m.walk()]
    # AMP added its check; the seed pass kept the explicit seed.
    assert "dist.check_finite_and_unscale" in ops
    assert ops.count("dist.seed") == 1
    [func] = [op for op in m.operations if op.name == "func.func"]
    assert "dist.found_inf" in str(func)


def test_builder_shape_rules(ctx):
    m = dist.Module.create(ctx)
    t = lambda shape, elt="f32": dist.TensorType(shape, elt, context=ctx)
    f = m.function("f", [t([2, 3, 4]), t([4, 5]), t([5, 4]), t([6], "i64"), t([10, 7])])
    a, b, c, ids, table = f.arguments
    assert f.matmul(a, b).type.shape == [2, 3, 5]
    assert f.matmul(b, c, transpose_x=True, transpose_y=True).type.shape == [5, 5]
    assert f.embedding(ids, table).type.shape == [6, 7]
    with pytest.raises(ValueError, match="rank >= 2"):
        f.matmul(ids, b)
    # The verifier's rule and message (MatmulGeometry.h through the C API).
    with pytest.raises(ValueError, match=r"matmul contraction sizes differ: x has 5, y has 4"):
        f.matmul(b, b)
    with pytest.raises(ValueError, match=r"batch dims of x \[2\] and y \[3\] do not broadcast"):
        f.matmul(a, f.constant(0.0, t([3, 4, 5])))
    with pytest.raises(TypeError, match="ranked tensor"):
        f.matmul(f.index(3), b)
    # Not a value at all: a TypeError too (docs/python.md), not an
    # AttributeError.
    with pytest.raises(TypeError, match="y must be a dist.Value, got 3"):
        f.matmul(b, 3)
    f.return_()
    m.verify()


def test_builder_constants_and_collectives(ctx):
    mesh = dist.Mesh([2, 2], names=["dp", "mp"], context=ctx)
    m = dist.Module.create(ctx)
    f = m.function("main")
    pd = dist.TensorDist(mesh, [-1], {0: "sum", 1: "max"})
    c = f.constant(np.arange(4.0), dist.TensorType([4], "f32", pd))
    r = f.allreduce(c, mesh, [0])
    assert r.type.dist.partial == {1: "max"}
    r2 = f.allreduce(
        f.cast(r, dist.TensorType([4], "f32", dist.TensorDist(mesh, [-1], {1: "max"}))),
        mesh,
        [1],
        "max",
    )
    assert r2.type.dist.partial == {}
    b = f.broadcast(r2, mesh, [0], root=1, stream="dp")
    assert isinstance(b.type, dist.FutureType)
    f.wait(b)
    f.print(r2)
    f.return_()
    m.verify()
    text = str(m)
    assert "func.func private @printMemrefF32" in text
    assert "dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]>" in text


def test_builder_errors_raise(ctx):
    m = dist.Module.create(ctx)
    mesh = dist.Mesh([2], context=ctx)
    f = m.function("f", [dist.TensorType([4], context=ctx)])
    [x] = f.arguments
    with pytest.raises(ValueError, match="unknown reduction"):
        f.allreduce(x, mesh, [0], "mean")
    with pytest.raises(ValueError, match="unknown stream"):
        f.allreduce(x, mesh, [0], stream="tp")
    with pytest.raises(TypeError, match="needs a future"):
        f.wait(x)
    with pytest.raises(ValueError, match="has 3 values"):
        f.constant([1, 2, 3], dist.TensorType([4], context=ctx))
    with pytest.raises(ValueError, match="no dialect"):
        f.op("nodialect.op")
    with pytest.raises(TypeError):
        m.function("g", ["not a type"])
    # An op that does not verify is reported by verify(), with its location.
    f.op(
        "dist.scale",
        [x],
        [dist.TensorType([5], context=ctx)],
        {"factor": dist.Attribute.parse("2.0 : f64", ctx)},
    )
    f.return_()
    with pytest.raises(dist.DiagnosticError, match="dist.scale"):
        m.verify()
    with pytest.raises(RuntimeError, match="finished"):
        f.index(0)


def test_builder_redistribution(ctx):
    """Every redistribution op from the builder verifies and round-trips,
    the result's local shape follows its distribution, and a global shape
    that does not divide is a ValueError."""
    mesh = dist.Mesh([2, 2], context=ctx)
    split0 = dist.TensorDist(mesh, [0, -1])
    rep = dist.TensorDist(mesh, [-1, -1])
    m = dist.Module.create(ctx)
    f = m.function("f", [dist.TensorType([2, 4], "f32", split0)])
    (x,) = f.arguments
    g = f.all_gather(x, mesh, [0], rep)
    assert g.type.shape == [4, 4]
    s = f.all_slice(g, mesh, [1], dist.TensorDist(mesh, [-1, 1]))
    assert s.type.shape == [4, 2]
    a = f.all_to_all(x, mesh, [0], dist.TensorDist(mesh, [-1, 0]), stream="mp")
    assert isinstance(a.type, dist.FutureType)
    f.wait(a)
    p = f.make_partial(g, mesh, [0], dist.TensorDist(mesh, [-1, -1], {0: "sum"}))
    rs = f.reduce_scatter(p, mesh, [0], dist.TensorDist(mesh, [-1, 0]))
    assert rs.type.shape == [4, 2]
    r = f.reshard(x, dist.TensorDist(mesh, [1, 0]))
    assert r.type.shape == [2, 2]
    f.return_()
    m.verify()
    text = str(m)
    for op in (
        "all_gather",
        "all_slice",
        "all_to_all",
        "make_partial",
        "reduce_scatter",
        "reshard",
    ):
        assert f"dist.{op}" in text
    assert str(dist.Module.parse(text, context=ctx)) == text
    with pytest.raises(ValueError, match="does not divide"):
        f2 = m.function("g", [dist.TensorType([3, 4], "f32", rep)])
        f2.reshard(f2.arguments[0], split0)


def test_locations_and_splat_constants(ctx):
    m = dist.Module.create(ctx)
    f = m.function("main")
    big = dist.TensorType([384, 384], "f32", context=ctx)
    f.at("prog.py", 12, 5)
    c = f.constant(0.5, big)
    f.at(None)
    i = f.constant([1, 2, 3], dist.TensorType([3], "i32", context=ctx))
    f.return_()
    text = m.print(debug_info=True)
    # One value for all: a splat, whatever the size.
    assert "arith.constant dense<5.000000e-01> : tensor<384x384xf32> loc(#loc1)" in text
    assert '#loc1 = loc("prog.py":12:5)' in text
    assert "dense<[1, 2, 3]> : tensor<3xi32> loc(#loc)" in text
    assert c.type == big and i.type.shape == [3]
    with pytest.raises(ValueError, match="2 values, the type 3 .or give one value"):
        f2 = m.function("g")
        f2.constant([1, 2], dist.TensorType([3], "i32", context=ctx))


def test_op_facts_come_from_ods(ctx):
    from dist import _ods

    # The build derives them from the .td files (python/gen_ods_facts.py).
    assert _ods.ENUMS["ReductionKind"] == {"sum": 0, "max": 1, "min": 2, "prod": 3, "avg": 4}
    assert _ods.ENUMS["StreamKind"] == {"compute": 0, "mp": 1, "dp": 2, "sharding": 3}
    assert _ods.OPS["dist.allreduce"] == {
        "operands": ("input",),
        "attributes": ("mesh", "axes", "kind", "stream"),
        "optional_attributes": ("stream",),
        "results": ("result",),
    }
    assert _ods.OPS["dist.dropout"]["optional_attributes"] == (
        "fix_seed",
        "is_test",
        "id",
        "recompute_of",
    )
    # A dist op with attributes ODS does not declare, or without one it
    # requires, is refused before it is made, naming what ODS says.
    mesh = dist.Mesh([2], context=ctx)
    t = dist.TensorType([4], "f32", context=ctx)
    f = dist.Module.create(ctx).function("main", [t])
    (x,) = f.arguments
    axes = dist.Attribute.parse("array<i64: 0>", ctx)
    with pytest.raises(
        ValueError,
        match=r"'dist.allreduce' takes the attributes "
        r"\('mesh', 'axes', 'kind', 'stream'\) \(\('axes', 'kind', 'mesh'\) "
        r"required\), not \('axes', 'mesh', 'reduction'\)",
    ):
        f.op(
            "dist.allreduce",
            [x],
            [t],
            {"mesh": mesh, "axes": axes, "reduction": dist.Attribute.parse("0 : i32", ctx)},
        )
    with pytest.raises(ValueError, match="required"):
        f.op("dist.allreduce", [x], [t], {"mesh": mesh, "axes": axes})


def test_builder_linalg_generic(ctx):
    """A reduction and an elementwise linalg.generic with bodies, as the GPT
    layer builds them (examples/gpt_layer.py), print and verify."""
    m = dist.Module.create(ctx)
    f32 = dist.Type.parse("f32", ctx)
    f = m.function("rows", [dist.TensorType([4, 8], context=ctx)])
    [x] = f.arguments
    row = dist.TensorType([4], context=ctx)
    zero = f.constant(0.0, "f32")
    empty = f.op("tensor.empty", [], [row])[0]
    init = f.body(
        "linalg.fill",
        [zero, empty],
        [row],
        {"operandSegmentSizes": dist.Attribute.parse("array<i32: 1, 1>", ctx)},
        [f32, f32],
        lambda value, _: f.op("linalg.yield", [value]),
    )[0]
    [total] = f.generic(
        [x],
        [init],
        ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0)"],
        ["parallel", "reduction"],
        lambda e, acc: f.arith("addf", f.arith("mulf", e, e), acc),
    )
    # A body may read values from around it, and cmpi gives i1.
    [masked] = f.generic(
        [x],
        [x],
        ["(d0, d1) -> (d0, d1)"] * 2,
        ["parallel", "parallel"],
        lambda e, _: f.op(
            "arith.select",
            [f.arith("cmpi", f.index(0), f.index(1), predicate="ule"), e, zero],
            [f32],
        )[0],
    )
    f.return_(total, masked)
    m.verify()
    text = str(m)
    assert 'iterator_types = ["parallel", "reduction"]' in text
    assert "arith.mulf %in, %in : f32" in text
    assert "arith.cmpi ule" in text
    assert dist.Module.parse(text, context=ctx).verify() is None


def test_builder_body_errors(ctx):
    m = dist.Module.create(ctx)
    t = dist.TensorType([4], context=ctx)
    f = m.function("f", [t])
    [x] = f.arguments
    inner = []

    def body(e, _):
        inner.append(e)
        return e

    f.generic([x], [x], ["(d0) -> (d0)"] * 2, ["parallel"], body)
    # A value of a body already ended is out of scope.
    with pytest.raises(ValueError, match="defined in a body that does not enclose"):
        f.arith("negf", inner[0])
    with pytest.raises(ValueError, match="1 indexing maps for 2 operands"):
        f.generic([x], [x], ["(d0) -> (d0)"], ["parallel"], body)
    with pytest.raises(ValueError, match="iterator types"):
        f.generic([x], [x], ["(d0) -> (d0)"] * 2, ["window"], body)
    with pytest.raises(RuntimeError, match="no body"):
        f.end_body()
    # A body left open is an error at the return, not a broken function.
    f.op_with_body(
        "linalg.generic",
        [x, x],
        [t],
        {
            "indexing_maps": dist.Attribute.parse(
                "[affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>]", ctx
            ),
            "iterator_types": dist.Attribute.parse("[#linalg.iterator_type<parallel>]", ctx),
            "operandSegmentSizes": dist.Attribute.parse("array<i32: 1, 1>", ctx),
        },
        ["f32", "f32"],
    )
    with pytest.raises(RuntimeError, match="still being built"):
        f.return_(x)
    # A body that raises is closed behind it.
    g = m.function("g", [t])
    [y] = g.arguments

    def fails(e, _):
        raise KeyError("in the body")

    with pytest.raises(KeyError):
        g.generic([y], [y], ["(d0) -> (d0)"] * 2, ["parallel"], fails)
    g.return_(y)
