"""The optimizer updates and the packing ops from Python: built with the
builder, sharded by --dist-shard-optimizer, fused by --dist-bucket-gradients,
and the state memory in the overlap report's data."""
import math
import random

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


BYTES = {"f16": 2, "f32": 4, "f64": 8}


def expected_buckets(grads, first_cap, cap, members=False):
    """DDP's bucketing, from its definition: gradients in the order they
    are ready, one open bucket per element type, a bucket closing once it
    holds at least its cap in bytes (the first bucket to close has the
    first cap); a bucket of one gradient is no fusion. Returns each fused
    bucket's (element type, bytes), in the order they close, and with
    `members` its number of gradients too."""
    open_, closed, fused = {}, 0, []
    for elements, ty in grads:
        bucket = open_.setdefault(ty, [])
        bucket.append(elements * BYTES[ty])
        if sum(bucket) >= (first_cap if closed == 0 else cap):
            closed += 1
            if len(bucket) > 1:
                fused.append((ty, sum(bucket), len(bucket)))
            open_[ty] = []
    fused += [(ty, sum(b), len(b)) for ty, b in open_.items() if len(b) > 1]
    return fused if members else [f[:2] for f in fused]


@pytest.mark.parametrize("seed", range(6))
def test_bucket_sizes_are_bytes(ctx, seed):
    """Buckets of random gradients of three element types against
    expected_buckets: the caps count bytes, not elements."""
    rng = random.Random(seed)
    mesh = dist.Mesh([2], names=["dp"], context=ctx)
    grads = [(rng.choice([8, 24, 64, 96, 256]), rng.choice(list(BYTES))) for _ in range(10)]
    first_cap, cap = rng.choice([64, 200, 512]), rng.choice([256, 700, 1024])
    m = dist.Module.create(ctx)
    partial = dist.TensorDist(mesh, [-1], {0: "sum"})
    f = m.function("step", [dist.TensorType([n], ty, partial) for n, ty in grads])
    reduced = [f.allreduce(g, mesh, [0], "sum") for g in f.arguments]
    f.return_(*reduced)
    m.run(
        f"dist-bucket-gradients{{first-bucket-mb={first_cap / 2**20!r} bucket-mb={cap / 2**20!r}}}"
    )
    got = []
    for op in m.walk():
        if op.name == "dist.pack":
            (packed,) = op.results
            t = packed.type
            got.append((str(t.element_type), math.prod(t.shape) * BYTES[str(t.element_type)]))
    assert sorted(got) == sorted(expected_buckets(grads, first_cap, cap))
    # Each bucket's members became one allreduce.
    members = sum(n for _, _, n in expected_buckets(grads, first_cap, cap, members=True))
    allreduces = [op for op in m.walk() if op.name == "dist.allreduce"]
    assert len(allreduces) == len(grads) - members + len(got)
