#!/usr/bin/env python3
"""Generates synthetic training steps for the dist benchmark.

  gen.py --ops N [--shape one|layers] [--dialect dist|shard] -o out.mlir

dist: L transformer-style layers on a [2, 4] mesh (dp x mp). Each layer has a
column- and a row-parallel linear (matmuls, the row-parallel allreduce), a
dropout, and their backward (a recomputed dropout, two matmul_grads, the
allreduce of the column-parallel dX, the dp sync of both weight gradients).
The first layer adds a vocab-parallel embedding (forward and backward); each
step ends with AMP (gradients returned as dist.grad results, a loss scale).
--shape one puts every layer in one function; --shape layers gives each
layer its own function (and its own AMP step).

shard: the same number of layers written for MLIR's shard dialect (a grid,
shardings on the inputs and results of linalg matmuls) for
sharding-propagation + shard-partition, the closest upstream peer.

The output is deterministic; L is chosen so the program has about N ops.
"""
import argparse
import sys

MESH = '#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>'
ACT = "tensor<8x64xf32, #dist.tensor<#mesh, [0, -1]>>"
ACT_MP = "tensor<8x64xf32, #dist.tensor<#mesh, [0, 1]>>"
ACT_P = "tensor<8x64xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>"
W_COL = "tensor<64x64xf32, #dist.tensor<#mesh, [-1, 1]>>"
W_COL_P = "tensor<64x64xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>"
W_ROW = "tensor<64x64xf32, #dist.tensor<#mesh, [1, -1]>>"
W_ROW_P = "tensor<64x64xf32, #dist.tensor<#mesh, [1, -1], partial = [0 : sum]>>"
IDS = "tensor<8x16xi64, #dist.tensor<#mesh, [0, -1]>>"
EMB_W = "tensor<256x4xf32, #dist.tensor<#mesh, [1, -1]>>"
EMB_OUT = "tensor<8x16x4xf32, #dist.tensor<#mesh, [0, -1, -1]>>"
SCALE = "tensor<1xf32>"

# Ops per layer (forward 4 + backward 10) and for the embedding (2 + 4 args).
OPS_PER_LAYER = 14


class Writer:
    def __init__(self, out):
        self.out = out

    def __call__(self, line):
        self.out.write(line)
        self.out.write("\n")


def forward(w, i, x):
    w(f"  %h{i} = dist.matmul {x}, %w1_{i} : {ACT}, {W_COL} -> {ACT_MP}")
    w(f"  %p{i} = dist.matmul %h{i}, %w2_{i} : {ACT_MP}, {W_ROW} -> {ACT_P}")
    w(f"  %r{i} = dist.allreduce %p{i} on #mesh axes = [1] reduce = sum : {ACT_P} -> {ACT}")
    w(f'  %x{i + 1} = dist.dropout %r{i} prob = 1.000000e-01 {{id = "d{i}"}} : {ACT} -> {ACT}')


def backward(w, i, x, g):
    w(f'  %gd{i} = dist.dropout {g} prob = 1.000000e-01 {{recompute_of = "d{i}"}} : {ACT} -> {ACT}')
    w(
        f"  %gh{i}, %dw2p{i} = dist.matmul_grad %h{i}, %w2_{i}, %gd{i} : {ACT_MP}, {W_ROW}, {ACT} -> {ACT_MP}, {W_ROW_P}"
    )
    w(
        f"  %gxp{i}, %dw1p{i} = dist.matmul_grad {x}, %w1_{i}, %gh{i} : {ACT}, {W_COL}, {ACT_MP} -> {ACT_P}, {W_COL_P}"
    )
    w(f"  %g{i} = dist.allreduce %gxp{i} on #mesh axes = [1] reduce = sum : {ACT_P} -> {ACT}")
    w(
        f"  %dw1s{i} = dist.allreduce %dw1p{i} on #mesh axes = [0] reduce = sum : {W_COL_P} -> {W_COL}"
    )
    w(f"  %dw1_{i} = dist.scale %dw1s{i} by 5.000000e-01 : {W_COL}")
    w(
        f"  %dw2s{i} = dist.allreduce %dw2p{i} on #mesh axes = [0] reduce = sum : {W_ROW_P} -> {W_ROW}"
    )
    w(f"  %dw2_{i} = dist.scale %dw2s{i} by 5.000000e-01 : {W_ROW}")


def step(w, name, layers, with_embedding):
    """One function: forward then backward over `layers` (a list of ids)."""
    args = []
    if with_embedding:
        args += [f"%ids: {IDS}", f'%wemb: {EMB_W} {{dist.param = "wemb"}}', f"%demb_in: {EMB_OUT}"]
    args.append(f"%x{layers[0]}: {ACT}")
    for i in layers:
        args.append(f'%w1_{i}: {W_COL} {{dist.param = "w1_{i}"}}')
        args.append(f'%w2_{i}: {W_ROW} {{dist.param = "w2_{i}"}}')
    args += [f"%gout: {ACT}", f"%ls: {SCALE} {{dist.loss_scale}}"]
    results = [f"{ACT}", f"{ACT}"]
    values = [f"%x{layers[-1] + 1}", f"%g{layers[0]}"]
    if with_embedding:
        results.append(f'{EMB_W} {{dist.grad = "wemb"}}')
        values.append("%dwemb")
    for i in layers:
        results.append(f'{W_COL} {{dist.grad = "w1_{i}"}}')
        results.append(f'{W_ROW} {{dist.grad = "w2_{i}"}}')
        values += [f"%dw1_{i}", f"%dw2_{i}"]
    w(f"func.func @{name}({', '.join(args)}) -> ({', '.join(results)}) {{")
    if with_embedding:
        w(f"  %emb = dist.embedding %ids, %wemb : {IDS}, {EMB_W} -> {EMB_OUT}")
    for i in layers:
        forward(w, i, f"%x{i}")
    g = "%gout"
    for i in reversed(layers):
        backward(w, i, f"%x{i}", g)
        g = f"%g{i}"
    if with_embedding:
        w(
            f"  %dwemb = dist.embedding_grad %ids, %wemb, %demb_in : {IDS}, {EMB_W}, {EMB_OUT} -> {EMB_W}"
        )
    types = ", ".join(r.split(" {")[0] for r in results)
    w(f"  return {', '.join(values)} : {types}")
    w("}")


def gen_dist(out, ops, shape):
    w = Writer(out)
    w(MESH)
    layers = max(1, ops // OPS_PER_LAYER)
    if shape == "one":
        step(w, "train_step", list(range(layers)), with_embedding=True)
    else:
        for i in range(layers):
            step(w, f"layer{i}", [i], with_embedding=(i == 0))


def gen_shard(out, ops, shape):
    """Per layer: two sharded linears forward and two transposed products
    standing in for the backward, about as many ops as a dist layer."""
    w = Writer(out)
    w("shard.grid @grid(shape = 2x4)")
    layers = max(1, ops // OPS_PER_LAYER)
    t = "tensor<8x64xf32>"
    wt = "tensor<64x64xf32>"

    def layer(i, x):
        w(f"  %sw1_{i} = shard.shard %w1_{i} to %scol : {wt}")
        w(f"  %sw2_{i} = shard.shard %w2_{i} to %srow : {wt}")
        w(f"  %h{i} = linalg.matmul ins({x}, %sw1_{i} : {t}, {wt}) outs(%zero : {t}) -> {t}")
        w(f"  %o{i} = linalg.matmul ins(%h{i}, %sw2_{i} : {t}, {wt}) outs(%zero : {t}) -> {t}")
        w(f"  %y{i} = shard.shard %o{i} to %sact : {t}")
        w(f"  %gh{i} = linalg.matmul ins(%y{i}, %sw2_{i} : {t}, {wt}) outs(%zero : {t}) -> {t}")
        w(f"  %gx{i} = linalg.matmul ins(%gh{i}, %sw1_{i} : {t}, {wt}) outs(%zero : {t}) -> {t}")
        w(f"  %x{i + 1} = shard.shard %gx{i} to %sact : {t}")

    def header(name, ids):
        args = [f"%x{ids[0]}: {t}"] + [f"%w1_{i}: {wt}, %w2_{i}: {wt}" for i in ids]
        w(f"func.func @{name}({', '.join(args)}) -> {t} {{")
        w("  %sact = shard.sharding @grid split_axes = [[0]] : !shard.sharding")
        w("  %scol = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding")
        w("  %srow = shard.sharding @grid split_axes = [[1]] : !shard.sharding")
        w("  %c0 = arith.constant 0.000000e+00 : f32")
        w(f"  %empty = tensor.empty() : {t}")
        w(f"  %zero = linalg.fill ins(%c0 : f32) outs(%empty : {t}) -> {t}")

    if shape == "one":
        ids = list(range(layers))
        header("train_step", ids)
        for i in ids:
            layer(i, f"%x{i}")
        w(f"  return %x{layers} : {t}")
        w("}")
    else:
        for i in range(layers):
            header(f"layer{i}", [i])
            layer(i, f"%x{i}")
            w(f"  return %x{i + 1} : {t}")
            w("}")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ops", type=int, required=True, help="approximate op count")
    parser.add_argument("--shape", choices=["one", "layers"], default="one")
    parser.add_argument("--dialect", choices=["dist", "shard"], default="dist")
    parser.add_argument("-o", "--output", default="-")
    args = parser.parse_args()
    out = sys.stdout if args.output == "-" else open(args.output, "w")
    (gen_dist if args.dialect == "dist" else gen_shard)(out, args.ops, args.shape)


if __name__ == "__main__":
    main()
