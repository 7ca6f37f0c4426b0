"""Running built programs on MPI and reading the results as numpy arrays."""
import numpy as np
import pytest

import dist
from conftest import requires_mpich


@requires_mpich
def test_run_on_mpi_returns_each_ranks_arrays(ctx):
    mesh = dist.Mesh([2], names=["mp"], context=ctx)
    m = dist.Module.create(ctx)
    f = m.function("main")
    coord = f.process_coord(mesh, 0)
    c = f.arith("index_cast", coord, result_type=dist.Type.parse("i32", ctx))
    v = f.arith("sitofp", c, result_type=dist.Type.parse("f32", ctx))
    partial = dist.TensorType([2, 3], "f32", dist.TensorDist(mesh, [-1, -1], {0: "sum"}))
    t = f.splat(v, partial)
    r = f.allreduce(t, mesh, [0])
    f.print(f.cast(t, dist.TensorType([2, 3], context=ctx)))
    f.print(r)
    f.return_()
    ranks = dist.run_on_mpi(m, 2)
    assert len(ranks) == 2
    for rank, arrays in enumerate(ranks):
        local, total = arrays
        assert local.shape == (2, 3) and np.all(local == rank)
        assert np.all(total == 1.0)
    # The same as a native executable (dist-compile), on two host names.
    native = dist.run_on_mpi(m, 2, native=True, hosts=["localhost", "127.0.0.1"])
    assert all(np.array_equal(a, b) for r, n in zip(ranks, native) for a, b in zip(r, n))


@requires_mpich
def test_builder_allreduces_run_on_a_2x2_mesh(ctx):
    """The builder's allreduce types, run: a value partial over axis 0
    (sum) and axis 1 (max) on [2, 2], each process holding a different
    x[i, j]. The allreduce over axis 0 leaves a max over axis 1 pending
    (every process of column j holds x[0, j] + x[1, j]); the one over axis
    1 completes it: numpy's max over j of the sum over i, which taken in
    the other order (9) differs."""
    mesh = dist.Mesh([2, 2], names=["dp", "mp"], context=ctx)
    m = dist.Module.create(ctx)
    f = m.function("main")
    f32 = dist.Type.parse("f32", ctx)

    def coord(axis):
        i = f.arith(
            "index_cast", f.process_coord(mesh, axis), result_type=dist.Type.parse("i32", ctx)
        )
        return f.arith("sitofp", i, result_type=f32)

    i, j = coord(0), coord(1)

    def k(x):
        return f.constant(x, f32)

    # x = 1 + 3i + 4j - 8ij: [[1, 5], [4, 0]].
    ij = f.arith("mulf", i, j)
    x = f.arith("addf", k(1.0), f.arith("mulf", k(3.0), i))
    x = f.arith("addf", x, f.arith("mulf", k(4.0), j))
    x = f.arith("subf", x, f.arith("mulf", k(8.0), ij))
    both = dist.TensorDist(mesh, [-1], {0: "sum", 1: "max"})
    t = f.splat(x, dist.TensorType([3], "f32", both))
    r = f.allreduce(t, mesh, [0])
    r2 = f.allreduce(r, mesh, [1], "max")
    f.print(r)
    f.print(r2)
    f.return_()
    X = np.array([[1.0, 5.0], [4.0, 0.0]])
    ranks = dist.run_on_mpi(m, 4)
    for rank, (column_sum, total) in enumerate(ranks):
        jj = mesh.coord(rank)[1]
        assert np.all(column_sum == X[:, jj].sum()), (rank, column_sum)
        assert np.all(total == X.sum(axis=0).max()), (rank, total)


@requires_mpich
def test_run_errors_raise(ctx):
    m = dist.Module.parse(
        "#mesh = #dist.mesh<shape = [2]>\nfunc.func @main() {\n"
        "  %c = dist.process_coord #mesh axis = 0\n  return\n}\n",
        context=ctx,
    )
    with pytest.raises(dist.RunError, match="2 processes but the program runs on 3"):
        dist.run_on_mpi(m, 3)
