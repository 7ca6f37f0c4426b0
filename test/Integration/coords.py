#!/usr/bin/env python3
"""Who holds which shard: each process's mesh coordinate at run time.

  coords.py

On meshes whose process ids are permuted, every rank prints the
coordinate `dist.process_coord` gives it when run on MPI. It must equal
the C++ mesh arithmetic (`dist.Mesh.coord`, i.e. `mesh::processCoord`) and
the constant `--dist-specialize-rank` folds in for that rank. The lines
"rank R: (..)" are checked against the row-major unravel written out by
hand in coords.test, so a lowering that takes the coordinate from the raw
rank, or unravels column-major, fails here even if all three agree.
"""
import sys

import dist

# (shape, process ids): ids[i] is the rank at row-major position i.
MESHES = [
    ([2, 3], [4, 2, 0, 5, 1, 3]),
    ([2, 2], [3, 1, 0, 2]),
]


def program(ctx, shape, ids):
    """Prints the coordinate along every axis as a tensor<1xf32>."""
    mesh = dist.Mesh(shape, process_ids=ids, context=ctx)
    module = dist.Module.create(ctx)
    f = module.function("main")
    scalar = dist.TensorType([1], "f32", context=ctx)
    for axis in range(len(shape)):
        c = f.process_coord(mesh, axis)
        i = f.arith("index_cast", c, result_type=dist.Type.parse("i32", ctx))
        v = f.arith("sitofp", i, result_type=dist.Type.parse("f32", ctx))
        f.print(f.splat(v, scalar))
    f.return_()
    module.verify()
    return mesh, module


def coords(arrays):
    return tuple(int(a.reshape(-1)[0]) for a in arrays)


def main():
    ctx = dist.Context()
    ok = True
    for shape, ids in MESHES:
        mesh, module = program(ctx, shape, ids)
        ranks = dist.run_on_mpi(module, len(ids))
        print(f"mesh {shape} process_ids {ids}")
        for rank, arrays in enumerate(ranks):
            ran = coords(arrays)
            cpp = tuple(mesh.coord(rank))
            # The per-rank program Paddle would emit, run alone.
            special = coords(
                dist.run_on_mpi(module, 1, pass_flags=f"--dist-specialize-rank=rank={rank}")[0]
            )
            print(f"rank {rank}: {ran}")
            if not ran == cpp == special:
                print(
                    f"FAILED: rank {rank}: MPI run {ran}, mesh::processCoord {cpp}, "
                    f"--dist-specialize-rank {special}"
                )
                ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
