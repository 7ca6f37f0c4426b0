"""One test per op that dist.torch lowers, forward and backward, against
torch on random shapes: every op's function of its inputs is traced into
one step that returns, per op, its result and the gradients of
sum(result * cotangent) with respect to its float inputs
(torch.autograd.grad). The step runs once on MPI; each op's outputs are
compared with torch's. `optimizers` checks the functional SGD (momentum)
and AdamW steps of torch.optim the same way."""
import random

import numpy as np
import torch
import torch.nn.functional as F
from torch.optim import _functional as optim_f

import dist.torch as dt

TOLERANCE = 1e-4


def _causal_softmax(x):
    s = x.shape[-1]
    mask = torch.triu(torch.ones(s, s, dtype=torch.bool), diagonal=1)
    return F.softmax(x.masked_fill(mask, float("-inf")), dim=-1)


# name: (function, inputs). An input is "x" (float, differentiated, split
# over the batch in the dp run), "w" (float, differentiated, whole), "c"
# (float, not differentiated), "pos" (x with positive values), "ids:N"
# (int64 in [0, N)) or "ignored:N" (ids whose first is cross_entropy's
# ignore_index, -100); its shape is a string of dim letters sized at random
# (B is even: the dp run splits it).
OPS = {
    "linear": (lambda x, w, b: F.linear(x, w, b), [("x", "BK"), ("w", "NK"), ("w", "N")]),
    "linear_3d": (lambda x, w, b: F.linear(x, w, b), [("x", "BSK"), ("w", "NK"), ("w", "N")]),
    "linear_nobias": (lambda x, w: F.linear(x, w), [("x", "BK"), ("w", "NK")]),
    "matmul_4d": (lambda a, b: torch.matmul(a, b), [("x", "BHSD"), ("x", "BHDT")]),
    "bmm": (lambda a, b: torch.bmm(a, b), [("x", "BSD"), ("x", "BDT")]),
    "mm": (lambda a, b: a @ b, [("x", "BK"), ("w", "KN")]),
    "layer_norm": (
        lambda x, w, b: F.layer_norm(x, x.shape[-1:], w, b),
        [("x", "BSH"), ("w", "H"), ("w", "H")],
    ),
    "layer_norm_affine_free": (lambda x: F.layer_norm(x, x.shape[-1:]), [("x", "BH")]),
    "gelu": (lambda x: F.gelu(x), [("x", "BSH")]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), [("x", "BH")]),
    "relu": (lambda x: torch.relu(x), [("x", "BH")]),
    "silu": (lambda x: F.silu(x), [("x", "BH")]),
    "softplus": (lambda x: F.softplus(x * 8.0), [("x", "BH")]),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), [("x", "BH")]),
    "tanh": (lambda x: torch.tanh(x), [("x", "BH")]),
    "sigmoid": (lambda x: torch.sigmoid(x), [("x", "BH")]),
    "exp": (lambda x: torch.exp(x), [("x", "BH")]),
    "log": (lambda x: torch.log(x), [("pos", "BH")]),
    "sqrt": (lambda x: torch.sqrt(x), [("pos", "BH")]),
    "rsqrt": (lambda x: torch.rsqrt(x), [("pos", "BH")]),
    "pow": (lambda x: x**3, [("x", "BH")]),
    "neg_abs": (lambda x: -torch.abs(x), [("x", "BH")]),
    "reciprocal": (lambda x: 1.0 / x, [("pos", "BH")]),
    "softmax": (lambda x: F.softmax(x, dim=-1), [("x", "BSH")]),
    "softmax_dim1": (lambda x: F.softmax(x, dim=1), [("x", "BSH")]),
    "log_softmax": (lambda x: F.log_softmax(x, dim=-1), [("x", "BC")]),
    "causal_masked_softmax": (_causal_softmax, [("x", "BHSS")]),
    "cross_entropy": (lambda x, t: F.cross_entropy(x, t), [("x", "BC"), ("ids:C", "B")]),
    "cross_entropy_sum": (
        lambda x, t: F.cross_entropy(x, t, reduction="sum"),
        [("x", "BC"), ("ids:C", "B")],
    ),
    "cross_entropy_ignore_index": (
        lambda x, t: F.cross_entropy(x, t),
        [("x", "BC"), ("ignored:C", "B")],
    ),
    "mse_loss": (lambda x, y: F.mse_loss(x, y), [("x", "BH"), ("c", "BH")]),
    "embedding": (lambda ids, w: F.embedding(ids, w), [("ids:V", "BS"), ("w", "VH")]),
    "add_broadcast": (lambda x, w: x + w, [("x", "BSH"), ("w", "H")]),
    "sub_alpha": (lambda x, y: torch.sub(x, y, alpha=2.5), [("x", "BH"), ("x", "BH")]),
    "mul": (lambda x, y: x * y, [("x", "BH"), ("x", "BH")]),
    "div": (lambda x, y: x / y, [("x", "BH"), ("pos", "BH")]),
    "scalar_ops": (lambda x: (x * 3.0 + 1.5) / 2.0 - 0.25, [("x", "BH")]),
    "where": (lambda x, y: torch.where(x > y, x, y), [("x", "BH"), ("x", "BH")]),
    "maximum": (lambda x, y: torch.maximum(x, y), [("x", "BH"), ("x", "BH")]),
    "sum_dim": (lambda x: x.sum(dim=1), [("x", "BSH")]),
    "sum_keepdim": (lambda x: x.sum(dim=-1, keepdim=True), [("x", "BSH")]),
    "sum_all": (lambda x: x.sum(), [("x", "BH")]),
    "mean_dim": (lambda x: x.mean(dim=(1, 2)), [("x", "BSH")]),
    "transpose": (lambda x: x.transpose(1, 2) * 2.0, [("x", "BSH")]),
    "permute": (lambda x: x.permute(2, 0, 1) * 2.0, [("x", "BSH")]),
    "t": (lambda x: x.t() * 2.0, [("x", "BH")]),
    "view_reshape": (
        lambda x: x.view(x.shape[0], -1).reshape(x.shape[0], x.shape[1], -1) * 2.0,
        [("x", "BSH")],
    ),
    "unsqueeze_squeeze": (lambda x: (x.unsqueeze(1) * 2.0).squeeze(1), [("x", "BH")]),
    "expand": (lambda x, w: x * w.expand(x.shape[0], -1), [("x", "BH"), ("w", "1H")]),
    "cat": (lambda x, y: torch.cat([x, y], dim=1), [("x", "BH"), ("x", "BS")]),
    "split": (lambda x: x.split(2, dim=1)[1] * 3.0, [("x", "BQ")]),
    "slice": (lambda x: x[:, 1:3] * 2.0, [("x", "BQ")]),
    "select": (lambda x: x[:, 1] * 2.0, [("x", "BQ")]),
    "dropout_eval": (lambda x: F.dropout(x, 0.5, training=False) * 2.0, [("x", "BH")]),
    "clone_detach": (lambda x, y: x.clone() * y.detach(), [("x", "BH"), ("c", "BH")]),
}


def _sizes(rng):
    s = {k: rng.randint(2, 6) for k in "KNSHDTCV"}
    s["B"] = 2 * rng.randint(1, 3)
    s["Q"] = rng.randint(4, 7)
    s["1"] = 1
    return s


def _input(kind, dims, sizes, gen):
    shape = [sizes[d] for d in dims]
    if kind.startswith(("ids:", "ignored:")):
        ids = torch.randint(0, sizes[kind.partition(":")[2]], shape, generator=gen)
        if kind.startswith("ignored:"):
            ids[0] = -100
        return ids
    t = torch.randn(shape, generator=gen)
    if kind == "pos":
        t = t.abs() + 0.5
    if kind in ("x", "w", "pos"):
        t.requires_grad_(True)
    return t


def build(seed=0):
    """(the step, its example tensors by name, the names split in dp)."""
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    tensors, batched = {}, []
    for name, (fn, specs) in OPS.items():
        sizes = _sizes(rng)
        for i, (kind, dims) in enumerate(specs):
            key = f"{name}.{i}"
            tensors[key] = _input(kind, dims, sizes, gen)
            if dims.startswith("B") and kind != "w":
                batched.append(key)
        with torch.no_grad():
            out = fn(*[tensors[f"{name}.{i}"] for i in range(len(specs))])
        tensors[f"{name}.cot"] = torch.randn(out.shape, generator=gen)
        if out.dim() and out.shape[0] == sizes["B"] and f"{name}.0" in batched:
            batched.append(f"{name}.cot")

    def step(tensors):
        results = {}
        for name, (fn, specs) in OPS.items():
            args = [tensors[f"{name}.{i}"] for i in range(len(specs))]
            out = fn(*args)
            results[f"{name}.out"] = out
            wrt = [a for a in args if a.requires_grad]
            grads = torch.autograd.grad((out * tensors[f"{name}.cot"]).sum(), wrt)
            for i, g in enumerate(grads):
                results[f"{name}.d{i}"] = g
        return results

    return step, tensors, batched


def check(mesh_spec="serial"):
    step, tensors, batched = build()
    want = step(tensors)
    if mesh_spec == "serial":
        mesh, placements = dt.DeviceMesh([1], ["x"]), {}
    else:
        n = int(mesh_spec.partition(":")[2] or 2)
        mesh = dt.DeviceMesh([n], ["dp"])
        placements = {k: [dt.Shard(0)] for k in batched}
    compiled = dt.compile(step, (tensors,), mesh=mesh, placements=placements)
    got = compiled(tensors)
    aten = sorted(
        {str(n.target) for n in compiled.step.graph.graph.nodes if n.op == "call_function"}
    )
    worst = {}
    for key, ref in want.items():
        ref = ref.detach().numpy()
        g = np.asarray(got[key])
        err = (
            float(np.abs(g - ref).max()) / max(float(np.abs(ref).max()), 1e-3) if ref.size else 0.0
        )
        op = key.rpartition(".")[0]
        worst[op] = max(worst.get(op, 0.0), err)
        if not err <= TOLERANCE:
            raise SystemExit(f"FAILED: {op}: {key} differs from torch by {err:.2e} (relative)")
    print(
        f"ok: {len(OPS)} ops on {mesh.size} process(es), forward and backward; worst relative error {max(worst.values()):.1e} ({max(worst, key=worst.get)})"
    )
    print(f"ATen ops covered: {len(aten)}: {' '.join(a.removeprefix('aten.') for a in aten)}")
    return 0


def optimizers():
    """One step of torch.optim's functional SGD (momentum, weight decay) and
    AdamW on an MLP's gradients, against torch."""
    torch.manual_seed(1)
    w1, w2 = torch.randn(8, 16, requires_grad=True), torch.randn(16, 4, requires_grad=True)
    x, y = torch.randn(6, 8), torch.randn(6, 4)
    states = {k: torch.randn(v.shape) * 0.1 for k, v in (("m1", w1), ("m2", w2))}
    states.update({k: torch.rand(v.shape) * 0.01 for k, v in (("v1", w1), ("v2", w2))})

    def grads(params, x, y):
        loss = F.mse_loss(torch.tanh(x @ params["w1"]) @ params["w2"], y)
        return loss, torch.autograd.grad(loss, [params["w1"], params["w2"]])

    def sgd(params, x, y, states):
        loss, g = grads(params, x, y)
        ps = [params["w1"].detach().clone(), params["w2"].detach().clone()]
        bufs = [states["m1"].clone(), states["m2"].clone()]
        optim_f.sgd(
            ps,
            list(g),
            bufs,
            weight_decay=0.01,
            momentum=0.9,
            lr=0.1,
            dampening=0.0,
            nesterov=False,
            maximize=False,
        )
        return loss, ps, bufs

    def adamw(params, x, y, states):
        loss, g = grads(params, x, y)
        ps = [params["w1"].detach().clone(), params["w2"].detach().clone()]
        m = [states["m1"].clone(), states["m2"].clone()]
        v = [states["v1"].clone(), states["v2"].clone()]
        steps = [torch.tensor(3.0), torch.tensor(3.0)]
        optim_f.adamw(
            ps,
            list(g),
            m,
            v,
            [],
            steps,
            amsgrad=False,
            beta1=0.9,
            beta2=0.999,
            lr=1e-2,
            weight_decay=0.01,
            eps=1e-8,
            maximize=False,
        )
        return loss, ps, m, v

    params = {"w1": w1, "w2": w2}
    for name, fn in (("SGD (momentum 0.9, weight decay 0.01)", sgd), ("AdamW (step 3)", adamw)):
        want = fn(params, x, y, states)
        mesh = dt.DeviceMesh([2], ["dp"])
        run = dt.compile(
            fn,
            (params, x, y, states),
            mesh=mesh,
            placements={"x": [dt.Shard(0)], "y": [dt.Shard(0)]},
        )
        got = run(params, x, y, states)
        flat_w = [t for part in want for t in (part if isinstance(part, (list, tuple)) else [part])]
        flat_g = [t for part in got for t in (part if isinstance(part, (list, tuple)) else [part])]
        worst = max(
            float(np.abs(np.asarray(a) - b.detach().numpy()).max())
            / max(float(b.detach().abs().max()), 1e-3)
            for a, b in zip(flat_g, flat_w)
        )
        if not worst <= TOLERANCE:
            raise SystemExit(f"FAILED: {name}: {worst:.2e}")
        print(
            f"ok: {name} on 2 processes (dp): loss, parameters and states equal torch's; worst relative error {worst:.1e}"
        )
    return 0
