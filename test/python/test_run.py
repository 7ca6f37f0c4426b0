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
def test_run_errors_raise(ctx):
    m = dist.Module.parse(
        "#mesh = #dist.mesh<shape = [2]>\nfunc.func @main() {\n"
        "  %c = dist.process_coord #mesh axis = 0\n  return\n}\n",
        context=ctx,
    )
    with pytest.raises(dist.RunError, match="2 processes but the program runs on 3"):
        dist.run_on_mpi(m, 3)
