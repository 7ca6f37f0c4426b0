"""A pipelined training step on MPI against numpy.

The layer stack of examples/pipeline_mlp.py is completed, pipelined
(--dist-pipeline) and run on pp * dp * tp processes; every rank prints its
shard of the loss, each gradient and each updated weight, which must equal
the serial step on the whole batch of M microbatches, computed with numpy,
within 1e-4.
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
import pipeline_mlp as mlp  # noqa: E402

from dist.run import run_on_mpi  # noqa: E402
from dist.run.paths import dist_opt  # noqa: E402


def check(mesh, M, schedule, chunks, L, ssend, B=4, H=8):
    """Pipelines, runs and compares one configuration; prints its line and
    returns whether it matched."""
    pp, dp, tp = mesh
    xs, ts, ws = mlp.data(M, L, B, H)
    try:
        text = mlp.program(dist_opt(), mesh, M, schedule, chunks, L, xs, ts, ws)
    except RuntimeError as e:
        print(f"FAILED: dist-opt:\n{e}")
        return False
    # Synchronous sends return only once the receive is posted: an order
    # that works only because MPI buffers small messages would hang (and
    # dist-run's timeout would stop it).
    os.environ["DIST_RUNTIME_SSEND"] = "1" if ssend else "0"
    ranks = run_on_mpi(text, pp * dp * tp, timeout=120)
    loss, grads, new = mlp.reference(xs, ts, ws)
    worst = 0.0
    for rank, arrays in enumerate(ranks):
        c = np.unravel_index(rank, mesh)
        expect = [np.array([loss])]
        for group in (grads, new):
            for i, w in enumerate(group):
                dims = mlp.weight_dims(i, tp)
                r0 = (c[2] * H // tp) if dims[0] == 2 else 0
                c0 = (c[2] * H // tp) if dims[1] == 2 else 0
                rr = H // tp if dims[0] == 2 else H
                cc = H // tp if dims[1] == 2 else H
                expect.append(w[r0 : r0 + rr, c0 : c0 + cc])
        if len(arrays) != len(expect):
            print(f"FAILED: rank {rank} printed {len(arrays)} arrays, expected {len(expect)}")
            return False
        for got, want in zip(arrays, expect):
            worst = max(worst, float(np.max(np.abs(got.reshape(want.shape) - want))))
    status = "ok" if worst <= 1e-4 else "MISMATCH"
    print(
        f"{status}: {schedule} pp={pp} dp={dp} tp={tp} M={M} V={chunks} "
        f"L={L}{' ssend' if ssend else ''}: worst difference {worst:.1e}",
        flush=True,
    )
    return status == "ok"


# The acceptance matrix: pp = 2 and 4, M = 4 and 8, every schedule (with
# synchronous sends); pp x dp, pp x tp and dp x tp x pp; one buffered run.
MATRIX = [
    ((p, 1, 1), m, s, 2 if s == "interleaved" else 1, 4 * p // 2, True)
    for p in (2, 4)
    for m in (4, 8)
    for s in ("gpipe", "1f1b", "interleaved", "zb-h1")
] + [
    ((2, 2, 1), 4, "1f1b", 1, 4, True),
    ((2, 1, 2), 4, "1f1b", 1, 4, True),
    ((2, 2, 2), 4, "1f1b", 1, 4, True),
    ((2, 2, 2), 8, "zb-h1", 1, 4, True),
    ((4, 1, 1), 8, "1f1b", 1, 8, False),
]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--matrix", action="store_true", help="run the acceptance matrix")
    p.add_argument("--mesh", default="2,1,1", help="pp,dp,tp")
    p.add_argument("--microbatches", type=int, default=4)
    p.add_argument("--schedule", default="1f1b")
    p.add_argument("--chunks", type=int, default=1)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--ssend", action="store_true", help="force synchronous sends (MPI_Ssend)")
    args = p.parse_args()
    if args.matrix:
        results = [check(*config) for config in MATRIX]
        print(f"pipeline matrix: {sum(results)} of {len(results)} equal numpy")
        return 0 if all(results) else 1
    mesh = tuple(int(v) for v in args.mesh.split(","))
    ok = check(mesh, args.microbatches, args.schedule, args.chunks, args.layers, args.ssend)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
