#!/usr/bin/env python3
"""LayerNorm, softmax and GeLU, forward and backward, written with linalg
and math on distributed tensors, on MPI, against numpy.

  linalg_layers.py [--print]

Each case runs on a [2, 2] mesh ("dp", "mp") with its input split by rows
(dp), by columns (mp), or both. The rules (LinalgRuleModel.cpp) accept the
programs as written: a row reduction over split columns is a partial
value, completed by the dist.allreduce the program has before the
elementwise step that needs it (rules-linalg-invalid.mlir has the
rejections). Each process compares its block of the result with the block
of numpy's global result (no gather) and prints its count of elements off
by more than 1e-4 relative; all must be zero.
"""
import argparse

import numpy as np

import dist
import textir
from reshard_matrix import Program

ROWS, COLS, EPS = 4, 8, 1e-5
MESH = [2, 2]


def dense(a):
    rows = ", ".join("[" + ", ".join(f"{v:.8e}" for v in r) + "]" for r in a)
    return f"dense<[{rows}]>"


class Layers(Program):
    """A Program (reshard_matrix.py) that writes linalg on encoded tensors."""

    def constant(self, name, value):
        self.emit(f"{name} = arith.constant {dense(value)} : {self.ttype(self.shape)}")

    def t(self, dims, partial=None):
        return self.ttype(self.local(dims), self.enc(dims, partial or {}))

    def t1(self, dims, partial=None):
        """The type of a row vector (one value per row) of `dims`."""
        local = [self.local(dims)[0]]
        enc = "#dist.tensor<#mesh, [" + str(dims[0])
        enc += "]" + (
            ", partial = ["
            + ", ".join(f"{a} : {k}" for a, k in sorted((partial or {}).items()))
            + "]"
            if partial
            else ""
        )
        return f"tensor<{local[0]}xf32, {enc}>>"

    def empty(self, ty):
        e = self.fresh("e")
        self.emit(f"{e} = tensor.empty() : {ty}")
        return e

    def map(self, inputs, ty, body):
        """linalg.map of `inputs` (values of type `ty`); `body` gets the
        block argument names and returns (lines, result)."""
        args = [f"%a{i}" for i in range(len(inputs))]
        lines, result = body(*args)
        v = self.fresh("m")
        self.emit(
            f"{v} = linalg.map ins({', '.join(inputs)} : "
            f"{', '.join([ty] * len(inputs))}) outs({self.empty(ty)} : {ty})"
        )
        self.emit(f"    ({', '.join(a + ': f32' for a in args)}, %out: f32) {{")
        for line in lines:
            self.emit("      " + line)
        self.emit(f"      linalg.yield {result} : f32")
        self.emit("    }")
        return v

    def rows(self, x, ty, vec, vty, body):
        """linalg.generic over (i, j) of the matrix `x` and the row vector
        `vec`, elementwise in the result."""
        out = self.empty(ty)
        v = self.fresh("g")
        self.emit(
            f"{v} = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, "
            f"affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], "
            f'iterator_types = ["parallel", "parallel"]}}'
        )
        self.emit(f"    ins({x}, {vec} : {ty}, {vty}) outs({out} : {ty}) {{")
        self.emit("  ^bb0(%a: f32, %b: f32, %o: f32):")
        lines, result = body("%a", "%b")
        for line in lines:
            self.emit("    " + line)
        self.emit(f"    linalg.yield {result} : f32")
        self.emit(f"  }} -> {ty}")
        return v

    def row_reduce(self, x, dims, kind):
        """The row reduction of `x` (sum or max), complete: over split
        columns its partial value is allreduced."""
        axis = dims[1]
        partial = {axis: kind} if axis >= 0 else {}
        vty = self.t1(dims, partial)
        c = self.fresh("init")
        init = "0xFF800000" if kind == "max" else "0.0"
        self.emit(f"{c} = arith.constant {init} : f32")
        e = self.empty(vty)
        f = self.fresh("fill")
        self.emit(f"{f} = linalg.fill ins({c} : f32) outs({e} : {vty}) -> {vty}")
        r = self.fresh("red")
        op = "maximumf" if kind == "max" else "addf"
        self.emit(
            f"{r} = linalg.reduce ins({x} : {self.t(dims)}) outs({f} : {vty}) dimensions = [1]"
        )
        self.emit(
            f"  (%in: f32, %acc: f32) {{\n    %c = arith.{op} %in, %acc : f32\n"
            "    linalg.yield %c : f32\n  }"
        )
        if axis < 0:
            return r
        done = self.fresh("done")
        self.emit(
            f"{done} = dist.allreduce {r} on #mesh axes = [{axis}] reduce = {kind} "
            f": {vty} -> {self.t1(dims)}"
        )
        return done

    def check_close(self, value, dims, expected):
        """The count of elements of `value` off from this process's block of
        the global constant `expected` by more than 1e-4 relative."""
        ty = self.t(dims)
        plain = self.ttype(self.local(dims))
        p = self.fresh("p")
        self.emit(f"{p} = tensor.cast {value} : {ty} to {plain}")
        want = self.block(dims, expected)
        bad = self.map(
            [p, want],
            plain,
            lambda a, b: (
                [
                    f"%d = arith.subf {a}, {b} : f32",
                    "%ad = math.absf %d : f32",
                    f"%ab = math.absf {b} : f32",
                    "%one = arith.constant 1.0 : f32",
                    "%sc = arith.addf %ab, %one : f32",
                    "%tol = arith.constant 1.0e-4 : f32",
                    "%lim = arith.mulf %sc, %tol : f32",
                    "%off = arith.cmpf ogt, %ad, %lim : f32",
                    "%r = arith.uitofp %off : i1 to f32",
                ],
                "%r",
            ),
        )
        return self.sum_all(bad, plain)


def softmax(p, x, dims):
    ty, vty = p.t(dims), p.t1(dims)
    m = p.row_reduce(x, dims, "max")
    e = p.rows(
        x,
        ty,
        m,
        vty,
        lambda a, b: ([f"%s = arith.subf {a}, {b} : f32", "%x = math.exp %s : f32"], "%x"),
    )
    s = p.row_reduce(e, dims, "sum")
    return p.rows(e, ty, s, vty, lambda a, b: ([f"%q = arith.divf {a}, {b} : f32"], "%q"))


def softmax_backward(p, y, g, dims):
    ty, vty = p.t(dims), p.t1(dims)
    gy = p.map([g, y], ty, lambda a, b: ([f"%r = arith.mulf {a}, {b} : f32"], "%r"))
    s = p.row_reduce(gy, dims, "sum")
    d = p.rows(g, ty, s, vty, lambda a, b: ([f"%r = arith.subf {a}, {b} : f32"], "%r"))
    return p.map([y, d], ty, lambda a, b: ([f"%r = arith.mulf {a}, {b} : f32"], "%r"))


def scale_rows(p, v, dims, factor):
    return p.map(
        [v],
        p.t1(dims),
        lambda a: (
            [f"%k = arith.constant {factor:.8e} : f32", f"%r = arith.mulf {a}, %k : f32"],
            "%r",
        ),
    )


def layernorm(p, x, dims):
    """(x - mean) * rsqrt(var + eps), and x-hat and rsqrt for the backward."""
    ty, vty = p.t(dims), p.t1(dims)
    mean = scale_rows(p, p.row_reduce(x, dims, "sum"), dims, 1.0 / COLS)
    xc = p.rows(x, ty, mean, vty, lambda a, b: ([f"%r = arith.subf {a}, {b} : f32"], "%r"))
    sq = p.map([xc], ty, lambda a: ([f"%r = arith.mulf {a}, {a} : f32"], "%r"))
    var = scale_rows(p, p.row_reduce(sq, dims, "sum"), dims, 1.0 / COLS)
    rstd = p.map(
        [var],
        vty,
        lambda a: (
            [
                f"%e = arith.constant {EPS:.8e} : f32",
                f"%s = arith.addf {a}, %e : f32",
                "%r = math.rsqrt %s : f32",
            ],
            "%r",
        ),
    )
    y = p.rows(xc, ty, rstd, vty, lambda a, b: ([f"%r = arith.mulf {a}, {b} : f32"], "%r"))
    return y, rstd


def layernorm_backward(p, xhat, rstd, g, dims):
    """rstd * (g - mean(g) - xhat * mean(g * xhat))."""
    ty, vty = p.t(dims), p.t1(dims)
    mg = scale_rows(p, p.row_reduce(g, dims, "sum"), dims, 1.0 / COLS)
    gx = p.map([g, xhat], ty, lambda a, b: ([f"%r = arith.mulf {a}, {b} : f32"], "%r"))
    mgx = scale_rows(p, p.row_reduce(gx, dims, "sum"), dims, 1.0 / COLS)
    t = p.rows(xhat, ty, mgx, vty, lambda a, b: ([f"%r = arith.mulf {a}, {b} : f32"], "%r"))
    u = p.map([g, t], ty, lambda a, b: ([f"%r = arith.subf {a}, {b} : f32"], "%r"))
    v = p.rows(u, ty, mg, vty, lambda a, b: ([f"%r = arith.subf {a}, {b} : f32"], "%r"))
    return p.rows(v, ty, rstd, vty, lambda a, b: ([f"%r = arith.mulf {a}, {b} : f32"], "%r"))


GELU_C, GELU_K = 0.7978845608028654, 0.044715


def gelu_lines(a):
    return [
        f"%v2 = arith.mulf {a}, {a} : f32",
        f"%v3 = arith.mulf %v2, {a} : f32",
        f"%k = arith.constant {GELU_K:.8e} : f32",
        "%kv3 = arith.mulf %k, %v3 : f32",
        f"%in = arith.addf {a}, %kv3 : f32",
        f"%c = arith.constant {GELU_C:.8e} : f32",
        "%u = arith.mulf %c, %in : f32",
        "%t = math.tanh %u : f32",
        "%one = arith.constant 1.0 : f32",
        "%half = arith.constant 0.5 : f32",
        "%opt = arith.addf %one, %t : f32",
    ]


def gelu(p, x, dims):
    return p.map(
        [x],
        p.t(dims),
        lambda a: (
            gelu_lines(a)
            + [f"%hx = arith.mulf %half, {a} : f32", "%r = arith.mulf %hx, %opt : f32"],
            "%r",
        ),
    )


def gelu_backward(p, x, g, dims):
    """g * (0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 k x^2))."""
    return p.map(
        [x, g],
        p.t(dims),
        lambda a, b: (
            gelu_lines(a)
            + [
                "%first = arith.mulf %half, %opt : f32",
                "%t2 = arith.mulf %t, %t : f32",
                "%omt = arith.subf %one, %t2 : f32",
                "%three = arith.constant 3.0 : f32",
                "%k3 = arith.mulf %three, %k : f32",
                "%k3v2 = arith.mulf %k3, %v2 : f32",
                "%inner = arith.addf %one, %k3v2 : f32",
                "%cd = arith.mulf %c, %inner : f32",
                "%s1 = arith.mulf %omt, %cd : f32",
                f"%hx = arith.mulf %half, {a} : f32",
                "%second = arith.mulf %hx, %s1 : f32",
                "%d = arith.addf %first, %second : f32",
                f"%r = arith.mulf {b}, %d : f32",
            ],
            "%r",
        ),
    )


def numpy_cases(X, G):
    m = X.max(axis=1, keepdims=True)
    e = np.exp(X - m)
    Y = e / e.sum(axis=1, keepdims=True)
    dsm = Y * (G - (G * Y).sum(axis=1, keepdims=True))
    mu = X.mean(axis=1, keepdims=True)
    xc = X - mu
    rstd = 1.0 / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + EPS)
    xhat = xc * rstd
    dln = rstd * (G - G.mean(axis=1, keepdims=True) - xhat * (G * xhat).mean(axis=1, keepdims=True))
    t = np.tanh(GELU_C * (X + GELU_K * X**3))
    gl = 0.5 * X * (1 + t)
    dgl = G * (0.5 * (1 + t) + 0.5 * X * (1 - t * t) * GELU_C * (1 + 3 * GELU_K * X * X))
    return {
        "softmax": Y,
        "softmax-backward": dsm,
        "layernorm": xhat,
        "layernorm-backward": dln,
        "gelu": gl,
        "gelu-backward": dgl,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--print", action="store_true")
    parser.add_argument("--timeout", type=int, default=300)
    args = parser.parse_args()
    shape = [ROWS, COLS]
    i, j = np.meshgrid(range(ROWS), range(COLS), indexing="ij")
    X = (((i * 5 + j * 3) % 11) - 5).astype(np.float32) / 4
    G = (((i * 3 + j * 7) % 5) - 2).astype(np.float32) / 2
    expected = numpy_cases(X.astype(np.float64), G.astype(np.float64))
    prog = Layers(MESH, [], shape)
    prog.head = '#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "mp"]>\n'
    cases = []
    for dims, label in (([0, -1], "rows"), ([-1, 1], "columns"), ([0, 1], "both")):
        for name in expected:
            prog.begin()
            prog.constant("%Xg", X)
            prog.constant("%Gg", G)
            prog.constant("%E", expected[name].astype(np.float32))
            x = prog.source(dims, {}, "%Xg")
            g = prog.source(dims, {}, "%Gg")
            if name == "softmax":
                r = softmax(prog, x, dims)
            elif name == "softmax-backward":
                r = softmax_backward(prog, softmax(prog, x, dims), g, dims)
            elif name == "layernorm":
                r, _ = layernorm(prog, x, dims)
            elif name == "layernorm-backward":
                xhat, rstd = layernorm(prog, x, dims)
                r = layernorm_backward(prog, xhat, rstd, g, dims)
            elif name == "gelu":
                r = gelu(prog, x, dims)
            else:
                r = gelu_backward(prog, x, g, dims)
            prog.end(prog.check_close(r, dims, "%E"))
            cases.append(f"{name} on {label}")
    text = prog.text()
    if args.print:
        print(text)
        return
    # The rules accept every program as written (the check runs first).
    ranks = dist.run_on_mpi(text, 4, pass_flags="--dist-verify-distributions", timeout=args.timeout)
    bad = [
        (r, cases[c], int(n))
        for r, printed in enumerate(ranks)
        for c, n in enumerate(printed[0])
        if n != 0
    ]
    for rank, case, n in bad:
        print(f"FAILED: {case}, rank {rank}: {n} elements differ from numpy")
    textir.finish(
        not bad,
        f"{'ok' if not bad else 'FAILED'}: {len(cases)} cases (LayerNorm, softmax, "
        f"GeLU, forward and backward, split by rows, columns and both) equal numpy",
    )


if __name__ == "__main__":
    main()
