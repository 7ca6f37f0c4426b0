"""Models written in plain PyTorch, as their users write them (nothing in
this file comes from dist): a GPT block and a GPT of N blocks with token
and position embeddings, causal attention through torch.matmul and
masked_fill, LayerNorm, GeLU and a cross-entropy loss; an MLP. `step` is
the training step dist.torch imports: the loss and torch.autograd.grad of
every parameter."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import stateless


class Attention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        b, s, h = x.shape
        d = h // self.heads
        q = self.q(x).view(b, s, self.heads, d).transpose(1, 2)
        k = self.k(x).view(b, s, self.heads, d).transpose(1, 2)
        v = self.v(x).view(b, s, self.heads, d).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d)
        causal = torch.triu(torch.ones(s, s, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(causal, float("-inf"))
        probs = F.softmax(scores, dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, h)
        return self.proj(out)


class MLP(nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden)
        self.attn = Attention(hidden, heads)
        self.ln2 = nn.LayerNorm(hidden)
        self.mlp = MLP(hidden, ffn)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, seq, hidden, heads, ffn, layers):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Parameter(torch.randn(seq, hidden) * 0.02)
        self.blocks = nn.ModuleList([Block(hidden, heads, ffn) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, ids, targets):
        x = self.wte(ids) + self.wpe
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


class TwoLayerMLP(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.fc1 = nn.Linear(width, hidden)
        self.fc2 = nn.Linear(hidden, width)

    def forward(self, x, y):
        return F.mse_loss(self.fc2(torch.relu(self.fc1(x))), y)


def parameters(model):
    return {k: v.detach().clone().requires_grad_(True) for k, v in model.named_parameters()}


def gpt_step(model):
    """The training step: the loss and every parameter's gradient."""

    def step(params, ids, targets):
        loss = stateless.functional_call(model, params, (ids, targets))
        return loss, torch.autograd.grad(loss, list(params.values()))

    return step


def mlp_step(model):
    def step(params, x, y):
        loss = stateless.functional_call(model, params, (x, y))
        return loss, torch.autograd.grad(loss, list(params.values()))

    return step


def gpt_plan(layers, sequence_parallel=False):
    """Megatron's tensor parallelism as a parallelize_module plan: Q, K, V
    and fc1 by columns, the output projection and fc2 by rows."""
    import dist.torch as dt

    plan = {}
    for i in range(layers):
        p = f"blocks.{i}."
        for name in ("attn.q", "attn.k", "attn.v", "mlp.fc1"):
            plan[p + name] = dt.ColwiseParallel()
        for name in ("attn.proj", "mlp.fc2"):
            plan[p + name] = dt.RowwiseParallel()
        if sequence_parallel:
            plan[p + "ln1"] = dt.SequenceParallel()
            plan[p + "ln2"] = dt.SequenceParallel()
    if sequence_parallel:
        plan["ids"] = dt.SequenceParallel()
        plan["targets"] = dt.SequenceParallel()
    return plan
