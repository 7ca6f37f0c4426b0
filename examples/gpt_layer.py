#!/usr/bin/env python3
"""One training step of a pre-LayerNorm GPT layer, as a dist program.

  PYTHONPATH=build/python_packages python3 examples/gpt_layer.py
      [--layout L] [--mesh SHAPE] [--batch B] [--seq S] [--hidden H]
      [--heads N] [--ffn F] [--dropout P] [--amp] [-o FILE]
      [--report LAYOUT:MESH ...]

builds with dist's program builder (`dist.builder.FunctionBuilder`, its
`generic` for everything that is not a dist op) and prints `@train_step`:
LayerNorm, the Q, K and V projections, causal
multi-head self-attention (batched matmuls, scale, causal mask, softmax),
the output projection, a residual, LayerNorm, an MLP with GeLU (tanh form),
a residual, the loss 0.5 * mean((y - target)^2), the whole backward pass
written out (every parameter's gradient) and one SGD update. It returns the
loss, the gradient of the layer's input, the parameters' gradients (marked
`dist.grad`) and the updated parameters.

The function is marked `{dist.complete}`: only its signature (parameters,
inputs and results) carries encodings. `--dist-complete` decides every other
distribution and places every collective. A layout is a set of such
annotations:

  serial       no mesh axis used;
  dp           data parallel: the batch split;
  tp           Megatron tensor parallel: Q, K, V and fc1 split by columns
               (heads and FFN split), the output projection and fc2 by rows;
  tp-sp        tp plus sequence parallelism: the inputs (and so LayerNorm and
               the residuals) split along the sequence;
  dp-tp        dp on mesh axis 0, tp on axis 1;
  dp-tp-sp     dp on mesh axis 0, tp-sp on axis 1.

`--mesh` gives the mesh shape (a size per used axis, e.g. 2,2).

Types hold local shapes, so the program depends on the layout: each dim of
each value is named by a letter, and the layout says what a letter's local
size is (`Layout.size`). Completion then finds distributions that agree
with them. Where the layout splits the sequence, the value whose local
shape differs from its source's (the input of the Q, K, V and fc1 matmuls,
which sequence parallelism gathers) is written as a `dist.reshard` to an
undecided type: it says where the layouts meet, not which collectives run.
"""
import argparse
import functools
import math
import sys

PARAMS = ["ln1_g", "ln1_b", "wq", "wk", "wv", "wo", "ln2_g", "ln2_b", "w1", "w2"]
# Each parameter's dims, by letter (Layout.size).
PARAM_DIMS = {
    "ln1_g": "h",
    "ln1_b": "h",
    "wq": "hc",
    "wk": "hc",
    "wv": "hc",
    "wo": "ch",
    "ln2_g": "h",
    "ln2_b": "h",
    "w1": "hf",
    "w2": "fh",
}
LAYOUTS = ("serial", "dp", "tp", "tp-sp", "dp-tp", "dp-tp-sp")
# The blocks tensor parallelism can split: the attention (its heads) and
# the MLP (its FFN dim).
TP_BLOCKS = ("attn", "mlp")
# GPT's dropouts (id, fixed seed): on the attention probabilities and on
# each branch before its residual add. Fixed seeds make a step repeatable;
# the mask of each element depends only on the seed and the element's global
# index, so every layout draws the serial program's masks.
DROPOUTS = {"attn_drop": 11, "attn_out_drop": 12, "mlp_out_drop": 13}
EPS = 1e-5
LR = 0.1
# The optimizers: plain SGD written out as linalg, or a dist update whose
# states are arguments and results marked dist.state (which
# --dist-shard-optimizer shards): (number of states, the op's attributes).
OPTIMIZERS = ("sgd", "momentum", "adamw")
MOMENTUM = dict(lr=LR, momentum=0.9, weight_decay=0.01)
ADAMW = dict(lr=1e-3, beta1=0.9, beta2=0.999, epsilon=1e-8, weight_decay=0.01)
STATES = {"sgd": 0, "momentum": 1, "adamw": 2}
GELU_K = math.sqrt(2.0 / math.pi)
MASKED = -1.0e9


def fmt(x):
    return f"{float(x):.9e}"


# What each letter of a value's dims is, for messages.
LETTERS = dict(
    b="batch",
    r="sequence",
    s="sequence",
    t="sequence",
    h="hidden",
    c="hidden",
    n="heads",
    d="head size",
    f="FFN",
    v="vocabulary",
)


class Layout:
    """Which mesh axis splits each letter of a value's dims.

    Letters: b batch, r the residual stream's sequence, s and t the
    attention's sequences (queries and keys), h hidden, c hidden split as
    heads (n heads of d), f FFN."""

    def __init__(
        self, name, mesh, sizes, dropout=0.1, amp=False, optimizer="sgd", tp_blocks=TP_BLOCKS
    ):
        if name not in LAYOUTS:
            raise ValueError(f"unknown layout {name!r}; expected one of {LAYOUTS}")
        if optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {optimizer!r}; expected one of {OPTIMIZERS}")
        self.optimizer = optimizer
        self.name = name
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout probability {dropout} is not in [0, 1)")
        self.dropout = dropout
        self.amp = amp
        parts = name.split("-")
        axes = [p for p in parts if p in ("dp", "tp")]
        if name == "serial":
            axes = []
        self.mesh = list(mesh) if mesh else [2] * len(axes) or [1]
        if any(n < 1 for n in self.mesh):
            raise ValueError(f"mesh sizes must be positive, not {self.mesh}")
        if len(self.mesh) != max(len(axes), 1):
            raise ValueError(f"layout {name} needs a mesh of {max(len(axes), 1)} axes")
        self.dp = axes.index("dp") if "dp" in axes else None
        self.tp = axes.index("tp") if "tp" in axes else None
        self.sp = "sp" in parts
        blocks = tuple(b for b in TP_BLOCKS if b in tp_blocks)
        if not blocks or len(blocks) != len(tuple(tp_blocks)):
            raise ValueError(
                f"tensor-parallel blocks {','.join(tp_blocks) or '(none)'}: expected "
                f"one or both of {', '.join(TP_BLOCKS)}"
            )
        # Which blocks tp splits: Megatron splits both; a plan may keep
        # one replicated (its weights whole on every tp process).
        self.tp_blocks = blocks
        self.names = axes or ["x"]
        self.g = dict(sizes)  # global sizes by letter
        b, s, h, n, f = (sizes[k] for k in "bshnf")
        for name, size in zip(("batch", "seq", "hidden", "heads", "ffn"), (b, s, h, n, f)):
            if size < 1:
                raise ValueError(f"{name} must be positive, not {size}")
        if h % n:
            raise ValueError(f"hidden {h} does not divide into {n} heads")
        self.g.update(r=s, t=s, c=h, d=h // n)
        for letter in "brstcnfd":
            axis = self.axis(letter)
            if axis is not None and self.g[letter] % self.mesh[axis]:
                raise ValueError(
                    f"size {self.g[letter]} of '{letter}' ({LETTERS[letter]}) does not divide "
                    f"by mesh axis {axis} ({self.mesh[axis]})"
                )

    def axis(self, letter):
        if letter == "b":
            return self.dp
        if letter in "cn" and "attn" in self.tp_blocks:
            return self.tp
        if letter == "f" and "mlp" in self.tp_blocks:
            return self.tp
        if letter == "r" and self.sp:
            return self.tp
        return None

    def size(self, letter):
        a = self.axis(letter)
        return self.g[letter] // (self.mesh[a] if a is not None else 1)

    def ty(self, dims, encoded=False):
        shape = "".join(f"{self.size(x)}x" for x in dims)
        enc = ""
        if encoded:
            m = [self.axis(x) for x in dims]
            enc = (
                ", #dist.tensor<#mesh, ["
                + ", ".join(str(a if a is not None else -1) for a in m)
                + "]>"
            )
        return f"tensor<{shape}f32{enc}>"


class Step:
    """@train_step under construction with dist's builder: every helper
    returns the value it made; `dims` remembers each value's letters."""

    def __init__(self, layout, module):
        import dist
        from dist.builder import FunctionBuilder

        self.dist = dist
        self.L = layout
        self.module = module
        self.ctx = module.context
        self.mesh = dist.Mesh(layout.mesh, names=layout.names, context=self.ctx)
        self.f32 = dist.Type.parse("f32", self.ctx)
        self.index = dist.Type.parse("index", self.ctx)
        self.dims = {}
        self.FunctionBuilder = FunctionBuilder
        # Which layer's dropouts are built (a model of several layers gives
        # each its own ids and seeds).
        self.dropout_prefix = ""
        self.dropout_seed_offset = 0

    def type(self, dims, encoded=False):
        """The local tensor type of `dims`, with its encoding or undecided."""
        enc = None
        if encoded:
            axes = [self.L.axis(x) for x in dims]
            enc = self.dist.TensorDist(self.mesh, [a if a is not None else -1 for a in axes])
        shape = [self.L.size(x) for x in dims]
        return self.dist.TensorType(shape, "f32", enc, context=self.ctx)

    def attr(self, text):
        return self.dist.Attribute.parse(text, self.ctx)

    def begin(self, args):
        """Starts the function; `args` are (dims or a type, markers)."""
        types = []
        for dims, markers in args:
            t = dims if not isinstance(dims, str) else self.type(dims, encoded=True)
            types.append((t, markers) if markers else t)
        self.f = self.FunctionBuilder(
            self.module, "train_step", types, markers={"dist.complete": True}
        )
        return self.f.arguments

    def value(self, v, dims):
        self.dims[id(v)] = dims
        return v

    def dims_of(self, v):
        return self.dims[id(v)]

    # -- scalars (in bodies) -------------------------------------------------

    def const(self, x):
        return self.f.op("arith.constant", [], [self.f32], {"value": self.attr(f"{fmt(x)} : f32")})[
            0
        ]

    def a(self, name, *operands):
        """The f32 `arith.<name>` of `operands`."""
        return self.f.arith(name, *operands)

    def m(self, name, x):
        """The f32 `math.<name>` of `x`."""
        return self.f.op(f"math.{name}", [x], [self.f32])[0]

    # -- tensors -------------------------------------------------------------

    def generic(self, out, inputs, body, reduce=None, init=0.0):
        """A linalg.generic over the loops `out` (the result's letters)
        followed by every other letter of the inputs (reductions).
        `body(*elements)` gets an element of each input and returns the
        result's element; with `reduce` ("addf", "maximumf") it is combined
        into an accumulator that starts at `init`."""
        loops = list(out)
        for v in inputs:
            for x in self.dims_of(v):
                if x not in loops:
                    loops.append(x)
        if reduce is None and len(loops) != len(out):
            raise ValueError(f"loops {loops} but the result has {out}")
        ds = ", ".join(f"d{i}" for i in range(len(loops)))

        def amap(dims):
            return f"({ds}) -> ({', '.join(f'd{loops.index(x)}' for x in dims)})"

        rty = self.type(out)
        e = self.f.op("tensor.empty", [], [rty])[0]
        if reduce is not None:
            c = self.const(init)
            e = self.f.body(
                "linalg.fill",
                [c, e],
                [rty],
                {"operandSegmentSizes": self.attr("array<i32: 1, 1>")},
                [self.f32, self.f32],
                lambda value, _: self.f.op("linalg.yield", [value]),
            )[0]

        def build(*elements):
            r = body(*elements[:-1])
            return self.a(reduce, r, elements[-1]) if reduce is not None else r

        (r,) = self.f.generic(
            inputs,
            [e],
            [amap(self.dims_of(v)) for v in inputs] + [amap(out)],
            ["parallel" if x in out else "reduction" for x in loops],
            build,
        )
        return self.value(r, out)

    def ew(self, out, inputs, body):
        return self.generic(out, inputs, body)

    def reduce_sum(self, out, v, square=False):
        return self.generic(out, [v], lambda x: self.a("mulf", x, x) if square else x, "addf")

    def matmul(self, x, y, out, transpose_y=False):
        r = self.f.matmul(x, y, transpose_y=transpose_y)
        return self.value(r, out)

    def matmul_grad(self, x, y, dout, transpose_y=False):
        dx, dy = self.f.matmul_grad(
            x, y, dout, transpose_y=transpose_y, x_grad_dist=None, y_grad_dist=None
        )
        return self.value(dx, self.dims_of(x)), self.value(dy, self.dims_of(y))

    def constraint(self, v, dims):
        """`v` pinned to its encoding in the layout."""
        r = self.f.op("dist.constraint", [v], [self.type(dims, encoded=True)])[0]
        return self.value(r, dims)

    def dropout(self, v, id, backward=False):
        """`v` through GPT's dropout `id` (its backward: the same mask, as the
        forward's recomputed twin); `v` itself without dropout."""
        if not self.L.dropout:
            return v
        name = self.dropout_prefix + id
        role = {"recompute_of": name} if backward else {"id": name}
        seed = DROPOUTS[id] + self.dropout_seed_offset
        r = self.f.dropout(v, self.L.dropout, fix_seed=seed, **role)
        return self.value(r, self.dims_of(v))

    def reshard(self, v, dims):
        """Where the layouts meet: a reshard between undecided types."""
        r = self.f.op("dist.reshard", [v], [self.type(dims)])[0]
        return self.value(r, dims)

    def split_heads(self, v):
        """[b, s, c] -> [b, n, s, d]."""
        sizes = ", ".join(str(self.L.size(k)) for k in "bsnd")
        x = self.f.op(
            "tensor.expand_shape",
            [v],
            [self.type("bsnd")],
            {
                "reassociation": self.attr("[[0], [1], [2, 3]]"),
                "static_output_shape": self.attr(f"array<i64: {sizes}>"),
            },
        )[0]
        self.value(x, "bsnd")
        return self.transpose(x, "bnsd")

    def transpose(self, v, out):
        return self.generic(out, [v], lambda x: x)

    def merge_heads(self, v):
        """[b, n, s, d] -> [b, s, c]."""
        t = self.transpose(v, "bsnd")
        x = self.f.op(
            "tensor.collapse_shape",
            [t],
            [self.type("bsc")],
            {"reassociation": self.attr("[[0], [1], [2, 3]]")},
        )[0]
        return self.value(x, "bsc")

    # -- layers ------------------------------------------------------------

    def layer_norm(self, x, g, beta, rows):
        """LayerNorm over h of `x` (letters rows + 'h'); returns (out, xhat,
        rstd)."""
        inv_h = 1.0 / self.L.g["h"]
        xd = rows + "h"
        mean = self.reduce_sum(rows, x)
        xc = self.ew(
            xd, [x, mean], lambda v, s: self.a("subf", v, self.a("mulf", s, self.const(inv_h)))
        )
        var = self.reduce_sum(rows, xc, square=True)
        rstd = self.ew(
            rows,
            [var],
            lambda v: self.m(
                "rsqrt", self.a("addf", self.a("mulf", v, self.const(inv_h)), self.const(EPS))
            ),
        )
        xhat = self.ew(xd, [xc, rstd], lambda v, r: self.a("mulf", v, r))
        out = self.ew(
            xd, [xhat, g, beta], lambda v, gi, bi: self.a("addf", self.a("mulf", v, gi), bi)
        )
        return out, xhat, rstd

    def layer_norm_grad(self, dout, xhat, rstd, g, rows):
        """dx, dg, dbeta of LayerNorm: dxhat = dout * g;
        dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))."""
        inv_h = 1.0 / self.L.g["h"]
        xd = rows + "h"
        dg = self.reduce_sum("h", self.ew(xd, [dout, xhat], lambda a, b: self.a("mulf", a, b)))
        db = self.reduce_sum("h", dout)
        dxhat = self.ew(xd, [dout, g], lambda a, b: self.a("mulf", a, b))
        s1 = self.reduce_sum(rows, dxhat)
        s2 = self.reduce_sum(rows, self.ew(xd, [dxhat, xhat], lambda a, b: self.a("mulf", a, b)))

        def dx(d, xh, t1, t2, r):
            m1 = self.a("mulf", t1, self.const(inv_h))
            m2 = self.a("mulf", t2, self.const(inv_h))
            w = self.a("subf", self.a("subf", d, m1), self.a("mulf", xh, m2))
            return self.a("mulf", w, r)

        return self.ew(xd, [dxhat, xhat, s1, s2, rstd], dx), dg, db

    def softmax(self, x):
        """Softmax over t of [b, n, s, t]."""
        m = self.generic("bns", [x], lambda v: v, "maximumf", MASKED * 10)
        e = self.ew("bnst", [x, m], lambda v, mx: self.m("exp", self.a("subf", v, mx)))
        z = self.reduce_sum("bns", e)
        return self.ew("bnst", [e, z], lambda v, s: self.a("divf", v, s))

    def causal_scale(self, scores, scale):
        """scores * scale where key <= query, MASKED elsewhere."""

        def body(v):
            i = self.f.op("linalg.index", [], [self.index], {"dim": self.attr("2 : i64")})[0]
            j = self.f.op("linalg.index", [], [self.index], {"dim": self.attr("3 : i64")})[0]
            keep = self.f.arith("cmpi", j, i, predicate="ule")
            scaled = self.a("mulf", v, self.const(scale))
            return self.f.op("arith.select", [keep, scaled, self.const(MASKED)], [self.f32])[0]

        return self.ew("bnst", [scores], body)

    def gelu(self, u):
        """0.5 u (1 + tanh(k (u + 0.044715 u^3))), and its tanh."""
        u3 = self.a("mulf", self.a("mulf", u, u), u)
        inner = self.a("addf", u, self.a("mulf", u3, self.const(0.044715)))
        th = self.m("tanh", self.a("mulf", inner, self.const(GELU_K)))
        return (
            self.a("mulf", self.a("mulf", u, self.const(0.5)), self.a("addf", th, self.const(1.0))),
            th,
        )

    def gelu_grad(self, d, u):
        """d * GeLU'(u)."""
        _, th = self.gelu(u)
        left = self.a("mulf", self.a("addf", th, self.const(1.0)), self.const(0.5))
        sech2 = self.a("subf", self.const(1.0), self.a("mulf", th, th))
        du3 = self.a("mulf", self.a("mulf", u, u), self.const(3 * 0.044715))
        kd = self.a("mulf", self.a("addf", du3, self.const(1.0)), self.const(GELU_K))
        right = self.a("mulf", self.a("mulf", u, self.a("mulf", sech2, kd)), self.const(0.5))
        return self.a("mulf", d, self.a("addf", left, right))


def layer_forward(B, P, x):
    """One pre-LayerNorm layer's forward on `x` (the residual stream, letters
    b, r or s, h) with the parameters `P` (by PARAMS' names): its output and
    what its backward needs."""
    L = B.L
    R = "r" if L.sp else "s"
    rows = "b" + R
    act = rows + "h"
    add = lambda a, b: B.a("addf", a, b)  # noqa: E731
    # ---- attention ----
    ln1, xhat1, rstd1 = B.layer_norm(x, P["ln1_g"], P["ln1_b"], rows)
    a_in = B.reshard(ln1, "bsh") if L.sp else ln1
    q, k, v = (B.matmul(a_in, P[w], "bsc") for w in ("wq", "wk", "wv"))
    qh, kh, vh = (B.split_heads(t) for t in (q, k, v))
    # Keys are indexed by t: the same tensor seen along the other sequence.
    B.value(kh, "bntd")
    B.value(vh, "bntd")
    raw = B.matmul(qh, kh, "bnst", transpose_y=True)
    scores = B.causal_scale(raw, 1.0 / math.sqrt(L.g["d"]))
    probs = B.softmax(scores)
    probs_d = B.dropout(probs, "attn_drop")
    ctx = B.matmul(probs_d, vh, "bnsd")
    ctx2 = B.merge_heads(ctx)
    attn = B.matmul(ctx2, P["wo"], "bsh")
    if L.sp:
        attn = B.reshard(attn, act)
    attn = B.dropout(attn, "attn_out_drop")
    x1 = B.ew(act, [x, attn], add)

    # ---- MLP ----
    ln2, xhat2, rstd2 = B.layer_norm(x1, P["ln2_g"], P["ln2_b"], rows)
    m_in = B.reshard(ln2, "bsh") if L.sp else ln2
    u = B.matmul(m_in, P["w1"], "bsf")
    gl = B.ew("bsf", [u], lambda e: B.gelu(e)[0])
    mlp = B.matmul(gl, P["w2"], "bsh")
    if L.sp:
        mlp = B.reshard(mlp, act)
    mlp = B.dropout(mlp, "mlp_out_drop")
    y = B.ew(act, [x1, mlp], add)
    saved = dict(
        xhat1=xhat1,
        rstd1=rstd1,
        a_in=a_in,
        qh=qh,
        kh=kh,
        vh=vh,
        probs=probs,
        probs_d=probs_d,
        ctx2=ctx2,
        xhat2=xhat2,
        rstd2=rstd2,
        m_in=m_in,
        u=u,
        gl=gl,
    )
    return y, saved


def layer_backward(B, P, saved, dy):
    """The backward of `layer_forward` from the gradient `dy` of its output:
    the gradient of its input and the parameters' gradients (by name)."""
    L = B.L
    R = "r" if L.sp else "s"
    rows = "b" + R
    act = rows + "h"
    add = lambda a, b: B.a("addf", a, b)  # noqa: E731
    s = saved
    # ---- MLP ----
    dmlp = B.dropout(dy, "mlp_out_drop", backward=True)
    dmlp = B.reshard(dmlp, "bsh") if L.sp else dmlp
    dgl, dw2 = B.matmul_grad(s["gl"], P["w2"], dmlp)
    du = B.ew("bsf", [dgl, s["u"]], B.gelu_grad)
    dln2, dw1 = B.matmul_grad(s["m_in"], P["w1"], du)
    if L.sp:
        dln2 = B.reshard(dln2, act)
    dx1_ln, dg2, db2 = B.layer_norm_grad(dln2, s["xhat2"], s["rstd2"], P["ln2_g"], rows)
    dx1 = B.ew(act, [dy, dx1_ln], add)

    # ---- attention ----
    dattn = B.dropout(dx1, "attn_out_drop", backward=True)
    dattn = B.reshard(dattn, "bsh") if L.sp else dattn
    dctx2, dwo = B.matmul_grad(s["ctx2"], P["wo"], dattn)
    dctx = B.split_heads(dctx2)
    dprobs, dvh = B.matmul_grad(s["probs_d"], s["vh"], dctx)
    dprobs = B.dropout(dprobs, "attn_drop", backward=True)
    probs = s["probs"]
    rs = B.reduce_sum("bns", B.ew("bnst", [probs, dprobs], lambda a, b: B.a("mulf", a, b)))
    inv_sqrt_d = 1.0 / math.sqrt(L.g["d"])
    dscores = B.ew(
        "bnst",
        [probs, dprobs, rs],
        lambda p, dp, s: B.a("mulf", B.a("mulf", p, B.a("subf", dp, s)), B.const(inv_sqrt_d)),
    )
    dqh, dkh = B.matmul_grad(s["qh"], s["kh"], dscores, transpose_y=True)
    dq = B.merge_heads(dqh)
    dk = B.merge_heads(B.value(dkh, "bnsd"))
    dv = B.merge_heads(B.value(dvh, "bnsd"))
    a_in = s["a_in"]
    dlq, dwq = B.matmul_grad(a_in, P["wq"], dq)
    dlk, dwk = B.matmul_grad(a_in, P["wk"], dk)
    dlv, dwv = B.matmul_grad(a_in, P["wv"], dv)
    dln1 = B.ew(B.dims_of(dlq), [B.ew(B.dims_of(dlq), [dlq, dlk], add), dlv], add)
    if L.sp:
        dln1 = B.reshard(dln1, act)
    dx_ln, dg1, db1 = B.layer_norm_grad(dln1, s["xhat1"], s["rstd1"], P["ln1_g"], rows)
    dx = B.ew(act, [dx1, dx_ln], add)
    grads = dict(
        ln1_g=dg1, ln1_b=db1, wq=dwq, wk=dwk, wv=dwv, wo=dwo, ln2_g=dg2, ln2_b=db2, w1=dw1, w2=dw2
    )
    return dx, grads


def update(B, names, dims_of, P, grads, S, step_count, hyper=None):
    """The optimizer's update of the parameters `names` (dims by name in
    `dims_of`) from their gradients and states `S`: the new parameters and
    the new states, by name. `hyper` replaces the optimizer's constants."""
    L = B.L
    n_states = STATES[L.optimizer]
    lr = hyper["lr"] if hyper else LR
    updated, new_states = {}, {}
    for p in names:
        if L.optimizer == "sgd":
            updated[p] = B.ew(
                dims_of[p],
                [P[p], grads[p]],
                lambda w, g: B.a("subf", w, B.a("mulf", g, B.const(lr))),
            )
            new_states[p] = []
            continue
        dims = dims_of[p]
        if L.optimizer == "momentum":
            name, attrs, operands = "dist.sgd", hyper or MOMENTUM, [P[p], grads[p]] + S[p]
        else:
            name, attrs = "dist.adamw", hyper or ADAMW
            operands = [P[p], grads[p]] + S[p] + [step_count]
        out = B.f.op(
            name,
            operands,
            [B.type(dims)] * (1 + n_states),
            {k: B.attr(f"{fmt(v)} : f64") for k, v in attrs.items()},
        )
        updated[p] = B.value(out[0], dims)
        new_states[p] = [B.value(v, dims) for v in out[1:]]
    return updated, new_states


def build_module(layout):
    """@train_step for `layout`, built with dist's builder, in a new
    dist.Module."""
    import dist

    L = layout
    module = dist.Module.create()
    B = Step(L, module)
    # The residual stream's sequence letter: r where sequence parallelism
    # splits it, s (as the attention's) otherwise.
    R = "r" if L.sp else "s"
    rows = "b" + R
    act = rows + "h"
    args = [(PARAM_DIMS[p], {"dist.param": p}) for p in PARAMS] + [(act, None), (act, None)]
    n_states = STATES[L.optimizer]
    # The optimizer states, in parameter order, then AdamW's step count.
    args += [(PARAM_DIMS[p], {"dist.state": p}) for p in PARAMS for _ in range(n_states)]
    if L.optimizer == "adamw":
        args.append((dist.TensorType([], "f32", context=module.context), None))
    if L.amp:
        # AMP: the backward starts from the loss times the loss scale;
        # --dist-amp-check-finite unscales the gradients and checks them.
        args.append(
            (dist.TensorType([1], "f32", context=module.context), {"dist.loss_scale": True})
        )
    values = B.begin(args)
    P = {p: B.value(v, PARAM_DIMS[p]) for p, v in zip(PARAMS, values)}
    x, target = B.value(values[len(PARAMS)], act), B.value(values[len(PARAMS) + 1], act)
    first_state = len(PARAMS) + 2
    S = {
        p: [B.value(values[first_state + i * n_states + k], PARAM_DIMS[p]) for k in range(n_states)]
        for i, p in enumerate(PARAMS)
    }
    step_count = values[first_state + len(PARAMS) * n_states] if L.optimizer == "adamw" else None

    y, saved = layer_forward(B, P, x)

    # ---- loss: 0.5 * mean((y - target)^2) ----
    count = L.g["b"] * L.g["s"] * L.g["h"]
    diff = B.ew(act, [y, target], lambda a, b: B.a("subf", a, b))
    sq = B.reduce_sum("", diff, square=True)
    loss = B.ew("", [sq], lambda s: B.a("mulf", s, B.const(0.5 / count)))

    scale = None
    if L.amp:
        zero = B.f.index(0)
        scale = B.f.op("tensor.extract", [values[-1], zero], [B.f32])[0]

    def dloss(d):
        g = B.a("mulf", d, B.const(1.0 / count))
        return B.a("mulf", g, scale) if scale is not None else g

    dy = B.ew(act, [diff], dloss)
    # The gradient of the layer's input, which the layer before it needs.
    dx, grads = layer_backward(B, P, saved, dy)

    # ---- the update ----
    updated, new_states = update(B, PARAMS, PARAM_DIMS, P, grads, S, step_count)
    # The results as the signature declares them.
    results = [(loss, "", None), (dx, act, None)]
    results += [(grads[p], PARAM_DIMS[p], {"dist.grad": p}) for p in PARAMS]
    results += [(updated[p], PARAM_DIMS[p], None) for p in PARAMS]
    results += [(v, PARAM_DIMS[p], {"dist.state": p}) for p in PARAMS for v in new_states[p]]
    B.f.return_(
        *[B.constraint(v, d) for v, d, _ in results],
        result_markers=[m or {} for _, _, m in results],
    )
    return module


def function_lines(module):
    """The lines of `module`'s text without the `module { ... }` around its
    functions (the aliases above it kept), so that a caller can add
    functions."""
    lines = str(module).splitlines()
    start = lines.index("module {")
    if lines[-1] != "}":
        raise RuntimeError("unexpected module text")
    return lines[:start] + [
        line[2:] if line.startswith("  ") else line for line in lines[start + 1 : -1]
    ]


def write_text(text, output):
    """`text` to the file `output`, or to stdout for "-"."""
    if output == "-":
        sys.stdout.write(text)
    else:
        with open(output, "w") as f:
            f.write(text)


def build(layout):
    """The text of @train_step for `layout`, without the `module` around it
    (so that a caller can add functions), after a header that says how it
    was made."""
    L = layout
    body = function_lines(build_module(L))
    g = L.g
    head = (
        f"// One training step of a pre-LayerNorm GPT layer: layout {L.name} on mesh "
        f"[{', '.join(map(str, L.mesh))}].\n"
        f"// Generated by examples/gpt_layer.py --layout {L.name} --mesh "
        f"{','.join(map(str, L.mesh))} --batch {g['b']} --seq {g['s']} --hidden {g['h']} "
        f"--heads {g['n']} --ffn {g['f']} --dropout {L.dropout:g}{' --amp' if L.amp else ''}"
        + (f" --optimizer {L.optimizer}" if L.optimizer != "sgd" else "")
        + (f" --tp-blocks {','.join(L.tp_blocks)}" if L.tp_blocks != TP_BLOCKS else "")
        + "\n"
    )
    return head + "\n".join(body) + "\n"


def sizes_of(args):
    """The global sizes by letter from the command line's options."""
    return dict(b=args.batch, s=args.seq, h=args.hidden, n=args.heads, f=args.ffn)


def sizes_text(g):
    return f"batch {g['b']}, sequence {g['s']}, hidden {g['h']}, {g['n']} heads, FFN {g['f']}, f32"


def layout_spec(spec, sizes, dropout=0.1, optimizer="sgd"):
    """The Layout of `spec`, LAYOUT:MESH (tp-sp:4, dp-tp:2,4) or LAYOUT, for
    global `sizes` (b, s, h, n, f)."""
    name, _, mesh = spec.partition(":")
    try:
        shape = [int(x) for x in mesh.split(",")] if mesh else None
    except ValueError:
        raise ValueError(f"{spec}: the mesh is sizes separated by commas, e.g. 2,4") from None
    return Layout(name, shape, sizes, dropout, optimizer=optimizer)


def megatron(L):
    """Megatron's closed form per process and layer, in bytes by kind:
    tensor parallelism allreduces the b x s x h activations twice forward and
    twice backward; sequence parallelism moves the same bytes as all-gather
    and reduce-scatter pairs; data parallelism allreduces the gradients."""
    act = L.size("b") * L.g["s"] * L.g["h"] * 4
    form = {}
    if L.tp is not None and L.sp:
        form["dist.all_gather"] = (4, 4 * act)
        form["dist.reduce_scatter"] = (4, 4 * act)
    elif L.tp is not None:
        form["dist.allreduce"] = (4, 4 * act)
    if L.dp is not None:
        grads = sum(4 * math.prod(L.size(x) for x in PARAM_DIMS[p]) for p in PARAMS)
        count, total = form.get("dist.allreduce", (0, 0))
        form["dist.allreduce"] = (count + len(PARAMS), total + grads)
    return form


def auto_parallel_options(zero_stage=0, buckets=False):
    """--dist-auto-parallel's options for a ZeRO stage and gradient
    buckets ("" for neither)."""
    options = [
        f"zero-stage={zero_stage}" if zero_stage else "",
        "bucket-gradients=true" if buckets else "",
    ]
    return " ".join(o for o in options if o)


def report(args):
    """For each LAYOUT:MESH of `args.report`, what the pipeline makes of the
    layer: its collectives against Megatron's closed form, its memory and the
    estimated step (--dist-overlap-report)."""
    import dist

    mib = 1024.0 * 1024.0

    def kinds(table):
        if not table:
            return "none"
        return ", ".join(
            f"{c} x {k.removeprefix('dist.')} {b / mib:.1f} MiB"
            for k, (c, b) in sorted(table.items())
        )

    g = sizes_of(args)
    print(
        f"One GPT layer per process and step: {sizes_text(g)}; estimates at "
        f"{args.peak_tflops:g} TFLOP/s, {args.link_latency_us:g} us + "
        f"{args.link_bandwidth_gbps:g} GB/s per collective."
    )
    for spec in args.report:
        L = layout_spec(spec, g, args.dropout, args.optimizer)
        name = L.name
        module = dist.Module.parse(build(L))
        options = auto_parallel_options(args.zero_stage, args.bucket_gradients)
        module.run(f"dist-auto-parallel{{{options}}}" if options else "dist-auto-parallel")
        (f,) = dist.overlap_report(
            module,
            peak_tflops=args.peak_tflops,
            link_latency_us=args.link_latency_us,
            link_bandwidth_gbps=args.link_bandwidth_gbps,
            memory_bandwidth_gbps=args.memory_bandwidth_gbps,
        )["functions"]
        ours = {k: (v["count"], v["bytes"]) for k, v in f["collectives"].items()}
        hidden = 1 - f["exposed_comm_us"] / f["comm_us"] if f["comm_us"] else 0
        print(f"\n{name} on [{', '.join(map(str, L.mesh))}]:")
        print(f"  dist:      {kinds(ours)}")
        print(f"  Megatron:  {kinds(megatron(L))} (activations and gradients)")
        states = ""
        if f["unsharded_state_bytes"]:
            states = (
                f", optimizer states {f['state_bytes'] / mib:.1f} MiB "
                f"(unsharded {f['unsharded_state_bytes'] / mib:.1f} MiB)"
            )
        print(
            f"  memory:    peak live tensors {f['peak_live_bytes'] / mib:.1f} MiB, "
            f"arguments {f['argument_bytes'] / mib:.1f} MiB{states}"
        )
        print(
            f"  estimate:  compute {f['compute_us']:.0f} us, communication {f['comm_us']:.0f} us "
            f"({100 * hidden:.0f}% hidden), step {f['makespan_us']:.0f} us"
        )
    return 0


def plan_candidates(
    sizes, devices, dropout=0.1, optimizer="sgd", make_layout=None, build_text=None
):
    """The GPT layer's plans on `devices` processes (dist.plan.Candidate):
    every mesh factorization into dp x tp; where tp > 1, which blocks it
    splits (attention, MLP or both) and whether sequence parallelism splits
    the rest; where dp > 1, the ZeRO stage (with an optimizer that has
    states) and gradient buckets. A size that a mesh axis does not divide
    rules the plan out. `make_layout(name, mesh, tp_blocks)` and
    `build_text(layout)` make another model's plans (examples/gpt_model.py)."""
    from dist.plan import Candidate, factorizations

    if make_layout is None:

        def make_layout(name, mesh, blocks):
            return Layout(name, mesh, sizes, dropout, optimizer=optimizer, tp_blocks=blocks)

    build_text = build_text or build

    blocks_options = [("attn", "mlp"), ("attn",), ("mlp",)]
    out = []
    for dp, tp in factorizations(devices, 2):
        for blocks in blocks_options if tp > 1 else [TP_BLOCKS]:
            for sp in (False, True) if tp > 1 else (False,):
                axes = [a for a, n in (("dp", dp), ("tp", tp)) if n > 1]
                name = "-".join(axes + (["sp"] if sp else [])) or "serial"
                mesh = [n for n in (dp, tp) if n > 1] or None
                try:
                    L = make_layout(name, mesh, blocks)
                except ValueError:
                    continue
                # The program depends on the layout only: built once, for
                # each ZeRO stage and bucketing.
                text = functools.lru_cache(maxsize=1)(lambda L=L: build_text(L))
                zero_stages = (0, 1, 2) if dp > 1 and STATES[optimizer] else (0,)
                for zero in zero_stages:
                    for buckets in (False, True) if dp > 1 else (False,):
                        options = auto_parallel_options(zero, buckets)
                        label = f"{name} [{','.join(map(str, L.mesh))}]"
                        if tp > 1 and blocks != TP_BLOCKS:
                            label += f" tp:{'+'.join(blocks)}"
                        if zero:
                            label += f" zero{zero}"
                        if buckets:
                            label += " buckets"
                        choices = (
                            ("dp", str(dp)),
                            ("tp", str(tp)),
                            ("tp-blocks", ",".join(blocks) if tp > 1 else "-"),
                            ("sp", str(sp).lower()),
                            ("zero-stage", str(zero)),
                            ("buckets", str(buckets).lower()),
                        )
                        out.append(
                            Candidate(
                                name=label,
                                mesh=tuple(L.mesh),
                                choices=choices,
                                build=text,
                                pipeline=options,
                                spec=L,
                                function="train_step",
                            )
                        )
    return out


def plan(args):
    """--plan: every plan of the layer on `args.plan` devices priced, the
    top ones printed, the chosen program written to --output."""
    chosen = [
        f
        for f, v in (
            ("--layout", args.layout),
            ("--mesh", args.mesh),
            ("--tp-blocks", args.tp_blocks),
            ("--report", args.report),
            ("--amp", args.amp),
            ("--zero-stage", args.zero_stage),
            ("--bucket-gradients", args.bucket_gradients),
        )
        if v
    ]
    if chosen:
        raise ValueError(f"--plan chooses the layout: it takes no {', '.join(chosen)}")
    g = sizes_of(args)
    candidates = plan_candidates(g, args.plan, args.dropout, args.optimizer)
    what = f"the layer ({sizes_text(g)}; dp splits the batch, tp the heads and the FFN)"
    title = f"GPT layer: {sizes_text(g)}, optimizer {args.optimizer}"
    return run_plan(args, candidates, what, title)


def run_plan(args, candidates, what, title):
    """The --plan driver a model shares: `candidates` (for args.plan
    devices) priced with the options' cost model, the table and the
    explanation printed to stderr, the chosen program written to --output.
    `what` names the model in the error when no candidate exists; `title`
    heads the table."""
    import dist.plan as dp

    cost = dict(
        peak_tflops=args.peak_tflops,
        link_latency_us=args.link_latency_us,
        link_bandwidth_gbps=args.link_bandwidth_gbps,
        memory_bandwidth_gbps=args.memory_bandwidth_gbps,
    )
    if args.cost_model:
        cost = dict(cost_model=args.cost_model)
    if args.top < 1:
        raise ValueError(f"--top must be positive, not {args.top}")
    devices = dp.check_devices(args.plan)
    limit = dp.check_memory_limit(args.memory_limit_mib)
    if args.memory_limit_mib is not None:
        limit *= dp.MIB
    if not candidates:
        raise ValueError(
            f"no plan for {devices} devices: no mesh dp x tp of that size divides {what}"
        )
    other = None
    if args.explain:
        other = next((c for c in candidates if c.name == args.explain), None)
        if other is None:
            raise ValueError(
                f"--explain {args.explain!r}: no such plan on {devices} devices; the plans are "
                + ", ".join(repr(n) for n in sorted(c.name for c in candidates))
            )
    plans = dp.search(candidates, limit, **cost)
    best = plans[0].candidate
    print(title, file=sys.stderr)
    print(dp.summary(plans, limit, devices), file=sys.stderr)
    sys.stderr.write(dp.table(plans, limit, args.top))
    print(f"chosen: {dp.choices_text(best)}", file=sys.stderr)
    if other is not None:
        sys.stderr.write(dp.explain(best, other, **cost))
    path = args.output if args.output != "-" else "PROGRAM.mlir"
    print(f"complete it with: {best.command(path)}", file=sys.stderr)
    head = (
        f"// Chosen by --plan {devices} ({dp.limit_text(limit)}): {dp.choices_text(best)}\n"
        f"// Complete it with: {best.command('FILE')}\n"
    )
    write_text(head + best.build(), args.output)
    return 0


def add_plan_args(p):
    """--plan and its options, and the cost model's constants."""
    p.add_argument(
        "--plan",
        type=int,
        metavar="DEVICES",
        help="choose the layout: price every plan on DEVICES processes, print the top "
        "ones and write the chosen program (the sizes and optimizer are the other options')",
    )
    p.add_argument(
        "--memory-limit-mib",
        type=float,
        default=None,
        help="--plan: a plan must fit in this many MiB per device (default: no limit)",
    )
    p.add_argument("--top", type=int, default=10, help="--plan: how many plans to print")
    p.add_argument(
        "--explain",
        metavar="PLAN",
        default="",
        help="--plan: the cost of PLAN (a name from the table) against the chosen plan, op by op",
    )
    p.add_argument(
        "--cost-model",
        default="",
        help="--plan: price with this dist-run --calibrate file instead of the constants",
    )
    p.add_argument("--peak-tflops", type=float, default=100.0)
    p.add_argument("--link-latency-us", type=float, default=10.0)
    p.add_argument("--link-bandwidth-gbps", type=float, default=100.0)
    p.add_argument(
        "--memory-bandwidth-gbps",
        type=float,
        default=0.0,
        help="price the ops that are not products at this memory bandwidth (0: they cost nothing)",
    )


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layout", default=None, choices=LAYOUTS, help="default: dp-tp")
    p.add_argument("--mesh", default=None, help="mesh shape, e.g. 2,4")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq", type=int, default=8)
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--ffn", type=int, default=32)
    p.add_argument("--dropout", type=float, default=0.1, help="GPT's dropout probability (0: none)")
    p.add_argument("--amp", action="store_true", help="take a loss scale (AMP loss scaling)")
    p.add_argument(
        "--optimizer",
        default="sgd",
        choices=OPTIMIZERS,
        help="sgd: plain SGD as linalg; momentum, adamw: dist.sgd/dist.adamw with their "
        "states as arguments and results marked dist.state",
    )
    p.add_argument("-o", "--output", default="-")
    p.add_argument(
        "--report",
        nargs="+",
        metavar="LAYOUT:MESH",
        help="instead of the program, what --dist-auto-parallel makes of each layout "
        "(e.g. tp:8 dp-tp-sp:2,4): collectives against Megatron's, memory, the estimate",
    )
    p.add_argument(
        "--zero-stage",
        type=int,
        default=0,
        choices=(0, 1, 2),
        help="--report: shard the optimizer states (with --optimizer momentum or adamw)",
    )
    p.add_argument(
        "--bucket-gradients",
        action="store_true",
        help="--report: fuse the data-parallel gradient collectives into buckets",
    )
    p.add_argument(
        "--tp-blocks",
        default=None,
        help="the blocks tensor parallelism splits: attn, mlp or attn,mlp (default)",
    )
    add_plan_args(p)
    return p.parse_args(argv)


def layout_of(args):
    mesh = [int(x) for x in args.mesh.split(",")] if args.mesh else None
    blocks = tuple(b for b in args.tp_blocks.split(",") if b) if args.tp_blocks else TP_BLOCKS
    return Layout(
        args.layout or "dp-tp",
        mesh,
        sizes_of(args),
        args.dropout,
        args.amp,
        args.optimizer,
        blocks,
    )


def main(argv=None):
    args = parse_args(argv)
    try:
        if args.plan is not None:
            return plan(args)
        if args.report:
            return report(args)
        text = build(layout_of(args))
    except ValueError as e:
        print(f"gpt_layer.py: error: {e}", file=sys.stderr)
        return 1
    write_text(text, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
