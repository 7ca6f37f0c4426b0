"""dist.torch without MPI: what import_step builds and what it refuses.
Each refusal names the op or the name and, where the model made it, the
line of this file."""
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="PyTorch (Debian's python3-torch) is not installed")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import dist.torch as dt  # noqa: E402

HERE = os.path.abspath(__file__)


def _line(marker):
    """The line of this file that holds `marker`."""
    with open(HERE) as f:
        for i, line in enumerate(f, 1):
            if marker in line and "_line(" not in line:
                return i
    raise AssertionError(marker)


class Linear2(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 8)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))  # MARK-forward


def _params(model):
    return {k: v.detach().clone().requires_grad_(True) for k, v in model.named_parameters()}


def _step(model):
    from torch.nn.utils import stateless

    def step(params, x):
        loss = stateless.functional_call(model, params, (x,)).pow(2).mean()
        return loss, torch.autograd.grad(loss, list(params.values()))

    return step


def test_import_dist_does_not_import_torch():
    code = "import sys, dist, dist.torch; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _megatron_mlp():
    """Linear2's step with Megatron's plan on 2 processes."""
    torch.manual_seed(0)
    m = Linear2()
    return dt.import_step(
        _step(m),
        (_params(m), torch.randn(4, 8)),
        mesh=dt.DeviceMesh([2], ["tp"]),
        plan={"fc1": dt.ColwiseParallel(), "fc2": dt.RowwiseParallel()},
    )


def test_signature_carries_the_plan():
    step = _megatron_mlp()
    text = step.module.print()
    assert "attributes {dist.complete}" in text
    # fc1.weight [16, 8] by rows of the torch layout (its output features),
    # fc2.weight [8, 16] by columns, fc2.bias whole.
    assert 'tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>> {dist.param = "fc1.weight"}' in text
    assert 'tensor<8xf32, #dist.tensor<#mesh, [0]>> {dist.param = "fc1.bias"}' in text
    assert 'tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>> {dist.param = "fc2.weight"}' in text
    assert 'tensor<8xf32, #dist.tensor<#mesh, [-1]>> {dist.param = "fc2.bias"}' in text
    # Gradients are returned as their parameters are distributed.
    assert [o[2] for o in step.outputs][1:] == [
        [dt.Shard(0)],
        [dt.Shard(0)],
        [dt.Shard(1)],
        [dt.Replicate()],
    ]
    # aten.t of the weights is folded into the products (no transposing
    # linalg.generic); fc2's forward product and its two backward products
    # are one dist.matmul_grad (fc1 has no input gradient: x is data).
    assert "ins(%arg0 :" not in text and "ins(%arg2 :" not in text
    assert text.count("dist.matmul_grad") == 1
    assert text.count("dist.matmul ") == 3


def test_locations_are_the_models_lines():
    m = Linear2()
    step = dt.import_step(_step(m), (_params(m), torch.randn(4, 8)))
    assert f'"{HERE}":{_line("MARK-forward")}:' in step.text


def test_tp_collectives_are_placed_by_completion():
    step = _megatron_mlp()
    found = [(c.op, c.location[1] if c.location else None) for c in step.collectives()]
    # Megatron's one where the input needs no gradient: fc2's output.
    assert found == [("dist.allreduce", _line("MARK-forward"))]


def _refused(fn, args, match, what=None, line=None, **kw):
    with pytest.raises(dt.TorchImportError, match=match) as info:
        dt.import_step(fn, args, **kw)
    if what is not None:
        assert info.value.what == what
    if line is not None:
        assert info.value.location == (HERE, _line(line)), info.value.location
    return info.value


def test_op_without_lowering():
    def step(x):
        return torch.cumsum(x, 0)  # MARK-cumsum

    _refused(
        step,
        (torch.randn(4),),
        r"no lowering for aten\.cumsum",
        "aten.cumsum.default",
        "MARK-cumsum",
    )


def test_data_dependent_shape():
    def step(x):
        return x[x > 0].sum()  # MARK-masked

    _refused(step, (torch.randn(4),), "data-dependent", line="MARK-masked")


def test_placement_must_divide():
    e = _refused(
        lambda x: x * 2.0,
        (torch.randn(5, 4),),
        r"'x': Shard\(0\) over mesh axis 'dp' \(2 processes\) does not divide dim 0 of size 5",
        "x",
        mesh=dt.DeviceMesh([2], ["dp"]),
        placements={"x": [dt.Shard(0)]},
    )
    assert e.location is None


def test_plan_names_a_missing_parameter():
    m = Linear2()
    _refused(
        _step(m),
        (_params(m), torch.randn(4, 8)),
        r"the plan names 'fc3', but the model has no parameter 'fc3' or 'fc3\.\*'",
        "fc3",
        mesh=dt.DeviceMesh([2], ["tp"]),
        plan={"fc3": dt.ColwiseParallel()},
    )


# (mesh, placements or plan, message, the name it reports)
BAD_PLACEMENTS = [
    ("dp-tp", {"x": [dt.Shard(2), dt.Replicate()]}, "names no dim", "x"),
    ("dp-tp", {"x": [dt.Shard(0), dt.Shard(0)]}, "sharded over mesh axes 'dp' and 'tp'", "x"),
    ("dp-tp", {"x": [dt.Shard(0)]}, "has 1 placements for a mesh of 2 axes", "x"),
    ("dp-tp", {"y": [dt.Shard(0), dt.Replicate()]}, "not an argument or parameter", "y"),
    ("dp", {"x": dt.SequenceParallel()}, "mesh axis 'tp'", "tp"),
]


@pytest.mark.parametrize("mesh, given, match, what", BAD_PLACEMENTS)
def test_bad_placements(mesh, given, match, what):
    meshes = {"dp-tp": dt.DeviceMesh([2, 2], ["dp", "tp"]), "dp": dt.DeviceMesh([2], ["dp"])}
    is_plan = isinstance(next(iter(given.values())), dt.SequenceParallel)
    kw = {"plan": given} if is_plan else {"placements": given}
    _refused(lambda x: x * 1.0, (torch.randn(4, 4),), match, what, mesh=meshes[mesh], **kw)


def test_arguments_must_be_float32_int64_or_bool_tensors():
    _refused(lambda x: x * 2.0, (torch.randn(3, dtype=torch.float64),), "float64", "x")
    _refused(lambda x, n: x * n, (torch.randn(3), 2), "not a tensor", "n")


def test_update_of_a_view_is_refused():
    def step(x):
        y = x.clone()
        y[0] = 0.0  # MARK-view-update
        return y * 2.0

    _refused(step, (torch.randn(3, 2),), "updates in place a view", line="MARK-view-update")


def test_training_dropout_is_refused():
    def step(x):
        return F.dropout(x, 0.1, training=True)  # MARK-dropout

    _refused(
        step, (torch.randn(4, 4),), "draws random numbers", "aten.bernoulli_.float", "MARK-dropout"
    )


def test_heads_split_attention_batches_over_the_heads():
    """torch.matmul of [b, n, s, d] with the heads split is a 4-d
    dist.matmul (the bmm's [b * n] view would need a gather)."""

    def step(q, k):
        return torch.matmul(q, k.transpose(-2, -1)).sum()

    q, k = torch.randn(2, 4, 8, 3), torch.randn(2, 4, 8, 3)
    heads = [dt.Replicate(), dt.Shard(1)]
    s = dt.import_step(
        step, (q, k), mesh=dt.DeviceMesh([1, 2], ["dp", "tp"]), placements={"q": heads, "k": heads}
    )
    text = s.module.print()
    assert (
        "dist.matmul %arg0, %1 : tensor<2x2x8x3xf32, #dist.tensor<#mesh, [-1, 1, -1, -1]>>, tensor<2x2x3x8xf32>"
        in text
    )
    assert "dist.reshard" not in text


def test_nested_arguments_are_refused():
    _refused(
        lambda xs: xs[0][0] * 2.0,
        ([[torch.randn(2), torch.randn(2)], torch.randn(2)],),
        "nest deeper than tensors",
    )
