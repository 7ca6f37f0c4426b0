"""The optimizer updates and the packing ops from Python: built with the
builder, sharded by --dist-shard-optimizer, fused by --dist-bucket-gradients,
and the state memory in the overlap report's data."""
import pytest

import dist


def build_step(ctx):
    """A data-parallel step on [2]: the allreduced gradient of a 5-element
    parameter (which does not divide by 2) updated by AdamW."""
    mesh = dist.Mesh([2], names=["dp"], context=ctx)
    rep = dist.TensorDist(mesh, [-1])
    W = dist.TensorType([5], "f32", rep)
    G = dist.TensorType([5], "f32", dist.TensorDist(mesh, [-1], {0: "sum"}))
    T = dist.TensorType([], "f32", context=ctx)
    m = dist.Module.create(ctx)
    f = m.function(
        "step",
        [(W, {"dist.param": "w"}), (W, {"dist.state": "w"}), (W, {"dist.state": "w"}), T, G],
    )
    w, m1, m2, t, gp = f.arguments
    g = f.allreduce(gp, mesh, [0], "sum")

    def f64(x):
        return dist.Attribute.parse(f"{x:.9e} : f64", ctx)

    w1, n1, n2 = f.op(
        "dist.adamw",
        [w, g, m1, m2, t],
        [W, W, W],
        {"lr": f64(1e-3), "beta1": f64(0.9), "beta2": f64(0.999), "epsilon": f64(1e-8)},
    )
    f.return_(w1, n1, n2, result_markers=[None, {"dist.state": "w"}, {"dist.state": "w"}])
    return m


def test_adamw_builds_and_shards(ctx):
    m = build_step(ctx)
    m.verify()
    before = dist.overlap_report(m)["functions"][0]
    assert before["state_bytes"] == before["unsharded_state_bytes"] == 40
    m.run("dist-shard-optimizer")
    names = [op.name for op in m.walk()]
    assert names.count("dist.reduce_scatter") == 1
    assert "dist.allreduce" not in names
    after = dist.overlap_report(m)["functions"][0]
    # Two moments of ceil(5 / 2) = 3 elements each, instead of 5.
    assert (after["state_bytes"], after["unsharded_state_bytes"]) == (24, 40)


def test_pack_builder_checks(ctx):
    m = dist.Module.create(ctx)
    a = dist.TensorType([7], "f32", context=ctx)
    f = m.function("f", [a])
    (x,) = f.arguments
    (b,) = f.op("dist.pack", [x], [dist.TensorType([2, 4], "f32", context=ctx)])
    (y,) = f.op("dist.unpack", [b], [a])
    f.return_(y)
    m.verify()
    # The unpack of a pack folds away.
    m.run("canonicalize")
    assert "dist.pack" not in str(m)


def test_bad_pack_raises(ctx):
    m = dist.Module.create(ctx)
    a = dist.TensorType([7], "f32", context=ctx)
    f = m.function("f", [a])
    (x,) = f.arguments
    f.op("dist.pack", [x], [dist.TensorType([2, 3], "f32", context=ctx)])
    f.return_()
    with pytest.raises(Exception, match="buffer has 3 columns"):
        m.verify()
