"""Schedules read from the IR, not from its text: after the pipeline, each
asynchronous collective overlaps the compute it was moved for, runs on the
stream of its mesh axis's role, and is waited for right before its first
use; the embedding gradient's c_identity is over the axis that splits the
table's rows; no op after the AMP check reads the scaled gradients.

A FileCheck line matches text that someone may update together with a wrong
change; these properties hold for any correct output, so they are checked
on whole programs (the GPT block example and an MLP on a [2, 2] mesh)."""
import os
import re

import pytest

import dist
from conftest import EXAMPLES

STREAMS = ("compute", "mp", "dp", "sharding")

MESH = '#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "mp"]>'
MLP = (
    MESH
    + """
!x = tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>
!h = tensor<8x32xf32, #dist.tensor<#mesh, [0, 1]>>
!w1 = tensor<16x32xf32, #dist.tensor<#mesh, [-1, 1]>>
!w2 = tensor<32x16xf32, #dist.tensor<#mesh, [1, -1]>>
func.func @mlp(%x: !x, %w1: !w1 {dist.param = "w1"}, %w2: !w2 {dist.param = "w2"}, %dout: !x,
               %ls: tensor<1xf32> {dist.loss_scale})
    -> (!x, !w1 {dist.grad = "w1"}, !w2 {dist.grad = "w2"}, !w1, !x) {
  %h = dist.matmul %x, %w1 : !x, !w1 -> !h
  // The row-parallel output's allreduce (no stream set): the backward's
  // matmuls come before its only use, so it overlaps them on its role's stream.
  %op = dist.matmul %h, %w2 : !h, !w2
      -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
  %o = dist.allreduce %op on #mesh axes = [1] reduce = sum
      : tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>> -> !x
  %dh, %dw2p = dist.matmul_grad %h, %w2, %dout : !h, !w2, !x
      -> !h, tensor<32x16xf32, #dist.tensor<#mesh, [1, -1], partial = [0 : sum]>>
  %dxp, %dw1p = dist.matmul_grad %x, %w1, %dh : !x, !w1, !h
      -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>,
         tensor<16x32xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
  %dx = dist.allreduce %dxp on #mesh axes = [1] reduce = sum
      : tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>> -> !x
  %dw1 = dist.allreduce %dw1p on #mesh axes = [0] reduce = avg
      : tensor<16x32xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>> -> !w1
  %dw2 = dist.allreduce %dw2p on #mesh axes = [0] reduce = avg
      : tensor<32x16xf32, #dist.tensor<#mesh, [1, -1], partial = [0 : sum]>> -> !w2
  %upd = arith.subf %w1, %dw1 : !w1
  return %dx, %dw1, %dw2, %upd, %o : !x, !w1, !w2, !w1, !x
}
"""
)


def programs(ctx):
    yield "gpt_block", dist.Module.read(os.path.join(EXAMPLES, "gpt_block.mlir"), context=ctx)
    yield "mlp", dist.Module.parse(MLP, filename="mlp.mlir", context=ctx)


def axes(op):
    return [int(a) for a in re.findall(r"-?\d+", str(op.attributes["axes"]).split(":")[1])]


def is_async(op):
    return op.name.startswith("dist.") and any(
        isinstance(r.type, dist.FutureType) for r in op.results
    )


def through_reshapes(value):
    while value.owner is not None and value.owner.name in (
        "tensor.collapse_shape",
        "tensor.expand_shape",
    ):
        value = value.owner.operands[0]
    return value


def violations(module):
    """Every broken schedule property of `module`, as text."""
    order = {op: i for i, op in enumerate(module.walk())}
    found = []
    for op in module.walk():
        where = f"{op.name} at line {op.location.line}"
        if op.name == "dist.wait":
            # Directly before its first use: only other waits in between.
            users = set(op.results[0].users)
            n = op.next
            while n is not None and n not in users:
                if n.name != "dist.wait":
                    found.append(f"{where}: waits before {n.name}, which does not use it")
                n = n.next
            if n is None:
                found.append(f"{where}: no use after it in its block")
        if is_async(op):
            waits = op.results[0].users
            if [w.name for w in waits] != ["dist.wait"]:
                found.append(f"{where}: completed by {[w.name for w in waits]}")
                continue
            wait = waits[0]
            between = [o for o in order if order[op] < order[o] < order[wait]]
            # Work to hide behind: an op other than a wait that reads a
            # tensor (seeds, constants and coordinates take no time).
            if not any(
                o.name != "dist.wait"
                and any(isinstance(v.type, (dist.TensorType, dist.FutureType)) for v in o.operands)
                for o in between
            ):
                found.append(f"{where}: nothing overlaps it")
            names = op.attributes["mesh"].names
            roles = {names[a] for a in axes(op)}
            stream = STREAMS[int(str(op.attributes["stream"]).split(":")[0])]
            if roles != {stream}:
                found.append(f"{where}: on stream {stream}, over axes {sorted(roles)}")
            # A split matmul_grad's dX allreduce overlaps the dY matmul.
            dx = op.operands[0].owner
            if dx is not None and dx.name == "dist.matmul" and "transpose_y" in dx.attributes:
                dout = dx.operands[0]
                dys = [
                    o
                    for o in order
                    if o.name == "dist.matmul"
                    and "transpose_x" in o.attributes
                    and through_reshapes(o.operands[1]) == dout
                ]
                if not any(order[op] < order[dy] < order[wait] for dy in dys):
                    found.append(f"{where}: the dY matmul is not between issue and wait")
        if op.name == "dist.c_identity":
            for user in op.results[0].users:
                if user.name == "dist.c_embedding_grad":
                    rows = user.operands[1].type.dist.dims_mapping[0]
                    if axes(op) != [rows]:
                        found.append(
                            f"{where}: over axes {axes(op)}, the table's rows "
                            f"are split over {rows}"
                        )
        if op.name == "dist.check_finite_and_unscale":
            for g in op.operands[:-1]:
                for user in g.users:
                    if order[user] > order[op]:
                        found.append(
                            f"{where}: {user.name} at line "
                            f"{user.location.line} reads a scaled gradient"
                        )
    return found


@pytest.mark.parametrize("name", ["gpt_block", "mlp"])
def test_pipeline_schedule(ctx, name):
    module = dict(programs(ctx))[name]
    module.run("dist-auto-parallel")
    ops = [op.name for op in module.walk()]
    # The properties are not vacuous: there is something to check.
    assert any(is_async(op) for op in module.walk())
    assert "dist.check_finite_and_unscale" in ops
    if name == "gpt_block":
        assert "dist.c_identity" in ops
    else:
        # Both roles are on their streams, one of them set by role alone.
        streams = {
            STREAMS[int(str(op.attributes["stream"]).split(":")[0])]
            for op in module.walk()
            if is_async(op)
        }
        assert streams == {"mp", "dp"}
    assert violations(module) == []


WRONG = (
    MESH
    + """
func.func @f(%x: tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>, %y: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>) {
  %f = dist.allreduce %x on #mesh axes = [0] reduce = sum stream = mp
      : tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
      -> !dist.future<tensor<8xf32, #dist.tensor<#mesh, [-1]>>>
  %r = dist.wait %f : !dist.future<tensor<8xf32, #dist.tensor<#mesh, [-1]>>>
  %s = dist.scale %y by 2.0 : tensor<8xf32>
  %p = tensor.cast %r : tensor<8xf32, #dist.tensor<#mesh, [-1]>> to tensor<8xf32>
  return %s, %p : tensor<8xf32>, tensor<8xf32>
}
"""
)


def test_violations_are_found(ctx):
    # The checker itself: a dp-axis collective on the mp stream, waited for
    # too early, with nothing to overlap.
    found = violations(dist.Module.parse(WRONG, context=ctx))
    assert any("on stream mp, over axes ['dp']" in v for v in found)
    assert any("waits before dist.scale" in v for v in found)
    assert any("nothing overlaps it" in v for v in found)
