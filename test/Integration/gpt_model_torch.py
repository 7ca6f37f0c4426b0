"""The GPT model of examples/gpt_model.py written in PyTorch from the
formulas, as an oracle that no one here derived by hand: torch.autograd
gives the gradients, torch.optim.AdamW the update.

Nothing is taken from dist's program: the model is the textbook pre-LN GPT
(token and position embeddings; per layer LayerNorm, causal multi-head
self-attention with Q, K, V and output projections without biases, a
residual, LayerNorm, an MLP with the tanh GeLU, a residual; a final
LayerNorm; logits against the token table; the mean cross-entropy over
every token). The token table has the vocabulary's rows only: dist's
padding must change nothing.
"""
import math

import torch

EPS = 1e-5


def layer_norm(x, g, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), g, b, EPS)


def gelu(u):
    return 0.5 * u * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * u**3)))


def forward(p, ids, targets, layers, heads):
    """The mean cross-entropy of the next tokens."""
    b, s = ids.shape
    x = p["wte"][ids] + p["wpe"][:s]
    h = x.shape[-1]
    d = h // heads
    causal = torch.tril(torch.ones(s, s, dtype=torch.bool))
    for i in range(layers):
        q_in = layer_norm(x, p[f"l{i}.ln1_g"], p[f"l{i}.ln1_b"])

        def split(t):
            return t.reshape(b, s, heads, d).transpose(1, 2)

        q, k, v = (split(q_in @ p[f"l{i}.{w}"]) for w in ("wq", "wk", "wv"))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(d)
        scores = scores.masked_fill(~causal, float("-inf"))
        ctx = torch.softmax(scores, dim=-1) @ v
        x = x + ctx.transpose(1, 2).reshape(b, s, h) @ p[f"l{i}.wo"]
        m_in = layer_norm(x, p[f"l{i}.ln2_g"], p[f"l{i}.ln2_b"])
        x = x + gelu(m_in @ p[f"l{i}.w1"]) @ p[f"l{i}.w2"]
    hf = layer_norm(x, p["lnf_g"], p["lnf_b"])
    logits = hf @ p["wte"].T
    return torch.nn.functional.cross_entropy(logits.reshape(b * s, -1), targets.reshape(-1))


def train(init, tokens, layers, heads, adamw):
    """Runs len(tokens) steps of AdamW from `init` (numpy arrays by name) on
    tokens[k] = [batch, seq + 1]; returns (the loss of each step, the
    gradients of step 1 as numpy arrays, the final parameters)."""
    torch.manual_seed(0)
    params = {n: torch.tensor(a, dtype=torch.float32, requires_grad=True) for n, a in init.items()}
    opt = torch.optim.AdamW(
        list(params.values()),
        lr=adamw["lr"],
        betas=(adamw["beta1"], adamw["beta2"]),
        eps=adamw["epsilon"],
        weight_decay=adamw["weight_decay"],
    )
    losses, first = [], None
    for batch in tokens:
        batch = torch.tensor(batch, dtype=torch.int64)
        opt.zero_grad()
        loss = forward(params, batch[:, :-1], batch[:, 1:], layers, heads)
        loss.backward()
        if first is None:
            first = {n: t.grad.detach().numpy().copy() for n, t in params.items()}
        opt.step()
        losses.append(float(loss))
    final = {n: t.detach().numpy().copy() for n, t in params.items()}
    return losses, first, final
