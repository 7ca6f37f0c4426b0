"""The lowering of each ATen op (`LOWERINGS`), on the Importer's helpers.

Each entry takes the importer and the node's arguments (Vals, Consts and
Python values) and returns a Val, a tuple of them, or a Const. Ops whose
inputs are all constants are folded with torch before they get here."""
import math

from ._importer import F32, I1, I64, TENSORS, Collapsed, Const, Transposed, Val

GELU_K = math.sqrt(2.0 / math.pi)
INV_SQRT2 = 1.0 / math.sqrt(2.0)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _dim(d, rank):
    return d + rank if d < 0 else d


def _rank(x):
    return len(x.shape)


# -- elementwise ----------------------------------------------------------------


def _binary(name):
    def lower(im, x, y, alpha=1):
        if alpha != 1:
            return im.ew([x, y], lambda a, b: im.a(name, a, im.a("mulf", b, im.c(alpha))))
        return im.ew([x, y], lambda a, b: im.a(name, a, b))

    return lower


def _rsub(im, x, y, alpha=1):
    return im.ew([x, y], lambda a, b: im.a("subf", b, im.a("mulf", a, im.c(alpha))))


def _unary(fn):
    def lower(im, x):
        return im.ew([x], lambda a: fn(im, a))

    return lower


def _pow(im, x, e):
    if isinstance(e, (Val, Const)):
        im.fail("pow with a tensor exponent is not supported")
    if e == 1:
        return x
    if e == 2:
        return im.ew([x], lambda a: im.a("mulf", a, a))
    if e == 0.5:
        return im.ew([x], lambda a: im.mth("sqrt", a))
    return im.ew([x, float(e)], lambda a, b: im.f.op("math.powf", [a, b], [im.t_f32])[0])


def _masked_fill(im, x, mask, value):
    return im.ew([x, mask, value], lambda a, m, v: im.select(m, v, a))


def _where(im, cond, x, y):
    dtype = next((v.dtype for v in (x, y) if isinstance(v, TENSORS)), F32)
    return im.ew([cond, x, y], lambda m, a, b: im.select(m, a, b), dtype=dtype)


def _addcmul(im, x, t1, t2, value=1):
    return im.ew(
        [x, t1, t2], lambda a, b, c: im.a("addf", a, im.a("mulf", im.c(value), im.a("mulf", b, c)))
    )


def _addcdiv(im, x, t1, t2, value=1):
    return im.ew(
        [x, t1, t2], lambda a, b, c: im.a("addf", a, im.a("mulf", im.c(value), im.a("divf", b, c)))
    )


def _relu(im, x):
    return im.ew([x], lambda a: im.a("maximumf", a, im.c(0.0)))


def _threshold_backward(im, grad, x, threshold):
    return im.ew(
        [grad, x], lambda g, a: im.select(im.cmpf("ole", a, im.c(threshold)), im.c(0.0), g)
    )


def _sigmoid(im, a):
    return im.a("divf", im.c(1.0), im.a("addf", im.c(1.0), im.mth("exp", im.a("negf", a))))


def _gelu_tanh(im, u):
    u3 = im.a("mulf", im.a("mulf", u, u), u)
    inner = im.a("mulf", im.a("addf", u, im.a("mulf", u3, im.c(0.044715))), im.c(GELU_K))
    return im.mth("tanh", inner)


def _gelu(im, x, approximate="none"):
    if approximate == "tanh":
        return im.ew(
            [x],
            lambda u: im.a(
                "mulf", im.a("mulf", u, im.c(0.5)), im.a("addf", _gelu_tanh(im, u), im.c(1.0))
            ),
        )
    return im.ew(
        [x],
        lambda u: im.a(
            "mulf",
            im.a("mulf", u, im.c(0.5)),
            im.a("addf", im.erf(im.a("mulf", u, im.c(INV_SQRT2))), im.c(1.0)),
        ),
    )


def _gelu_backward(im, grad, x, approximate="none"):
    def tanh_form(d, u):
        th = _gelu_tanh(im, u)
        left = im.a("mulf", im.a("addf", th, im.c(1.0)), im.c(0.5))
        sech2 = im.a("subf", im.c(1.0), im.a("mulf", th, th))
        du3 = im.a("mulf", im.a("mulf", u, u), im.c(3 * 0.044715))
        kd = im.a("mulf", im.a("addf", du3, im.c(1.0)), im.c(GELU_K))
        right = im.a("mulf", im.a("mulf", u, im.a("mulf", sech2, kd)), im.c(0.5))
        return im.a("mulf", d, im.a("addf", left, right))

    def erf_form(d, u):
        cdf = im.a(
            "mulf", im.a("addf", im.erf(im.a("mulf", u, im.c(INV_SQRT2))), im.c(1.0)), im.c(0.5)
        )
        pdf = im.a(
            "mulf", im.mth("exp", im.a("mulf", im.a("mulf", u, u), im.c(-0.5))), im.c(INV_SQRT_2PI)
        )
        return im.a("mulf", d, im.a("addf", cdf, im.a("mulf", u, pdf)))

    return im.ew([grad, x], tanh_form if approximate == "tanh" else erf_form)


def _silu_body(im, a):
    return im.a("mulf", a, _sigmoid(im, a))


def _silu_backward(im, grad, x):
    def body(g, a):
        sig = _sigmoid(im, a)
        inner = im.a("addf", im.c(1.0), im.a("mulf", a, im.a("subf", im.c(1.0), sig)))
        return im.a("mulf", g, im.a("mulf", sig, inner))

    return im.ew([grad, x], body)


def _softplus(im, x, beta=1, threshold=20):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""

    def body(a):
        bx = im.a("mulf", a, im.c(beta))
        soft = im.a("divf", im.mth("log1p", im.mth("exp", bx)), im.c(beta))
        return im.select(im.cmpf("ogt", bx, im.c(threshold)), a, soft)

    return im.ew([x], body)


def _softplus_backward(im, grad, x, beta=1, threshold=20):
    def body(g, a):
        bx = im.a("mulf", a, im.c(beta))
        d = im.a("mulf", g, _sigmoid(im, bx))
        return im.select(im.cmpf("ogt", bx, im.c(threshold)), g, d)

    return im.ew([grad, x], body)


def _leaky_relu(im, x, slope=0.01):
    return im.ew(
        [x], lambda a: im.select(im.cmpf("ogt", a, im.c(0.0)), a, im.a("mulf", a, im.c(slope)))
    )


def _leaky_relu_backward(im, grad, x, slope, self_is_result=False):
    def body(g, a):
        return im.select(im.cmpf("ogt", a, im.c(0.0)), g, im.a("mulf", g, im.c(slope)))

    return im.ew([grad, x], body)


def _tanh_backward(im, grad, out):
    return im.ew(
        [grad, out], lambda g, y: im.a("mulf", g, im.a("subf", im.c(1.0), im.a("mulf", y, y)))
    )


def _sigmoid_backward(im, grad, out):
    return im.ew(
        [grad, out], lambda g, y: im.a("mulf", g, im.a("mulf", y, im.a("subf", im.c(1.0), y)))
    )


def _sign(im, a):
    pos = im.select(im.cmpf("ogt", a, im.c(0.0)), im.c(1.0), im.c(0.0))
    return im.select(im.cmpf("olt", a, im.c(0.0)), im.c(-1.0), pos)


# cmpf's ordered predicates and cmpi's signed ones, by comparison.
_CMPI = {"ogt": "sgt", "oge": "sge", "olt": "slt", "ole": "sle", "oeq": "eq", "une": "ne"}


def _compare(pred):
    def lower(im, x, y):
        if any(isinstance(v, TENSORS) and v.dtype == I64 for v in (x, y)):
            if not all(
                isinstance(v, int) or (isinstance(v, TENSORS) and v.dtype == I64) for v in (x, y)
            ):
                im.fail("comparisons of int64 with float tensors are not supported")
            return im.ew(
                [x, y],
                lambda a, b: im.f.arith("cmpi", a, b, predicate=_CMPI[pred]),
                dtype=I1,
                integer=True,
            )
        return im.ew([x, y], lambda a, b: im.cmpf(pred, a, b), dtype=I1)

    return lower


def _logical_not(im, x):
    return im.ew([x], lambda a: im.a("xori", a, im.c(True, I1)), dtype=I1)


def _zeros_into(im, grad, sizes, dim, start):
    """`grad` inserted at `start` along `dim` of zeros shaped `sizes` (the
    backward of a slice or select)."""
    grad = im.tensor(grad)
    d = _dim(dim, len(sizes))
    splits = list(grad.splits)
    splits[d] = None
    g = im.conform(grad, splits)
    zeros = im.tensor(Const(__import__("torch").zeros(list(sizes))), splits)
    if tuple(zeros.splits) != tuple(splits):
        zeros = Val(im.conform(zeros, splits), zeros.shape, F32, splits)
    offsets = [0] * len(sizes)
    offsets[d] = start
    r = im.f.insert_slice(g, zeros.value, offsets)
    return Val(r, list(sizes), F32, splits)


def _slice_backward(im, grad, sizes, dim, start, end, step):
    if step != 1:
        im.fail("slices with a step are not supported")
    n = sizes[_dim(dim, len(sizes))]
    start = start + n if start < 0 else min(start, n)
    return _zeros_into(im, grad, sizes, dim, start)


def _select_backward(im, grad, sizes, dim, index):
    d = _dim(dim, len(sizes))
    g = im.tensor(grad)
    shape = list(g.shape)
    shape.insert(d, 1)
    n = sizes[d]
    return _zeros_into(im, im.reshape(g, shape), sizes, d, index + n if index < 0 else index)


def _new_zeros(im, x, size, **kwargs):
    import torch

    return Const(torch.zeros(list(size), dtype=kwargs.get("dtype") or torch.float32))


def _to_copy(im, x, dtype=None, **kwargs):
    import torch

    if (
        dtype is not None
        and dtype != torch.float32
        and not (
            isinstance(x, Val)
            and str(dtype)
            == {F32: "torch.float32", I64: "torch.int64", I1: "torch.bool"}.get(x.dtype)
        )
    ):
        if isinstance(x, Val) and x.dtype != F32 and dtype == torch.float32:
            fn = "uitofp" if x.dtype == I1 else "sitofp"
            return im.ew([x], lambda a: im.f.op(f"arith.{fn}", [a], [im.t_f32])[0])
        im.fail(f"a cast to {dtype} is not supported (the program computes in float32)")
    return x


def _identity(im, x, *args, **kwargs):
    return x


# -- reductions and normalizations ----------------------------------------------


def _dims(x, dims):
    r = _rank(x)
    if dims is None or dims == []:
        return list(range(r))
    return sorted({_dim(d, r) for d in ([dims] if isinstance(dims, int) else dims)})


def _sum(im, x, dims=None, keepdim=False, dtype=None):
    x = im.tensor(x)
    dims = _dims(x, dims)
    r = im.reduce(x, dims)
    if keepdim:
        r = im.keepdim(r, [1 if d in dims else n for d, n in enumerate(x.shape)])
    return r


def _mean(im, x, dims=None, keepdim=False, dtype=None):
    x = im.tensor(x)
    dims = _dims(x, dims)
    count = 1
    for d in dims:
        count *= x.shape[d]
    s = _sum(im, x, dims, keepdim)
    return im.ew([s], lambda a: im.a("mulf", a, im.c(1.0 / count)))


def _keep(x, d):
    return [1 if i == d else n for i, n in enumerate(x.shape)]


def _exp_sum(im, x, dim):
    """(x, max over dim, exp(x - max), the sum of those): both softmaxes'
    shared steps, the reduced values kept as unit dims."""
    x = im.tensor(x)
    d = _dim(dim, _rank(x))
    m = im.keepdim(im.reduce(x, [d], "maximumf", -3.0e38), _keep(x, d))
    e = im.ew([x, m], lambda a, b: im.mth("exp", im.a("subf", a, b)))
    z = im.keepdim(im.reduce(e, [d]), _keep(x, d))
    return x, m, e, z


def _softmax(im, x, dim, half_to_float=False):
    _, _, e, z = _exp_sum(im, x, dim)
    return im.ew([e, z], lambda a, b: im.a("divf", a, b))


def _softmax_backward(im, grad, out, dim, input_dtype=None):
    out = im.tensor(out)
    d = _dim(dim, _rank(out))
    go = im.ew([grad, out], lambda a, b: im.a("mulf", a, b))
    s = im.keepdim(im.reduce(go, [d]), _keep(out, d))
    return im.ew([out, grad, s], lambda y, g, t: im.a("mulf", y, im.a("subf", g, t)))


def _log_softmax(im, x, dim, half_to_float=False):
    x, m, _, z = _exp_sum(im, x, dim)
    return im.ew([x, m, z], lambda a, b, s: im.a("subf", im.a("subf", a, b), im.mth("log", s)))


def _log_softmax_backward(im, grad, out, dim, input_dtype=None):
    out = im.tensor(out)
    d = _dim(dim, _rank(out))
    s = im.keepdim(im.reduce(grad, [d]), _keep(out, d))
    return im.ew([grad, out, s], lambda g, y, t: im.a("subf", g, im.a("mulf", im.mth("exp", y), t)))


def _layer_norm(im, x, normalized_shape, weight=None, bias=None, eps=1e-5):
    x = im.tensor(x)
    k = len(normalized_shape)
    r = _rank(x)
    dims = list(range(r - k, r))
    inv = 1.0 / float(math.prod(normalized_shape))
    stat_shape = [1 if d in dims else n for d, n in enumerate(x.shape)]
    mean = im.keepdim(im.ew([im.reduce(x, dims)], lambda s: im.a("mulf", s, im.c(inv))), stat_shape)
    xc = im.ew([x, mean], lambda a, b: im.a("subf", a, b))
    var = im.reduce(xc, dims, square=True)
    rstd = im.keepdim(
        im.ew(
            [var], lambda v: im.mth("rsqrt", im.a("addf", im.a("mulf", v, im.c(inv)), im.c(eps)))
        ),
        stat_shape,
    )
    out = im.ew([xc, rstd], lambda a, b: im.a("mulf", a, b))
    if weight is not None:
        out = im.ew([out, weight], lambda a, b: im.a("mulf", a, b))
    if bias is not None:
        out = im.ew([out, bias], lambda a, b: im.a("addf", a, b))
    return out, mean, rstd


def _layer_norm_backward(im, dout, x, normalized_shape, mean, rstd, weight, bias, output_mask):
    x = im.tensor(x)
    k = len(normalized_shape)
    r = _rank(x)
    dims = list(range(r - k, r))
    rows = list(range(r - k))
    inv = 1.0 / float(math.prod(normalized_shape))
    stat_shape = [1 if d in dims else n for d, n in enumerate(x.shape)]
    xhat = im.ew([x, mean, rstd], lambda a, m, s: im.a("mulf", im.a("subf", a, m), s))
    dx = dw = db = None
    if output_mask[1] and weight is not None:
        dw = im.reduce(im.ew([dout, xhat], lambda a, b: im.a("mulf", a, b)), rows)
    if output_mask[2] and bias is not None:
        db = im.reduce(dout, rows)
    if output_mask[0]:
        dxhat = (
            im.ew([dout, weight], lambda a, b: im.a("mulf", a, b))
            if weight is not None
            else im.tensor(dout)
        )
        s1 = im.keepdim(im.reduce(dxhat, dims), stat_shape)
        s2 = im.keepdim(
            im.reduce(im.ew([dxhat, xhat], lambda a, b: im.a("mulf", a, b)), dims), stat_shape
        )

        def body(d, xh, t1, t2, s):
            w = im.a(
                "subf",
                im.a("subf", d, im.a("mulf", t1, im.c(inv))),
                im.a("mulf", xh, im.a("mulf", t2, im.c(inv))),
            )
            return im.a("mulf", w, s)

        dx = im.ew([dxhat, xhat, s1, s2, rstd], body)
    return dx, dw, db


# -- losses ---------------------------------------------------------------------


def _nll_checks(im, x, weight, reduction):
    if weight is not None:
        im.fail("nll_loss with class weights is not supported")
    if _rank(x) != 2:
        im.fail(f"nll_loss of a {_rank(x)}-d input is not supported (a [batch, classes] input is)")
    if reduction not in (1, 2):
        im.fail("nll_loss with reduction='none' is not supported ('mean' and 'sum' are)")


def _index_is(im, t, ignore):
    """Body: (the class loop's index == target, target != ignore_index)."""
    j = im.f.op("linalg.index", [], [im.t_index], {"dim": im.attr("1 : i64")})[0]
    ti = im.f.op("arith.index_cast", [t], [im.t_index])[0]
    hit = im.f.arith("cmpi", j, ti, predicate="eq")
    keep = im.f.arith("cmpi", t, im.c(ignore, I64), predicate="ne")
    return hit, keep


def _nll_loss(im, x, target, weight, reduction, ignore_index):
    x, target = im.tensor(x), im.tensor(target)
    _nll_checks(im, x, weight, reduction)
    n, c = x.shape

    def pick(a, t):
        hit, keep = _index_is(im, t, ignore_index)
        return im.select(im.a("andi", hit, keep), a, im.c(0.0))

    picked = im.generic(
        [n, c], [(x, [0, 1]), (target, [0])], [], pick, reduce="addf", index_loops=(1,)
    )

    def count(t):
        keep = im.f.arith("cmpi", t, im.c(ignore_index, I64), predicate="ne")
        return im.select(keep, im.c(1.0), im.c(0.0))

    total = im.generic([n], [(target, [0])], [], count, reduce="addf")
    if reduction == 2:
        loss = im.ew([picked], lambda p: im.a("negf", p))
    else:
        loss = im.ew([picked, total], lambda p, w: im.a("negf", im.a("divf", p, w)))
    return loss, total


def _nll_loss_backward(im, grad, x, target, weight, reduction, ignore_index, total_weight):
    x, target = im.tensor(x), im.tensor(target)
    _nll_checks(im, x, weight, reduction)
    n, c = x.shape
    ops = [(target, [0]), (im.tensor(grad), []), (im.tensor(total_weight), [])]

    def body(t, g, w):
        hit, keep = _index_is(im, t, ignore_index)
        v = im.a("negf", g) if reduction == 2 else im.a("negf", im.a("divf", g, w))
        return im.select(im.a("andi", hit, keep), v, im.c(0.0))

    return im.generic([n, c], ops, [0, 1], body, index_loops=(1,))


def _mse_loss(im, x, y, reduction=1):
    sq = im.ew([x, y], lambda a, b: im.a("mulf", im.a("subf", a, b), im.a("subf", a, b)))
    if reduction == 0:
        return sq
    total = im.reduce(sq, list(range(len(sq.shape))))
    if reduction == 2:
        return total
    n = float(math.prod(sq.shape))
    return im.ew([total], lambda t: im.a("mulf", t, im.c(1.0 / n)))


def _mse_loss_backward(im, grad, x, y, reduction=1):
    k = 2.0 / float(math.prod(x.shape)) if reduction == 1 else 2.0
    return im.ew(
        [grad, x, y], lambda g, a, b: im.a("mulf", im.a("mulf", im.a("subf", a, b), g), im.c(k))
    )


# -- products -------------------------------------------------------------------


def _folded(lazy, node):
    """(node, transposed?) of a product operand: a chain of the `lazy`
    transposes (aten.t, transposes of the last two dims) is folded into the
    product."""
    flip = False
    while node in lazy:
        flip, node = not flip, node.args[0]
    return node, flip


def _transposed(im, node):
    return _folded(im.lazy, node)


def _product(im, xn, yn):
    xn, tx = _transposed(im, xn)
    yn, ty = _transposed(im, yn)
    x, y = im.get(xn), im.get(yn)
    if isinstance(x, Transposed):
        x, tx = x.inner, not tx
    if isinstance(y, Transposed):
        y, ty = y.inner, not ty
    lead = 0
    if (
        isinstance(x, Collapsed)
        and isinstance(y, Collapsed)
        and x.inner.shape[: x.lead] == y.inner.shape[: y.lead]
    ):
        # A batched product of views that merged the same leading dims: the
        # product batches over the dims themselves.
        lead = x.lead
        x, y = x.inner, y.inner
    x, y = im.tensor(x), im.tensor(y)
    if x.dtype != F32 or y.dtype != F32:
        im.fail("products of non-float32 tensors are not supported")
    rank = _rank(x)
    if _rank(y) != rank or rank < 2:
        im.fail(f"a product of {_rank(x)}-d and {_rank(y)}-d tensors is not supported")
    batch = list(range(rank - 2))
    m, k, n = rank - 2, rank - 1, rank
    xs = [x.shape[d] for d in batch] + (
        [x.shape[-1], x.shape[-2]] if tx else [x.shape[-2], x.shape[-1]]
    )
    ys = [y.shape[-1], y.shape[-2]] if ty else [y.shape[-2], y.shape[-1]]
    if [y.shape[d] for d in batch] != [x.shape[d] for d in batch] or ys[0] != xs[-1]:
        im.fail(f"a product of shapes {list(x.shape)} and {list(y.shape)} is not supported")
    loops = xs + [ys[1]]
    xl = batch + ([k, m] if tx else [m, k])
    yl = batch + ([n, k] if ty else [k, n])
    splits = im.decide(loops, [(x, xl), (y, yl)])
    xv = im.conform(x, [splits[l] for l in xl])
    yv = im.conform(y, [splits[l] for l in yl])
    out = [loops[l] for l in batch] + [loops[m], loops[n]]
    out_splits = [splits[l] for l in batch] + [splits[m], splits[n]]
    r = im.f.matmul(xv, yv, transpose_x=tx, transpose_y=ty)
    want = im.ty(out, F32, out_splits)
    if list(r.type.shape) != list(want.shape):
        im.fail(f"product shapes disagree: {list(r.type.shape)} against {list(want.shape)}")
    v = Val(r, out, F32, out_splits)
    if lead:
        return Collapsed(v, [math.prod(out[:lead])] + out[lead:], lead)
    return v


def _mm(im, node):
    fused = im.fusions.get(node)
    if fused is not None:
        return _matmul_grad(im, node, fused)
    return _product(im, node.args[0], node.args[1])


def canonical_product(lazy, node):
    """(x, y, transpose_x, transpose_y) of a product node, its operands'
    transposes folded."""
    i, j = {"aten.addmm.default": (1, 2)}.get(_aten_name(node), (0, 1))
    (x, tx), (y, ty) = _folded(lazy, node.args[i]), _folded(lazy, node.args[j])
    return x, y, tx, ty


def _aten_name(node):
    t = node.target
    return (
        f"aten.{t.overloadpacket.__name__}.{t._overloadname}"
        if hasattr(t, "overloadpacket")
        else str(t)
    )


def find_matmul_grads(lazy, nodes):
    """{product node: (x, w, g, transpose_w, dx node, dw node, dw node
    holds dw transposed)} for each 2-d forward product x * op(w) whose two
    backward products (dx = g * op(w)^T and dw or its transpose from x and
    g) are in the graph: they become one dist.matmul_grad, the op the
    matmul-grad overlap pass splits."""
    canon = {}
    for n in nodes:
        if n.op == "call_function" and _aten_name(n) in ("aten.mm.default", "aten.addmm.default"):
            if len(n.meta["tensor_meta"].shape) == 2:
                canon[n] = canonical_product(lazy, n)
    by_form = {}
    for n, c in canon.items():
        by_form.setdefault(c, n)
    fused = {}
    for f, (x, w, tx, tw) in canon.items():
        if tx:
            continue
        for p1, (g, w1, tg, tw1) in canon.items():
            if (
                p1 is f
                or w1 is not w
                or tg
                or tw1 == tw
                or _aten_name(p1) != "aten.mm.default"
                or p1 in fused
            ):
                continue
            for form, transposed in (((x, g, True, False), tw), ((g, x, True, False), not tw)):
                p2 = by_form.get(form)
                if (
                    p2 is not None
                    and p2 not in fused
                    and p2 is not f
                    and _aten_name(p2) == "aten.mm.default"
                ):
                    rec = (x, w, g, tw, p1, p2, transposed)
                    fused[p1] = fused[p2] = rec
                    break
            if p1 in fused:
                break
    return fused


def _matmul_grad(im, node, rec):
    xn, wn, gn, tw, p1, p2, transposed = rec
    if p1 in im.vals and p2 in im.vals:
        return im.vals[node]
    x, w, g = (im.tensor(im.get(n)) for n in (xn, wn, gn))
    m, k = x.shape
    n = w.shape[0] if tw else w.shape[1]
    wl = [2, 1] if tw else [1, 2]
    splits = im.decide([m, k, n], [(x, [0, 1]), (w, wl), (g, [0, 2])])
    xv = im.conform(x, [splits[0], splits[1]])
    wv = im.conform(w, [splits[l] for l in wl])
    gv = im.conform(g, [splits[0], splits[2]])
    dx, dw = im.f.matmul_grad(xv, wv, gv, transpose_y=tw, x_grad_dist=None, y_grad_dist=None)
    dxv = Val(dx, x.shape, F32, [splits[0], splits[1]])
    dwv = Val(dw, w.shape, F32, [splits[l] for l in wl])
    im.vals[p1] = dxv
    im.vals[p2] = Transposed(dwv) if transposed else dwv
    return im.vals[node]


def _addmm(im, node):
    bias = im.get(node.args[0])
    beta = node.kwargs.get("beta", 1)
    alpha = node.kwargs.get("alpha", 1)
    p = _product(im, node.args[1], node.args[2])
    return im.ew(
        [p, bias],
        lambda a, b: im.a(
            "addf",
            im.a("mulf", a, im.c(alpha)) if alpha != 1 else a,
            im.a("mulf", b, im.c(beta)) if beta != 1 else b,
        ),
    )


# -- embeddings -----------------------------------------------------------------


def _embedding(im, node):
    w, ids = im.tensor(im.get(node.args[0])), im.tensor(im.get(node.args[1]))
    if len(node.args) > 2 and node.args[2] not in (-1, None):
        im.fail("nn.Embedding with padding_idx is not supported")
    if _rank(w) != 2 or ids.dtype != I64:
        im.fail("an embedding needs a 2-d table and int64 ids")
    col = w.splits[1]
    need_ids = [None if a == col or a == w.splits[0] else a for a in ids.splits]
    ids_v = im.conform(ids, need_ids)
    shape = list(ids.shape) + [w.shape[1]]
    splits = need_ids + [col]
    r = im.f.embedding(ids_v, w.value)
    im.lookups[node.args[1]] = w
    return Val(r, shape, F32, splits)


def _embedding_backward(im, node):
    grad = im.tensor(im.get(node.args[0]))
    ids_node = node.args[1]
    w = im.lookups.get(ids_node)
    if w is None:
        im.fail("embedding_dense_backward without the forward lookup of the same ids")
    if node.args[3] not in (-1, None) or node.args[4]:
        im.fail("nn.Embedding with padding_idx or scale_grad_by_freq is not supported")
    ids = im.tensor(im.get(ids_node))
    col = w.splits[1]
    need_ids = [None if a == col or a == w.splits[0] else a for a in ids.splits]
    ids_v = im.conform(ids, need_ids)
    g = im.conform(grad, need_ids + [col])
    t = im.ty(w.shape, F32, w.splits)
    r = im.f.op("dist.embedding_grad", [ids_v, w.value, g], [t])[0]
    return Val(r, w.shape, F32, w.splits)


# -- views ----------------------------------------------------------------------


def _view(im, x, shape):
    return im.reshape(x, list(shape))


def _reshape_alias(im, x, shape, strides):
    return im.reshape(x, list(shape))


def _transpose(im, x, d0, d1):
    r = _rank(x)
    perm = list(range(r))
    a, b = _dim(d0, r), _dim(d1, r)
    perm[a], perm[b] = perm[b], perm[a]
    if r == 2 and a != b:
        return _t(im, x)
    return im.permute(x, perm)


def _t(im, x):
    """A 2-d transpose is built only where something reads it whole (a
    product reads it through its transpose attribute; t(t(x)) is x)."""
    if _rank(x) != 2:
        return x
    if isinstance(x, Transposed):
        return x.inner
    return Transposed(im.tensor(x))


def _permute(im, x, dims):
    return im.permute(x, [_dim(d, _rank(x)) for d in dims])


def _unsqueeze(im, x, dim):
    shape = list(x.shape)
    shape.insert(_dim(dim, len(shape) + 1), 1)
    return im.reshape(x, shape)


def _squeeze(im, x, dim=None):
    if dim is None:
        return im.reshape(x, [n for n in x.shape if n != 1])
    d = _dim(dim, _rank(x))
    if x.shape[d] != 1:
        return x
    return im.reshape(x, [n for i, n in enumerate(x.shape) if i != d])


def _expand(im, x, sizes, implicit=False):
    return im.broadcast_to(x, list(sizes))


def _split(im, x, size, dim=0):
    x = im.tensor(x)
    d = _dim(dim, _rank(x))
    sizes = []
    left = x.shape[d]
    while left > 0:
        sizes.append(min(size, left))
        left -= size
    return _split_with_sizes(im, x, sizes, d)


def _split_with_sizes(im, x, sizes, dim=0):
    x = im.tensor(x)
    d = _dim(dim, _rank(x))
    out, start = [], 0
    for n in sizes:
        out.append(im.slice(x, d, start, n))
        start += n
    return tuple(out)


def _slice(im, x, dim=0, start=None, end=None, step=1):
    x = im.tensor(x)
    d = _dim(dim, _rank(x))
    n = x.shape[d]
    start = 0 if start is None else (start + n if start < 0 else min(start, n))
    end = n if end is None else (end + n if end < 0 else min(end, n))
    if step != 1:
        im.fail("slices with a step are not supported")
    if start == 0 and end == n:
        return x
    return im.slice(x, d, start, max(end - start, 0))


def _select(im, x, dim, index):
    x = im.tensor(x)
    d = _dim(dim, _rank(x))
    s = im.slice(x, d, index + x.shape[d] if index < 0 else index, 1)
    return im.reshape(s, [n for i, n in enumerate(s.shape) if i != d])


def _cat(im, xs, dim=0):
    xs = [im.tensor(x) for x in xs]
    d = _dim(dim, _rank(xs[0]))
    splits = list(xs[0].splits)
    splits[d] = None
    values = [im.conform(x, splits) for x in xs]
    shape = list(xs[0].shape)
    shape[d] = sum(x.shape[d] for x in xs)
    t = im.ty(shape, xs[0].dtype, splits)
    r = im.f.op("tensor.concat", values, [t], {"dim": im.attr(f"{d} : i64")})[0]
    return Val(r, shape, xs[0].dtype, splits)


def _refuse(why):
    def lower(im, *args, **kwargs):
        im.fail(why)

    return lower


# Lowerings that take (importer, *args, **kwargs); those taking the node are
# in NODE_LOWERINGS.
LOWERINGS = {
    "aten.add.Tensor": _binary("addf"),
    "aten.add.Scalar": _binary("addf"),
    "aten.sub.Tensor": _binary("subf"),
    "aten.sub.Scalar": _binary("subf"),
    "aten.rsub.Scalar": _rsub,
    "aten.rsub.Tensor": _rsub,
    "aten.mul.Tensor": _binary("mulf"),
    "aten.mul.Scalar": _binary("mulf"),
    "aten.div.Tensor": _binary("divf"),
    "aten.div.Scalar": _binary("divf"),
    "aten.maximum.default": _binary("maximumf"),
    "aten.minimum.default": _binary("minimumf"),
    "aten.neg.default": _unary(lambda im, a: im.a("negf", a)),
    "aten.exp.default": _unary(lambda im, a: im.mth("exp", a)),
    "aten.log.default": _unary(lambda im, a: im.mth("log", a)),
    "aten.sqrt.default": _unary(lambda im, a: im.mth("sqrt", a)),
    "aten.rsqrt.default": _unary(lambda im, a: im.mth("rsqrt", a)),
    "aten.tanh.default": _unary(lambda im, a: im.mth("tanh", a)),
    "aten.abs.default": _unary(lambda im, a: im.mth("absf", a)),
    "aten.reciprocal.default": _unary(lambda im, a: im.a("divf", im.c(1.0), a)),
    "aten.sigmoid.default": _unary(_sigmoid),
    "aten.relu.default": _relu,
    "aten.tanh_backward.default": _tanh_backward,
    "aten.silu.default": _unary(_silu_body),
    "aten.silu_backward.default": _silu_backward,
    "aten.softplus.default": _softplus,
    "aten.softplus_backward.default": _softplus_backward,
    "aten.leaky_relu.default": _leaky_relu,
    "aten.leaky_relu_backward.default": _leaky_relu_backward,
    "aten.sigmoid_backward.default": _sigmoid_backward,
    "aten.sgn.default": _unary(_sign),
    "aten.sign.default": _unary(_sign),
    "aten.gt.Tensor": _compare("ogt"),
    "aten.gt.Scalar": _compare("ogt"),
    "aten.ge.Tensor": _compare("oge"),
    "aten.ge.Scalar": _compare("oge"),
    "aten.lt.Tensor": _compare("olt"),
    "aten.lt.Scalar": _compare("olt"),
    "aten.le.Tensor": _compare("ole"),
    "aten.le.Scalar": _compare("ole"),
    "aten.eq.Tensor": _compare("oeq"),
    "aten.eq.Scalar": _compare("oeq"),
    "aten.ne.Tensor": _compare("une"),
    "aten.ne.Scalar": _compare("une"),
    "aten.logical_not.default": _logical_not,
    "aten.slice_backward.default": _slice_backward,
    "aten.select_backward.default": _select_backward,
    "aten.new_zeros.default": _new_zeros,
    "aten.threshold_backward.default": _threshold_backward,
    "aten.pow.Tensor_Scalar": _pow,
    "aten.masked_fill.Scalar": _masked_fill,
    "aten.masked_fill.Tensor": _masked_fill,
    "aten.where.self": _where,
    "aten.addcmul.default": _addcmul,
    "aten.addcdiv.default": _addcdiv,
    "aten.gelu.default": _gelu,
    "aten.gelu_backward.default": _gelu_backward,
    "aten._to_copy.default": _to_copy,
    "aten.clone.default": _identity,
    "aten.detach.default": _identity,
    "aten.alias.default": _identity,
    "aten.lift_fresh_copy.default": _identity,
    "aten.contiguous.default": _identity,
    "aten.sum.dim_IntList": _sum,
    "aten.sum.default": _sum,
    "aten.mean.dim": _mean,
    "aten.mean.default": _mean,
    "aten._softmax.default": _softmax,
    "aten._softmax_backward_data.default": _softmax_backward,
    "aten._log_softmax.default": _log_softmax,
    "aten._log_softmax_backward_data.default": _log_softmax_backward,
    "aten.native_layer_norm.default": _layer_norm,
    "aten.native_layer_norm_backward.default": _layer_norm_backward,
    "aten.mse_loss.default": _mse_loss,
    "aten.mse_loss_backward.default": _mse_loss_backward,
    "aten.nll_loss_forward.default": _nll_loss,
    "aten.nll_loss_backward.default": _nll_loss_backward,
    "aten.view.default": _view,
    "aten._unsafe_view.default": _view,
    "aten.reshape.default": _view,
    "aten._reshape_alias.default": _reshape_alias,
    "aten.t.default": _t,
    "aten.transpose.int": _transpose,
    "aten.permute.default": _permute,
    "aten.unsqueeze.default": _unsqueeze,
    "aten.squeeze.dim": _squeeze,
    "aten.squeeze.default": _squeeze,
    "aten.expand.default": _expand,
    "aten.split.Tensor": _split,
    "aten.split_with_sizes.default": _split_with_sizes,
    "aten.slice.Tensor": _slice,
    "aten.select.int": _select,
    "aten.cat.default": _cat,
    "aten.native_dropout.default": _refuse(
        "nn.Dropout in training mode: torch draws its masks from its own generator, which a "
        "compiled program cannot reproduce; import the model in eval() mode (or with p=0), or "
        "write dist's dropout (dist.dropout) into the program"
    ),
    "aten.bernoulli_.float": _refuse(
        "random ops (bernoulli) are not supported: their draws cannot match torch's"
    ),
    "aten.bernoulli.default": _refuse(
        "random ops (bernoulli) are not supported: their draws cannot match torch's"
    ),
}

NODE_LOWERINGS = {
    "aten.mm.default": _mm,
    "aten.bmm.default": _mm,
    "aten.addmm.default": _addmm,
    "aten.embedding.default": _embedding,
    "aten.embedding_dense_backward.default": _embedding_backward,
}

# Ops that make a tensor from its shape only: folded to constants.
LIKE = {
    "aten.ones_like.default": 1.0,
    "aten.zeros_like.default": 0.0,
    "aten.empty_like.default": 0.0,
}


def in_place(name):
    """The functional op of an in-place one (aten.add_.Tensor -> aten.add.Tensor)."""
    head, _, overload = name.rpartition(".")
    if head.endswith("_") and not head.endswith("__"):
        return head[:-1] + "." + overload
    return None
