"""The lowered matmuls compute what numpy computes, in every form: plain,
transpose_x, transpose_y, both, batched with a broadcast operand, and the
gradients of each; through OpenBLAS (transposed operands read in place,
batch dims as loops around the GEMM, a broadcast operand's gradient summed
by GEMMs into one result) and through loops (transposed operands copied so
that the innermost loop is contiguous: this checks the copies'
orientation)."""
import itertools

import numpy as np
import pytest

import dist
from conftest import requires_mpich

M, K, N = 5, 3, 4


def op(a, transpose):
    return np.swapaxes(a, -1, -2) if transpose else a


@requires_mpich
@pytest.mark.parametrize("matmul", ["blas", "loops"])
@pytest.mark.parametrize("x_batch,y_batch", [((), ()), ((2,), ()), ((), (2,)), ((2,), (2,))])
def test_matmul_and_gradients_match_numpy(ctx, x_batch, y_batch, matmul):
    rng = np.random.default_rng(7)
    m = dist.Module.create(ctx)
    f = m.function("main")
    expected = []
    for tx, ty in itertools.product((False, True), repeat=2):
        xs = x_batch + ((K, M) if tx else (M, K))
        ys = y_batch + ((N, K) if ty else (K, N))
        xv = rng.standard_normal(xs).astype(np.float32)
        yv = rng.standard_normal(ys).astype(np.float32)
        out = op(xv, tx) @ op(yv, ty)
        dv = rng.standard_normal(out.shape).astype(np.float32)
        x = f.constant(xv, dist.TensorType(list(xs), "f32", context=ctx))
        y = f.constant(yv, dist.TensorType(list(ys), "f32", context=ctx))
        d = f.constant(dv, dist.TensorType(list(out.shape), "f32", context=ctx))
        f.print(f.matmul(x, y, transpose_x=tx, transpose_y=ty))
        dx, dy = f.matmul_grad(x, y, d, transpose_x=tx, transpose_y=ty)
        f.print(dx)
        f.print(dy)
        # d(op(x)) = dY op(y)^T, d(op(y)) = op(x)^T dY; broadcast batch dims
        # are summed away.
        gx = dv @ np.swapaxes(op(yv, ty), -1, -2)
        gy = np.swapaxes(op(xv, tx), -1, -2) @ dv
        gx, gy = op(gx, tx), op(gy, ty)
        if len(x_batch) < gx.ndim - 2:
            gx = gx.sum(axis=0)
        if len(y_batch) < gy.ndim - 2:
            gy = gy.sum(axis=0)
        expected += [out, gx, gy]
    f.return_()
    [got] = dist.run_on_mpi(m, 1, matmul=matmul)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g.shape == e.shape, i
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5, err_msg=f"result {i}")
