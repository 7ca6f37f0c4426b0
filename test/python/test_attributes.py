"""Meshes, distributions and types: built and read through the C API."""
import pytest

import dist


def test_mesh_properties(ctx):
    mesh = dist.Mesh([2, 4], names=["dp", "mp"], context=ctx)
    assert mesh.shape == [2, 4]
    assert mesh.names == ["dp", "mp"]
    assert mesh.process_ids == list(range(8))
    assert mesh.num_processes == 8
    assert str(mesh) == '#dist.mesh<shape = [2, 4], names = ["dp", "mp"]>'
    assert repr(mesh) == str(mesh)


def test_mesh_arithmetic_uses_the_id_list(ctx):
    # Process 6 sits at position 1 of the id list: coordinate (0, 1).
    mesh = dist.Mesh([2, 4], process_ids=[7, 6, 5, 4, 3, 2, 1, 0], context=ctx)
    assert mesh.coord(6) == (0, 1)
    assert mesh.group(6, [1]) == [7, 6, 5, 4]
    assert mesh.group(6, [0]) == [6, 2]
    assert mesh.group(6, [1, 0]) == [7, 3, 6, 2, 5, 1, 4, 0]
    assert mesh.group(6, []) == [6]


def test_mesh_arithmetic_errors(ctx):
    mesh = dist.Mesh([2, 2], context=ctx)
    with pytest.raises(ValueError, match="process 9 is not in the mesh"):
        mesh.coord(9)
    with pytest.raises(ValueError, match="not in the mesh"):
        mesh.group(-1, [0])
    with pytest.raises(dist.DiagnosticError, match="mesh axis 2 is out of range"):
        mesh.group(0, [2])
    with pytest.raises(dist.DiagnosticError, match="mesh axis 0 is repeated"):
        mesh.group(0, [0, 0])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(shape=[2, 0]), "mesh axis 1 has size 0"),
        (dict(shape=[]), "at least one axis"),
        (dict(shape=[1 << 20, 4]), "more than 1048576 processes"),
        (dict(shape=[2], process_ids=[1, 1]), "process id 1 appears more than once"),
        (dict(shape=[2], process_ids=[0, -1]), "process id -1 is negative"),
        (dict(shape=[2], names=["a", "b"]), "has 2 axis names"),
        (dict(shape=[2, 2], names=["a", "a"]), 'axis name "a" appears more than once'),
    ],
)
def test_bad_meshes_raise(ctx, kwargs, message):
    with pytest.raises(dist.DiagnosticError, match=message) as info:
        dist.Mesh(context=ctx, **kwargs)
    [d] = info.value.diagnostics
    assert d.severity == "error"
    # The message is the error, without the C API function's name.
    assert not d.message.startswith("mlir")


def test_empty_process_ids_are_a_value_error(ctx):
    with pytest.raises(ValueError, match="process_ids must not be empty"):
        dist.Mesh([2], process_ids=[], context=ctx)


def test_mesh_equality_and_hash(ctx):
    a = dist.Mesh([2, 4], context=ctx)
    b = dist.Mesh([2, 4], process_ids=list(range(8)), context=ctx)
    c = dist.Mesh([4, 2], context=ctx)
    assert a == b and hash(a) == hash(b)
    assert a != c
    assert len({a, b, c}) == 2
    assert a != "mesh"
    # Another context's mesh is another object.
    other = dist.Context()
    assert a != dist.Mesh([2, 4], context=other)


def test_tensor_dist(ctx):
    mesh = dist.Mesh([2, 4], names=["dp", "mp"], context=ctx)
    d = dist.TensorDist(mesh, [0, -1], partial={1: "sum"})
    assert d.mesh == mesh
    assert d.dims_mapping == [0, -1]
    assert d.partial == {1: "sum"}
    assert (
        str(d)
        == '#dist.tensor<#dist.mesh<shape = [2, 4], names = ["dp", "mp"]>, [0, -1], partial = [1 : sum]>'
    )
    assert d == dist.TensorDist(mesh, [0, -1], {1: "sum"})
    assert d != dist.TensorDist(mesh, [0, -1], {1: "max"})
    # Partial axes in any order.
    e = dist.TensorDist(mesh, [-1, -1], {1: "avg", 0: "max"})
    assert e.partial == {0: "max", 1: "avg"}


@pytest.mark.parametrize(
    "dims, partial, message",
    [
        ([0, 0], None, "splits more than one tensor dim"),
        ([2, -1], None, "must be -1 or a mesh axis in"),
        ([0, -1], {0: "sum"}, "axis 0"),
    ],
)
def test_bad_distributions_raise(ctx, dims, partial, message):
    mesh = dist.Mesh([2, 4], context=ctx)
    with pytest.raises(dist.DiagnosticError, match=message):
        dist.TensorDist(mesh, dims, partial)


def test_unknown_reduction_kind(ctx):
    mesh = dist.Mesh([2], context=ctx)
    with pytest.raises(ValueError, match="unknown reduction kind 'mean'"):
        dist.TensorDist(mesh, [-1], {0: "mean"})


def test_tensor_types(ctx):
    mesh = dist.Mesh([2], context=ctx)
    d = dist.TensorDist(mesh, [0, -1])
    t = dist.TensorType([8, 16], "f32", d)
    assert t.shape == [8, 16]
    assert str(t.element_type) == "f32"
    assert t.dist == d
    assert str(t) == "tensor<8x16xf32, #dist.tensor<#dist.mesh<shape = [2]>, [0, -1]>>"
    plain = dist.TensorType([3], "bf16", context=ctx)
    assert plain.dist is None
    assert plain == dist.Type.parse("tensor<3xbf16>", ctx)
    assert isinstance(dist.Type.parse("tensor<3xbf16>", ctx), dist.TensorType)
    with pytest.raises(dist.DiagnosticError, match="rank 1"):
        dist.TensorType([8], "f32", d)
    with pytest.raises(dist.DiagnosticError, match="invalid type 'f99'"):
        dist.TensorType([8], "f99", context=ctx)
    with pytest.raises(ValueError, match="non-negative"):
        dist.TensorType([-3], context=ctx)


def test_future_types(ctx):
    t = dist.TensorType([4], context=ctx)
    f = dist.FutureType(t)
    assert str(f) == "!dist.future<tensor<4xf32>>"
    assert f.value_type == t
    assert isinstance(dist.Type.parse("!dist.future<tensor<4xf32>>", ctx), dist.FutureType)
    with pytest.raises(TypeError):
        dist.FutureType(dist.Type.parse("f32", ctx))


def test_attribute_parse(ctx):
    a = dist.Attribute.parse("#dist.mesh<shape = [3]>", ctx)
    assert isinstance(a, dist.Mesh) and a.shape == [3]
    b = dist.Attribute.parse("array<i64: 1, 2>", ctx)
    assert type(b) is dist.Attribute and str(b) == "array<i64: 1, 2>"
    with pytest.raises(dist.DiagnosticError) as info:
        dist.Attribute.parse("#dist.mesh<shape = [0]>", ctx)
    assert "sizes must be positive" in info.value.diagnostics[0].message


def test_parse_errors_say_where_in_the_text(ctx):
    # MLIR names the parsed text as the file ("f99:1:1"); the error says the
    # column in the text instead, and has no file.
    for make, column in [
        (lambda: dist.TensorType([4], "f99", context=ctx), 1),
        (lambda: dist.Type.parse("tensor<4xf99>", ctx), 10),
        (lambda: dist.Attribute.parse("#dist.mesh<shape = [0]>", ctx), 11),
    ]:
        with pytest.raises(dist.DiagnosticError) as info:
            make()
        [d] = info.value.diagnostics
        assert (d.file, d.line, d.column) == ("", 0, 0)
        assert d.message.endswith(f"(column {column})")
        assert "f99:" not in str(info.value)


def test_wrong_argument_types_raise_type_error(ctx):
    with pytest.raises(TypeError):
        dist.Mesh("2x4", context=ctx)
    with pytest.raises(TypeError):
        dist.TensorDist("mesh", [0])
    with pytest.raises(TypeError):
        dist.TensorType([2], 5, context=ctx)


def test_default_context():
    mesh = dist.Mesh([2])
    assert mesh.context == dist.Mesh([2]).context
