#!/usr/bin/env python3
"""The order of mesh axes, on MPI, with values no symmetry hides.

  axis_order.py

Each process of a [2, 4] mesh (dp, mp) holds its own arbitrary values (a
row of a random table, picked by its coordinates), so that reducing or
placing its blocks in any other order than the encoding defines gives
another number:

  * a value partial over both axes with two reduction kinds (max then sum,
    sum then max, ...) resharded to replicated and to split: the encoding
    reduces axis 0 first, then axis 1; numpy does the same;
  * two-axis collectives written out (axes = [0, 1]): all_gather of a
    tensor split over both axes, reduce_scatter of a sum pending over both
    (and an all_to_all along mp, which moves one axis's split only); numpy
    places each process's block at its coordinates.

Every rank's output must equal numpy's; prints one line per case.
"""
import numpy as np

import dist
import textir
from textir import enc, fmt, ttype

MESH = [2, 4]
P = MESH[0] * MESH[1]
REDUCE = {"sum": np.sum, "max": np.max, "min": np.min}
RNG = np.random.default_rng(20261206)


def coords(rank):
    return rank // MESH[1], rank % MESH[1]


def program(shape, from_enc, op_lines, result_type, table):
    """Each process casts its row of `table` (its local block) to
    `from_enc`, runs `op_lines` on %x (which must define %y of
    `result_type`) and prints %y."""
    local = list(table.shape[1:])
    rows = ", ".join(
        "[" + ", ".join("[" + ", ".join(fmt(v) for v in r) + "]" for r in block) + "]"
        for block in table
    )
    plain_result = ttype(shape_of(result_type))
    return f"""#mesh = #dist.mesh<shape = [{MESH[0]}, {MESH[1]}], names = ["dp", "mp"]>
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {{
  %crd0 = dist.process_coord #mesh axis = 0
  %crd1 = dist.process_coord #mesh axis = 1
  %width = arith.constant {MESH[1]} : index
  %row0 = arith.muli %crd0, %width : index
  %row = arith.addi %row0, %crd1 : index
  %table = arith.constant dense<[{rows}]> : {ttype([P] + local)}
  %slice = tensor.extract_slice %table[%row, 0, 0] [1, {local[0]}, {local[1]}] [1, 1, 1] : {ttype([P] + local)} to {ttype(local)}
  %x = tensor.cast %slice : {ttype(local)} to {ttype(local, from_enc)}
{op_lines}
  %plain = tensor.cast %y : {result_type} to {plain_result}
  %buf = bufferization.to_buffer %plain : {plain_result} to memref<{'x'.join(map(str, shape_of(result_type)))}xf32>
  %u = memref.cast %buf : memref<{'x'.join(map(str, shape_of(result_type)))}xf32> to memref<*xf32>
  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}}
"""


def shape_of(type_text):
    inner = type_text[len("tensor<") :].split(",")[0].rstrip(">")
    return [int(d) for d in inner.split("x")[:-1]]


def block(glob, dims, rank):
    """The block of `glob` that `dims` gives process `rank`."""
    c = coords(rank)
    index = []
    for d, a in enumerate(dims):
        if a < 0:
            index.append(slice(None))
            continue
        n = glob.shape[d] // MESH[a]
        index.append(slice(c[a] * n, (c[a] + 1) * n))
    return glob[tuple(index)]


def check(label, text, expected):
    ranks = dist.run_on_mpi(text, P, timeout=120, verify=False)
    bad = [
        r
        for r, out in enumerate(ranks)
        if len(out) != 1 or not np.allclose(out[0], expected(r), atol=1e-4)
    ]
    print(("ok: " if not bad else f"FAILED (ranks {bad}): ") + label)
    return not bad


def partial_cases():
    ok = True
    shape = [4, 8]
    for k0, k1 in [("max", "sum"), ("sum", "max"), ("min", "sum"), ("max", "min"), ("sum", "sum")]:
        table = RNG.uniform(-4, 4, size=[P] + shape).astype(np.float32)
        # The encoding's meaning: reduce over axis 0 (dp) first, then over
        # axis 1 (mp).
        grid = table.reshape(MESH + shape)
        value = REDUCE[k1](REDUCE[k0](grid, axis=0), axis=0)
        from_enc = enc([-1, -1], {0: k0, 1: k1})
        for to_dims in ([-1, -1], [-1, 1]):
            to_type = ttype(
                [shape[0], shape[1] // (MESH[1] if to_dims[1] == 1 else 1)], enc(to_dims, {})
            )
            op = f"  %y = dist.reshard %x : {ttype(shape, from_enc)} -> {to_type}"
            ok &= check(
                f"partial [0 : {k0}, 1 : {k1}] resharded to {to_dims}",
                program(shape, from_enc, op, to_type, table),
                lambda r, v=value, d=to_dims: block(v, d, r),
            )
    return ok


def collective_cases():
    ok = True
    glob = RNG.uniform(-4, 4, size=[8, 8]).astype(np.float32)
    split = enc([0, 1], {})
    split_type = ttype([4, 2], split)
    table = np.stack([block(glob, [0, 1], r) for r in range(P)])
    whole_type = ttype([8, 8], enc([-1, -1], {}))
    op = f"  %y = dist.all_gather %x on #mesh axes = [0, 1] : {split_type} -> {whole_type}"
    ok &= check(
        "all_gather axes [0, 1] of [0, 1] on [2, 4]",
        program([8, 8], split, op, whole_type, table),
        lambda r: glob,
    )

    partial = enc([-1, -1], {0: "sum", 1: "sum"})
    shares = RNG.uniform(-4, 4, size=[P, 8, 8]).astype(np.float32)
    total = shares.sum(axis=0)
    op = (
        f"  %y = dist.reduce_scatter %x on #mesh axes = [0, 1] reduce = sum : "
        f"{ttype([8, 8], partial)} -> {split_type}"
    )
    ok &= check(
        "reduce_scatter axes [0, 1] of a sum over both to [0, 1] on [2, 4]",
        program([8, 8], partial, op, split_type, shares),
        lambda r: block(total, [0, 1], r),
    )

    # all_to_all moves the split of one mesh axis (the lowering refuses
    # more): mp's, from dim 1 to dim 0, in groups along mp.
    rows_type = ttype([8, 2], enc([-1, 1], {}))
    cols_type = ttype([2, 8], enc([1, -1], {}))
    table = np.stack([block(glob, [-1, 1], r) for r in range(P)])
    op = f"  %y = dist.all_to_all %x on #mesh axes = [1] : {rows_type} -> {cols_type}"
    ok &= check(
        "all_to_all axes [1] from [-1, 1] to [1, -1] on [2, 4]",
        program([8, 8], enc([-1, 1], {}), op, cols_type, table),
        lambda r: block(glob, [1, -1], r),
    )
    return ok


def main():
    ok = partial_cases()
    ok &= collective_cases()
    textir.finish(ok, "every case equals numpy" if ok else "some cases differ from numpy")


if __name__ == "__main__":
    main()
