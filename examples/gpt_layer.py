#!/usr/bin/env python3
"""One training step of a pre-LayerNorm GPT layer, as a dist program.

  gpt_layer.py [--layout L] [--batch B] [--seq S] [--hidden H] [--heads N]
               [--ffn F] [-o FILE]

prints `@train_step`: LayerNorm, the Q, K and V projections, causal
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
# GPT's dropouts (id, fixed seed): on the attention probabilities and on
# each branch before its residual add. Fixed seeds make a step repeatable;
# the mask of each element depends only on the seed and the element's global
# index, so every layout draws the serial program's masks.
DROPOUTS = {"attn_drop": 11, "attn_out_drop": 12, "mlp_out_drop": 13}
EPS = 1e-5
LR = 0.1
GELU_K = math.sqrt(2.0 / math.pi)
MASKED = -1.0e9


def fmt(x):
    return f"{float(x):.9e}"


class Layout:
    """Which mesh axis splits each letter of a value's dims.

    Letters: b batch, r the residual stream's sequence, s and t the
    attention's sequences (queries and keys), h hidden, c hidden split as
    heads (n heads of d), f FFN."""

    def __init__(self, name, mesh, sizes, dropout=0.1, amp=False):
        if name not in LAYOUTS:
            raise ValueError(f"unknown layout {name!r}; expected one of {LAYOUTS}")
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
        if len(self.mesh) != max(len(axes), 1):
            raise ValueError(f"layout {name} needs a mesh of {max(len(axes), 1)} axes")
        self.dp = axes.index("dp") if "dp" in axes else None
        self.tp = axes.index("tp") if "tp" in axes else None
        self.sp = "sp" in parts
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
                    f"size {self.g[letter]} of '{letter}' does not divide by "
                    f"mesh axis {axis} ({self.mesh[axis]})"
                )

    def axis(self, letter):
        if letter == "b":
            return self.dp
        if letter in "cnf" or (letter == "r" and self.sp):
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


class Body:
    """The lines of @train_step: every helper returns the SSA name of its
    result; `dims` remembers each value's letters."""

    def __init__(self, layout):
        self.L = layout
        self.lines = []
        self.dims = {}
        # The arguments: their types carry encodings.
        self.encoded = set()
        self.n = 0

    def fresh(self, stem):
        self.n += 1
        return f"%{stem}{self.n}"

    def emit(self, line):
        self.lines.append("  " + line)

    def comment(self, text):
        self.lines.append("")
        self.lines.append("  // " + text)

    def value(self, name, dims):
        self.dims[name] = dims
        return name

    def ty(self, v):
        return self.L.ty(self.dims[v], v in self.encoded)

    def const(self, x):
        c = self.fresh("c")
        self.emit(f"{c} = arith.constant {fmt(x)} : f32")
        return c

    def generic(self, out, inputs, body, stem="t", reduce=None, init=0.0):
        """A linalg.generic over the loops `out` (the result's letters)
        followed by every other letter of the inputs (reductions).
        `inputs` are SSA names; `body(args, acc)` gets the block arguments'
        names (and the accumulator's, for a reduction) and returns (lines,
        result). `reduce` is the combining op of a reduction ("addf",
        "maximumf"), `init` the accumulator's start."""
        loops = list(out)
        for v in inputs:
            for x in self.dims[v]:
                if x not in loops:
                    loops.append(x)
        if reduce is None and len(loops) != len(out):
            raise ValueError(f"loops {loops} but the result has {out}")

        def amap(dims):
            idx = ", ".join(f"d{loops.index(x)}" for x in dims)
            return f"affine_map<({', '.join(f'd{i}' for i in range(len(loops)))}) -> ({idx})>"

        rty = self.L.ty(out)
        e = self.fresh("e")
        self.emit(f"{e} = tensor.empty() : {rty}")
        if reduce is not None:
            c = self.const(init)
            z = self.fresh("z")
            self.emit(f"{z} = linalg.fill ins({c} : f32) outs({e} : {rty}) -> {rty}")
            e = z
        maps = ", ".join(amap(self.dims[v]) for v in inputs) + ", " + amap(out)
        kinds = ", ".join('"parallel"' if x in out else '"reduction"' for x in loops)
        r = self.fresh(stem)
        ins = ", ".join(inputs)
        tys = ", ".join(self.ty(v) for v in inputs)
        self.emit(f"{r} = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{kinds}]}}")
        self.emit(f"    ins({ins} : {tys}) outs({e} : {rty}) {{")
        args = [f"%a{i}" for i in range(len(inputs))]
        lines, res = body(args, "%acc")
        self.emit("  ^bb0(" + ", ".join(a + ": f32" for a in args) + ", %acc: f32):")
        if reduce is not None:
            lines = lines + [f"%red = arith.{reduce} {res}, %acc : f32"]
            res = "%red"
        for line in lines:
            self.emit("    " + line)
        self.emit(f"    linalg.yield {res} : f32")
        self.emit(f"  }} -> {rty}")
        return self.value(r, out)

    def ew(self, out, inputs, expr, stem="t"):
        """Elementwise: `expr` is a list of 'name = op operands' lines over
        the block arguments %a0.. whose last line defines %r."""

        def body(args, acc):
            return expr, "%r"

        return self.generic(out, inputs, body, stem)

    def reduce_sum(self, out, v, stem="sum", square=False):
        def body(args, acc):
            if square:
                return [f"%sq = arith.mulf {args[0]}, {args[0]} : f32"], "%sq"
            return [], args[0]

        return self.generic(out, [v], body, stem, reduce="addf")

    def matmul(self, x, y, out, transpose_y=False, stem="mm"):
        r = self.fresh(stem)
        attr = " transpose_y" if transpose_y else ""
        self.emit(
            f"{r} = dist.matmul {x}, {y}{attr} : {self.ty(x)}, {self.ty(y)} -> {self.L.ty(out)}"
        )
        return self.value(r, out)

    def matmul_grad(self, x, y, dout, transpose_y=False, stem="g"):
        dx, dy = self.fresh("d" + stem + "x"), self.fresh("d" + stem + "w")
        attr = " transpose_y" if transpose_y else ""
        self.emit(
            f"{dx}, {dy} = dist.matmul_grad {x}, {y}, {dout}{attr} : "
            f"{self.ty(x)}, {self.ty(y)}, {self.ty(dout)} -> "
            f"{self.L.ty(self.dims[x])}, {self.L.ty(self.dims[y])}"
        )
        self.value(dx, self.dims[x])
        self.value(dy, self.dims[y])
        return dx, dy

    def constraint(self, v, dims):
        """`v` pinned to its encoding in the layout."""
        r = self.fresh("out")
        self.emit(f"{r} = dist.constraint {v} : {self.ty(v)} -> {self.L.ty(dims, True)}")
        self.value(r, dims)
        self.encoded.add(r)
        return r

    def dropout(self, v, id, backward=False):
        """`v` through GPT's dropout `id` (its backward: the same mask, as the
        forward's recomputed twin); `v` itself without dropout."""
        if not self.L.dropout:
            return v
        r = self.fresh("drop")
        role = "recompute_of" if backward else "id"
        self.emit(
            f"{r} = dist.dropout {v} prob = {fmt(self.L.dropout)} "
            f'{{fix_seed = {DROPOUTS[id]} : i32, {role} = "{id}"}} '
            f": {self.ty(v)} -> {self.L.ty(self.dims[v])}"
        )
        return self.value(r, self.dims[v])

    def reshard(self, v, dims):
        r = self.fresh("gathered")
        self.emit(f"{r} = dist.reshard {v} : {self.ty(v)} -> {self.L.ty(dims)}")
        return self.value(r, dims)

    def split_heads(self, v):
        """[b, s, c] -> [b, n, s, d]."""
        x = self.fresh("heads")
        s4 = self.L.ty("bsnd")
        sizes = ", ".join(str(self.L.size(k)) for k in "bsnd")
        self.emit(
            f"{x} = tensor.expand_shape {v} [[0], [1], [2, 3]] output_shape [{sizes}] "
            f": {self.ty(v)} into {s4}"
        )
        self.value(x, "bsnd")
        return self.transpose(x, "bnsd")

    def transpose(self, v, out):
        return self.generic(out, [v], lambda a, acc: ([], a[0]), "tr")

    def merge_heads(self, v):
        """[b, n, s, d] -> [b, s, c]."""
        t = self.transpose(v, "bsnd")
        x = self.fresh("merged")
        self.emit(
            f"{x} = tensor.collapse_shape {t} [[0], [1], [2, 3]] : {self.ty(t)} into {self.L.ty('bsc')}"
        )
        return self.value(x, "bsc")

    # -- layers ------------------------------------------------------------

    def layer_norm(self, x, g, beta, rows):
        """LayerNorm over h of `x` (letters rows + 'h'); returns (out, xhat,
        rstd)."""
        h = self.L.g["h"]
        inv_h = self.const(1.0 / h)
        eps = self.const(EPS)
        xd = rows + "h"
        mean = self.reduce_sum(rows, x, "mean_sum")
        xc = self.ew(
            xd,
            [x, mean],
            [f"%m = arith.mulf %a1, {inv_h} : f32", "%r = arith.subf %a0, %m : f32"],
            "xc",
        )
        var = self.reduce_sum(rows, xc, "var_sum", square=True)
        rstd = self.ew(
            rows,
            [var],
            [
                f"%v = arith.mulf %a0, {inv_h} : f32",
                f"%ve = arith.addf %v, {eps} : f32",
                "%r = math.rsqrt %ve : f32",
            ],
            "rstd",
        )
        xhat = self.ew(xd, [xc, rstd], ["%r = arith.mulf %a0, %a1 : f32"], "xhat")
        out = self.ew(
            xd,
            [xhat, g, beta],
            ["%m = arith.mulf %a0, %a1 : f32", "%r = arith.addf %m, %a2 : f32"],
            "ln",
        )
        return out, xhat, rstd

    def layer_norm_grad(self, dout, xhat, rstd, g, rows):
        """dx, dg, dbeta of LayerNorm: dxhat = dout * g;
        dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))."""
        inv_h = self.const(1.0 / self.L.g["h"])
        xd = rows + "h"
        dg_terms = self.ew(xd, [dout, xhat], ["%r = arith.mulf %a0, %a1 : f32"], "dgt")
        dg = self.reduce_sum("h", dg_terms, "dg")
        db = self.reduce_sum("h", dout, "db")
        dxhat = self.ew(xd, [dout, g], ["%r = arith.mulf %a0, %a1 : f32"], "dxhat")
        s1 = self.reduce_sum(rows, dxhat, "s1")
        prod = self.ew(xd, [dxhat, xhat], ["%r = arith.mulf %a0, %a1 : f32"], "dxx")
        s2 = self.reduce_sum(rows, prod, "s2")
        dx = self.ew(
            xd,
            [dxhat, xhat, s1, s2, rstd],
            [
                f"%m1 = arith.mulf %a2, {inv_h} : f32",
                f"%m2 = arith.mulf %a3, {inv_h} : f32",
                "%p = arith.mulf %a1, %m2 : f32",
                "%u = arith.subf %a0, %m1 : f32",
                "%w = arith.subf %u, %p : f32",
                "%r = arith.mulf %w, %a4 : f32",
            ],
            "dln",
        )
        return dx, dg, db

    def softmax(self, x):
        """Softmax over t of [b, n, s, t]."""
        m = self.generic("bns", [x], lambda a, acc: ([], a[0]), "rowmax", "maximumf", MASKED * 10)
        e = self.ew(
            "bnst", [x, m], ["%s = arith.subf %a0, %a1 : f32", "%r = math.exp %s : f32"], "exp"
        )
        z = self.reduce_sum("bns", e, "rowsum")
        return self.ew("bnst", [e, z], ["%r = arith.divf %a0, %a1 : f32"], "probs")

    def causal_scale(self, scores, scale):
        """scores * scale where key <= query, MASKED elsewhere."""
        c = self.const(scale)
        masked = self.const(MASKED)
        return self.ew(
            "bnst",
            [scores],
            [
                "%i = linalg.index 2 : index",
                "%j = linalg.index 3 : index",
                "%keep = arith.cmpi ule, %j, %i : index",
                f"%sc = arith.mulf %a0, {c} : f32",
                f"%r = arith.select %keep, %sc, {masked} : f32",
            ],
            "scores",
        )


def build(layout):
    """The module text of @train_step for `layout`."""
    L = layout
    B = Body(L)
    # The residual stream's sequence letter: r where sequence parallelism
    # splits it, s (as the attention's) otherwise.
    R = "r" if L.sp else "s"
    rows = "b" + R
    act = rows + "h"
    args = []
    for p in PARAMS:
        args.append((f"%{p}", PARAM_DIMS[p], f' {{dist.param = "{p}"}}'))
    args.append(("%x", act, ""))
    args.append(("%target", act, ""))
    for name, dims, _ in args:
        B.value(name, dims)
        B.encoded.add(name)
    if L.amp:
        # AMP: the backward starts from the loss times the loss scale;
        # --dist-amp-check-finite unscales the gradients and checks them.
        args.append(("%loss_scale", None, " {dist.loss_scale}"))
    P = {p: f"%{p}" for p in PARAMS}

    B.comment("---- forward: attention ----")
    ln1, xhat1, rstd1 = B.layer_norm("%x", P["ln1_g"], P["ln1_b"], rows)
    a_in = B.reshard(ln1, "bsh") if L.sp else ln1
    q = B.matmul(a_in, P["wq"], "bsc", stem="q")
    k = B.matmul(a_in, P["wk"], "bsc", stem="k")
    v = B.matmul(a_in, P["wv"], "bsc", stem="v")
    qh, kh, vh = (B.split_heads(t) for t in (q, k, v))
    # Keys are indexed by t: the same tensor seen along the other sequence.
    B.dims[kh] = "bntd"
    B.dims[vh] = "bntd"
    raw = B.matmul(qh, kh, "bnst", transpose_y=True, stem="qk")
    scores = B.causal_scale(raw, 1.0 / math.sqrt(L.g["d"]))
    probs = B.softmax(scores)
    probs_d = B.dropout(probs, "attn_drop")
    ctx = B.matmul(probs_d, vh, "bnsd", stem="ctx")
    ctx2 = B.merge_heads(ctx)
    attn = B.matmul(ctx2, P["wo"], "bsh", stem="attn")
    if L.sp:
        attn = B.reshard(attn, act)
    attn = B.dropout(attn, "attn_out_drop")
    x1 = B.ew(act, ["%x", attn], ["%r = arith.addf %a0, %a1 : f32"], "x1")

    B.comment("---- forward: MLP ----")
    ln2, xhat2, rstd2 = B.layer_norm(x1, P["ln2_g"], P["ln2_b"], rows)
    m_in = B.reshard(ln2, "bsh") if L.sp else ln2
    u = B.matmul(m_in, P["w1"], "bsf", stem="fc1")
    c3 = B.const(0.044715)
    ck = B.const(GELU_K)
    half = B.const(0.5)
    one = B.const(1.0)
    gl = B.ew(
        "bsf",
        [u],
        [
            "%u2 = arith.mulf %a0, %a0 : f32",
            "%u3 = arith.mulf %u2, %a0 : f32",
            f"%cu3 = arith.mulf %u3, {c3} : f32",
            "%in = arith.addf %a0, %cu3 : f32",
            f"%kin = arith.mulf %in, {ck} : f32",
            "%th = math.tanh %kin : f32",
            f"%op = arith.addf %th, {one} : f32",
            f"%hu = arith.mulf %a0, {half} : f32",
            "%r = arith.mulf %hu, %op : f32",
        ],
        "gelu",
    )
    mlp = B.matmul(gl, P["w2"], "bsh", stem="fc2")
    if L.sp:
        mlp = B.reshard(mlp, act)
    mlp = B.dropout(mlp, "mlp_out_drop")
    y = B.ew(act, [x1, mlp], ["%r = arith.addf %a0, %a1 : f32"], "y")

    B.comment("---- loss: 0.5 * mean((y - target)^2) ----")
    count = L.g["b"] * L.g["s"] * L.g["h"]
    diff = B.ew(act, [y, "%target"], ["%r = arith.subf %a0, %a1 : f32"], "diff")
    sq = B.reduce_sum("", diff, "sqsum", square=True)
    halfn = B.const(0.5 / count)
    loss = B.ew("", [sq], [f"%r = arith.mulf %a0, {halfn} : f32"], "loss")

    B.comment("---- backward: MLP ----")
    invn = B.const(1.0 / count)
    if L.amp:
        zero = B.fresh("c")
        B.emit(f"{zero} = arith.constant 0 : index")
        scale = B.fresh("loss_scale")
        B.emit(f"{scale} = tensor.extract %loss_scale[{zero}] : tensor<1xf32>")
        scaled = B.fresh("c")
        B.emit(f"{scaled} = arith.mulf {invn}, {scale} : f32")
        invn = scaled
    dy = B.ew(act, [diff], [f"%r = arith.mulf %a0, {invn} : f32"], "dy")
    dmlp = B.dropout(dy, "mlp_out_drop", backward=True)
    dmlp = B.reshard(dmlp, "bsh") if L.sp else dmlp
    dgl, dw2 = B.matmul_grad(gl, P["w2"], dmlp, stem="fc2")
    three_c3 = B.const(3 * 0.044715)
    du = B.ew(
        "bsf",
        [dgl, u],
        [
            "%u2 = arith.mulf %a1, %a1 : f32",
            "%u3 = arith.mulf %u2, %a1 : f32",
            f"%cu3 = arith.mulf %u3, {c3} : f32",
            "%in = arith.addf %a1, %cu3 : f32",
            f"%kin = arith.mulf %in, {ck} : f32",
            "%th = math.tanh %kin : f32",
            f"%op = arith.addf %th, {one} : f32",
            f"%left = arith.mulf %op, {half} : f32",
            "%th2 = arith.mulf %th, %th : f32",
            f"%sech2 = arith.subf {one}, %th2 : f32",
            f"%d3 = arith.mulf %u2, {three_c3} : f32",
            f"%din = arith.addf %d3, {one} : f32",
            f"%kd = arith.mulf %din, {ck} : f32",
            "%sk = arith.mulf %sech2, %kd : f32",
            "%usk = arith.mulf %a1, %sk : f32",
            f"%right = arith.mulf %usk, {half} : f32",
            "%gp = arith.addf %left, %right : f32",
            "%r = arith.mulf %a0, %gp : f32",
        ],
        "du",
    )
    dln2, dw1 = B.matmul_grad(m_in, P["w1"], du, stem="fc1")
    if L.sp:
        dln2 = B.reshard(dln2, act)
    dx1_ln, dg2, db2 = B.layer_norm_grad(dln2, xhat2, rstd2, P["ln2_g"], rows)
    dx1 = B.ew(act, [dy, dx1_ln], ["%r = arith.addf %a0, %a1 : f32"], "dx1")

    B.comment("---- backward: attention ----")
    dattn = B.dropout(dx1, "attn_out_drop", backward=True)
    dattn = B.reshard(dattn, "bsh") if L.sp else dattn
    dctx2, dwo = B.matmul_grad(ctx2, P["wo"], dattn, stem="attn")
    dctx = B.split_heads(dctx2)
    dprobs, dvh = B.matmul_grad(probs_d, vh, dctx, stem="ctx")
    dprobs = B.dropout(dprobs, "attn_drop", backward=True)
    pd = B.ew("bnst", [probs, dprobs], ["%r = arith.mulf %a0, %a1 : f32"], "pd")
    rs = B.reduce_sum("bns", pd, "pdsum")
    scale = B.const(1.0 / math.sqrt(L.g["d"]))
    dscores = B.ew(
        "bnst",
        [probs, dprobs, rs],
        [
            "%s = arith.subf %a1, %a2 : f32",
            "%p = arith.mulf %a0, %s : f32",
            f"%r = arith.mulf %p, {scale} : f32",
        ],
        "dscores",
    )
    dqh, dkh = B.matmul_grad(qh, kh, dscores, transpose_y=True, stem="qk")
    dq = B.merge_heads(dqh)
    B.dims[dkh] = "bnsd"
    dk = B.merge_heads(dkh)
    B.dims[dvh] = "bnsd"
    dv = B.merge_heads(dvh)
    dlq, dwq = B.matmul_grad(a_in, P["wq"], dq, stem="q")
    dlk, dwk = B.matmul_grad(a_in, P["wk"], dk, stem="k")
    dlv, dwv = B.matmul_grad(a_in, P["wv"], dv, stem="v")
    dqk = B.ew(B.dims[dlq], [dlq, dlk], ["%r = arith.addf %a0, %a1 : f32"], "dqk")
    dln1 = B.ew(B.dims[dlq], [dqk, dlv], ["%r = arith.addf %a0, %a1 : f32"], "dln1")
    if L.sp:
        dln1 = B.reshard(dln1, act)
    dx_ln, dg1, db1 = B.layer_norm_grad(dln1, xhat1, rstd1, P["ln1_g"], rows)
    # The gradient of the layer's input, which the layer before it needs.
    dx = B.ew(act, [dx1, dx_ln], ["%r = arith.addf %a0, %a1 : f32"], "dx")

    B.comment("---- SGD update ----")
    grads = {
        "ln1_g": dg1,
        "ln1_b": db1,
        "wq": dwq,
        "wk": dwk,
        "wv": dwv,
        "wo": dwo,
        "ln2_g": dg2,
        "ln2_b": db2,
        "w1": dw1,
        "w2": dw2,
    }
    lr = B.const(LR)
    updated = {}
    for p in PARAMS:
        updated[p] = B.ew(
            PARAM_DIMS[p],
            [P[p], grads[p]],
            [f"%s = arith.mulf %a1, {lr} : f32", "%r = arith.subf %a0, %s : f32"],
            "new_" + p + "_",
        )

    results = [(loss, "", ""), (dx, act, "")]
    results += [(grads[p], PARAM_DIMS[p], f' {{dist.grad = "{p}"}}') for p in PARAMS]
    results += [(updated[p], PARAM_DIMS[p], "") for p in PARAMS]
    B.comment("the results as the signature declares them")
    results = [(B.constraint(v, d), d, m) for v, d, m in results]
    B.emit(
        "return "
        + ", ".join(r for r, _, _ in results)
        + " : "
        + ", ".join(L.ty(d, True) for _, d, _ in results)
    )

    mesh = ", ".join(map(str, L.mesh))
    names = ", ".join(f'"{n}"' for n in L.names)
    sig_args = ",\n    ".join(
        f"{n}: {L.ty(d, True) if d is not None else 'tensor<1xf32>'}{m}" for n, d, m in args
    )
    sig_res = ",\n    ".join(f"{L.ty(d, True)}{m}" for _, d, m in results)
    g = L.g
    head = (
        f"// One training step of a pre-LayerNorm GPT layer: layout {L.name} on mesh "
        f"[{mesh}].\n"
        f"// Generated by examples/gpt_layer.py --layout {L.name} --mesh {','.join(map(str, L.mesh))} "
        f"--batch {g['b']} --seq {g['s']} --hidden {g['h']} --heads {g['n']} --ffn {g['f']} "
        f"--dropout {L.dropout:g}{' --amp' if L.amp else ''}\n"
        f"#mesh = #dist.mesh<shape = [{mesh}], names = [{names}]>\n\n"
    )
    return (
        head
        + f"func.func @train_step(\n    {sig_args})\n    -> ({sig_res})\n"
        + "    attributes {dist.complete} {"
        + "\n".join(B.lines)
        + "\n}\n"
    )


def sizes_of(args):
    """The global sizes by letter from the command line's options."""
    return dict(b=args.batch, s=args.seq, h=args.hidden, n=args.heads, f=args.ffn)


def sizes_text(g):
    return f"batch {g['b']}, sequence {g['s']}, hidden {g['h']}, {g['n']} heads, FFN {g['f']}, f32"


def layout_spec(spec, sizes, dropout=0.1):
    """The Layout of `spec`, LAYOUT:MESH (tp-sp:4, dp-tp:2,4) or LAYOUT, for
    global `sizes` (b, s, h, n, f)."""
    name, _, mesh = spec.partition(":")
    try:
        shape = [int(x) for x in mesh.split(",")] if mesh else None
    except ValueError:
        raise ValueError(f"{spec}: the mesh is sizes separated by commas, e.g. 2,4") from None
    return Layout(name, shape, sizes, dropout)


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
        L = layout_spec(spec, g, args.dropout)
        name = L.name
        module = dist.Module.parse(build(L))
        module.run("dist-auto-parallel")
        (f,) = dist.overlap_report(
            module,
            peak_tflops=args.peak_tflops,
            link_latency_us=args.link_latency_us,
            link_bandwidth_gbps=args.link_bandwidth_gbps,
        )["functions"]
        ours = {k: (v["count"], v["bytes"]) for k, v in f["collectives"].items()}
        hidden = 1 - f["exposed_comm_us"] / f["comm_us"] if f["comm_us"] else 0
        print(f"\n{name} on [{', '.join(map(str, L.mesh))}]:")
        print(f"  dist:      {kinds(ours)}")
        print(f"  Megatron:  {kinds(megatron(L))} (activations and gradients)")
        print(
            f"  memory:    peak live tensors {f['peak_live_bytes'] / mib:.1f} MiB, "
            f"arguments {f['argument_bytes'] / mib:.1f} MiB"
        )
        print(
            f"  estimate:  compute {f['compute_us']:.0f} us, communication {f['comm_us']:.0f} us "
            f"({100 * hidden:.0f}% hidden), step {f['makespan_us']:.0f} us"
        )
    return 0


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layout", default="dp-tp", choices=LAYOUTS)
    p.add_argument("--mesh", default=None, help="mesh shape, e.g. 2,4")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq", type=int, default=8)
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--ffn", type=int, default=32)
    p.add_argument("--dropout", type=float, default=0.1, help="GPT's dropout probability (0: none)")
    p.add_argument("--amp", action="store_true", help="take a loss scale (AMP loss scaling)")
    p.add_argument("-o", "--output", default="-")
    p.add_argument(
        "--report",
        nargs="+",
        metavar="LAYOUT:MESH",
        help="instead of the program, what --dist-auto-parallel makes of each layout "
        "(e.g. tp:8 dp-tp-sp:2,4): collectives against Megatron's, memory, the estimate",
    )
    p.add_argument("--peak-tflops", type=float, default=100.0)
    p.add_argument("--link-latency-us", type=float, default=10.0)
    p.add_argument("--link-bandwidth-gbps", type=float, default=100.0)
    return p.parse_args(argv)


def layout_of(args):
    mesh = [int(x) for x in args.mesh.split(",")] if args.mesh else None
    return Layout(args.layout, mesh, sizes_of(args), args.dropout, args.amp)


def main(argv=None):
    args = parse_args(argv)
    try:
        if args.report:
            return report(args)
        text = build(layout_of(args))
    except ValueError as e:
        print(f"gpt_layer.py: error: {e}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
