"""Prints what dist.torch.import_step makes of a two-layer MLP's training
step with Megatron's plan on 2 processes (torch-import-ir.test checks it)."""
import torch
import torch.nn as nn
from torch.nn.utils import stateless

import dist.torch as dt


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 8)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        return self.fc2(h)


def step(params, x, y):
    loss = ((stateless.functional_call(model, params, (x,)) - y) ** 2).mean()
    return loss, torch.autograd.grad(loss, list(params.values()))


torch.manual_seed(0)
model = MLP()
params = {k: v.detach().clone().requires_grad_(True) for k, v in model.named_parameters()}
x, y = torch.randn(4, 8), torch.randn(4, 8)
s = dt.import_step(
    step,
    (params, x, y),
    mesh=dt.DeviceMesh([2], ["tp"]),
    plan={"fc1": dt.ColwiseParallel(), "fc2": dt.RowwiseParallel()},
    placements={"x": [dt.Replicate()]},
)
print(s.text)
