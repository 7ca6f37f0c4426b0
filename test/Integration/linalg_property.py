#!/usr/bin/env python3
"""A property of the linalg rules, checked on MPI.

  linalg_property.py [--seed N] [--programs K] [--complete] [--dump FILE]

Random chains of linalg and math ops (a matmul with a randomly distributed
weight, a transpose, exp, a scale, a sum of a value with itself, a row
softmax, a row max or min subtracted from each row) on randomly distributed
8x8 inputs, some of them partial sums, on [2] and [2, 2] meshes. Each op's
result distribution is found by asking the distribution check about every
candidate, partial ones of every kind included (the one it accepts is the
rule's); when it accepts none (exp, or a max, of a partial sum), the chain
first completes the pending sums with allreduces. The programs then run on MPI, and every
process's result, completed to the global tensor by a dist.reshard, must
equal numpy's.

With --complete, each chain keeps only its inputs' encodings and loses its
allreduces, its function is marked {dist.complete}, and --dist-complete
infers the rest before it runs.
"""
import argparse
import itertools
import random
import re
import sys

import numpy as np

import dist
import textir
from reshard_matrix import Program

N = 8


def candidates(mesh_rank, rank=2, kinds=("sum",)):
    for dims, partial in textir.distributions(rank, mesh_rank):
        for k in itertools.product(kinds, repeat=len(partial)):
            yield dims, dict(zip(partial, k))


ENCODING = re.compile(r", #dist\.tensor<#mesh, \[[^\]]*\](?:, partial = \[[^\]]*\])?>")


def split_types(text):
    """`text` split at its top-level commas (types nest commas in <>)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def strip_chain(lines, sources):
    """The chain `lines` as a program annotated on its inputs only: the
    encodings of every value but `sources` removed, and the allreduces the
    chain wrote dropped (completion finds where sums must be completed)."""
    renamed, out = {}, []
    # The type of a source whose allreduce was dropped, for its uses.
    source_type = {}
    for line in lines:
        m = re.match(r"\s*(%\w+) = dist\.allreduce (%\w+) .* reduce = \w+ : (.*) -> ", line)
        if m:
            renamed[m.group(1)] = renamed.get(m.group(2), m.group(2))
            if m.group(2) in sources:
                source_type[m.group(2)] = m.group(3)
            continue
        for a, b in renamed.items():
            line = re.sub(re.escape(a) + r"\b", b, line)
        m = re.match(r"(\s*%\w+ = dist\.reshard (%\w+) : )(.*)( -> .*)", line)
        if m:
            t = (
                source_type.get(m.group(2), m.group(3))
                if m.group(2) in sources
                else ENCODING.sub("", m.group(3))
            )
            out.append(m.group(1) + t + m.group(4))
            continue

        def group(g):
            names, types = g.group(2).split(" : ", 1)
            names = [n.strip() for n in names.split(",")]
            types = split_types(types)
            types = [
                (" " + source_type[n] if n in source_type else t)
                if n in sources
                else ENCODING.sub("", t)
                for n, t in zip(names, types)
            ]
            return "\0" + g.group(1) + "(" + ", ".join(names) + " : " + ",".join(types) + ")\0"

        line = re.sub(r"\b(ins|outs)\(([^()]*)\)", group, line)
        pieces = line.split("\0")
        # Outside the operand groups only results' types remain.
        out.append("".join(p if i % 2 else ENCODING.sub("", p) for i, p in enumerate(pieces)))
    return out


class Chain(Program):
    def __init__(self, ctx, mesh, names, complete=False):
        super().__init__(mesh, [], [N, N])
        self.complete_mode = complete
        self.sources, self.source_lines = set(), set()
        self.ctx = ctx
        self.head = (
            f"#mesh = #dist.mesh<shape = [{', '.join(map(str, mesh))}], "
            f"names = [{', '.join(f'{chr(34)}{n}{chr(34)}' for n in names)}]>\n"
        )

    def source(self, dims, partial, glob="%X"):
        start = len(self.lines)
        e = super().source(dims, partial, glob)
        self.sources.add(e)
        self.source_lines.update(range(start, len(self.lines)))
        return e

    def begin(self):
        super().begin()
        self.source_lines = set()

    def end(self, count):
        super().end(count)
        if self.complete_mode:
            f = self.functions[-1]
            head, rest = f.split(" {\n", 1)
            self.functions[-1] = head + " attributes {dist.complete} {\n" + rest

    def t(self, d):
        dims, partial = d
        return self.ttype(self.local(dims), self.enc(dims, partial))

    def accepts(self, lines):
        """Whether the case so far plus `lines` passes the check."""
        body = "\n".join(self.lines + ["  " + l for l in lines])
        text = self.head + "func.func @probe() {\n" + body + "\n  return\n}\n"
        try:
            dist.Module.parse(text, context=self.ctx).verify_distributions()
            return True
        except dist.DiagnosticError:
            return False

    def step(self, make):
        """Emits the op `make(result_name, candidate)` builds, with the first
        candidate result distribution the check accepts; None if none."""
        name = self.fresh("s")
        for cand in candidates(len(self.mesh)):
            lines = make(name, cand)
            if lines is not None and self.accepts(lines):
                for line in lines:
                    self.emit(line)
                return name, cand
        return None

    def complete(self, v, d):
        """`v` with its pending sums allreduced."""
        dims, partial = d
        if not partial:
            return v, d
        r = self.fresh("ar")
        done = (dims, {})
        self.emit(
            f"{r} = dist.allreduce {v} on #mesh axes = [{', '.join(map(str, sorted(partial)))}] "
            f"reduce = sum : {self.t(d)} -> {self.t(done)}"
        )
        return r, done

    def map1(self, v, d, body):
        def make(name, cand):
            if cand[0] != d[0]:
                return None
            e = name + "e"
            return (
                [
                    f"{e} = tensor.empty() : {self.t(cand)}",
                    f"{name} = linalg.map ins({v} : {self.t(d)}) outs({e} : {self.t(cand)})",
                    "    (%a: f32, %o: f32) {",
                ]
                + ["      " + l for l in body]
                + ["      linalg.yield %r : f32", "    }"]
            )

        got = self.step(make)
        if got is None:
            raise RuntimeError(f"no distribution of the map {body} of {d}")
        return got


def add_case(prog, rng, X, W):
    """One random chain on `prog`'s current case: returns the value holding
    the whole result on every process and numpy's result."""
    mesh = prog.mesh
    rank = len(mesh)
    dists = list(candidates(rank))
    dx = rng.choice(dists)
    v, d = prog.source(dx[0], dx[1], "%Xg"), dx
    expected = X.astype(np.float64)
    prog.ops.append("partial input" if dx[1] else "complete input")
    for _ in range(rng.randint(1, 3)):
        op = rng.choice(
            ["matmul", "transpose", "exp", "scale", "double", "softmax", "rowmax", "rowmin"]
        )
        prog.ops.append(op)
        if op in ("exp", "softmax"):
            v, d = prog.complete(v, d)
        if op == "matmul":

            def make(name, cand, v, d, w, dw):
                e, z, f = name + "e", name + "z", name + "f"
                return [
                    f"{e} = tensor.empty() : {prog.t(cand)}",
                    f"{z} = arith.constant 0.0 : f32",
                    f"{f} = linalg.fill ins({z} : f32) outs({e} : {prog.t(cand)}) -> {prog.t(cand)}",
                    f"{name} = linalg.matmul ins({v}, {w} : {prog.t(d)}, {prog.t((dw[0], {}))}) "
                    f"outs({f} : {prog.t(cand)}) -> {prog.t(cand)}",
                ]

            # A weight distributed so that some matmul is correct: most
            # are not (a contracted dim split on one side only).
            weights = [c for c in dists if not c[1]]
            rng.shuffle(weights)
            got = None
            for dw in weights:
                w = prog.source(dw[0], {}, "%Wg")
                got = prog.step(lambda name, cand: make(name, cand, v, d, w, dw))
                if got is not None:
                    break
            if got is None:
                raise RuntimeError(f"no distribution of the matmul of {d}")
            v, d = got
            expected = expected @ W.astype(np.float64)
        elif op == "transpose":

            def make(name, cand, v=v, d=d):
                e = name + "e"
                return [
                    f"{e} = tensor.empty() : {prog.t(cand)}",
                    f"{name} = linalg.transpose ins({v} : {prog.t(d)}) outs({e} : {prog.t(cand)}) "
                    "permutation = [1, 0]",
                ]

            got = prog.step(make)
            if got is None:
                raise RuntimeError(f"no distribution of the transpose of {d}")
            v, d = got
            expected = expected.T
        elif op in ("rowmax", "rowmin"):
            v, d = row_extremum(prog, v, d, op[3:])
            pick = np.max if op == "rowmax" else np.min
            expected = expected - pick(expected, axis=1, keepdims=True)
        elif op == "exp":
            v, d = prog.map1(v, d, ["%r = math.exp %a : f32"])
            expected = np.exp(expected)
        elif op == "scale":
            v, d = prog.map1(
                v, d, ["%c = arith.constant 0.5 : f32", "%r = arith.mulf %a, %c : f32"]
            )
            expected = 0.5 * expected
        elif op == "double":
            v, d = prog.map1(v, d, ["%r = arith.addf %a, %a : f32"])
            expected = 2 * expected
        else:
            # exp, then divide by the row sum (a reduction that is partial
            # over split columns until its allreduce).
            v, d = prog.map1(v, d, ["%r = math.exp %a : f32"])
            dims = d[0]
            axis = dims[1]
            vt = f"tensor<{prog.local(dims)[0]}xf32, #dist.tensor<#mesh, [{dims[0]}]" + (
                f", partial = [{axis} : sum]>>" if axis >= 0 else ">>"
            )
            vc = f"tensor<{prog.local(dims)[0]}xf32, #dist.tensor<#mesh, [{dims[0]}]>>"
            s, z, f = prog.fresh("rs"), prog.fresh("z"), prog.fresh("f")
            prog.emit(f"{z} = arith.constant 0.0 : f32")
            prog.emit(f"{s}e = tensor.empty() : {vt}")
            prog.emit(f"{f} = linalg.fill ins({z} : f32) outs({s}e : {vt}) -> {vt}")
            prog.emit(
                f"{s} = linalg.reduce ins({v} : {prog.t(d)}) outs({f} : {vt}) dimensions = [1]"
            )
            prog.emit(
                "  (%in: f32, %acc: f32) {\n    %c = arith.addf %in, %acc : f32\n"
                "    linalg.yield %c : f32\n  }"
            )
            if axis >= 0:
                prog.emit(
                    f"{s}c = dist.allreduce {s} on #mesh axes = [{axis}] reduce = sum "
                    f": {vt} -> {vc}"
                )
                s = s + "c"
            q = prog.fresh("q")
            prog.emit(f"{q}e = tensor.empty() : {prog.t(d)}")
            prog.emit(
                f"{q} = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, "
                f"affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], "
                f'iterator_types = ["parallel", "parallel"]}} ins({v}, {s} : {prog.t(d)}, {vc}) '
                f"outs({q}e : {prog.t(d)}) {{\n  ^bb0(%a: f32, %b: f32, %o: f32):\n"
                f"    %r = arith.divf %a, %b : f32\n    linalg.yield %r : f32\n  }} -> {prog.t(d)}"
            )
            v = q
            e = np.exp(expected)
            expected = e / e.sum(axis=1, keepdims=True)
    # The global result, on every process.
    whole = ([-1, -1], {})
    r = prog.fresh("whole")
    prog.emit(f"{r} = dist.reshard {v} : {prog.t(d)} -> {prog.t(whole)}")
    return r, expected


def row_extremum(prog, v, d, kind):
    """`v` minus its row maxima (kind "max") or minima: a linalg.reduce
    whose result distribution is the first the check accepts among every
    rank-1 distribution, partial ones of any kind included. A max of a
    pending sum is not the pending max of anything: if the check accepts
    none, the sums are completed first. A partial extremum is completed
    with an allreduce of its kind before it is subtracted."""
    combine = "arith.maximumf" if kind == "max" else "arith.minimumf"
    init = "-3.0e+38" if kind == "max" else "3.0e+38"

    def vec(cand):
        dims, partial = cand
        n = N // prog.mesh[dims[0]] if dims[0] >= 0 else N
        return f"tensor<{n}xf32, {prog.enc(dims, partial)}>"

    def try_reduce(v, d):
        name = prog.fresh("ext")
        for cand in candidates(len(prog.mesh), 1, ("sum", "max", "min")):
            if cand[0][0] != d[0][0]:
                continue
            lines = [
                f"{name}z = arith.constant {init} : f32",
                f"{name}e = tensor.empty() : {vec(cand)}",
                f"{name}f = linalg.fill ins({name}z : f32) outs({name}e : {vec(cand)}) "
                f"-> {vec(cand)}",
                f"{name} = linalg.reduce ins({v} : {prog.t(d)}) outs({name}f : {vec(cand)}) "
                "dimensions = [1]",
                f"  (%in: f32, %acc: f32) {{\n    %c = {combine} %in, %acc : f32\n"
                "    linalg.yield %c : f32\n  }",
            ]
            if prog.accepts(lines):
                for line in lines:
                    prog.emit(line)
                return name, cand
        return None

    got = try_reduce(v, d)
    if got is None:
        v, d = prog.complete(v, d)
        got = try_reduce(v, d)
    if got is None:
        raise RuntimeError(f"no distribution of the row {kind} of {d}")
    m, dm = got
    if dm[1]:
        done = (dm[0], {})
        r = prog.fresh("ar")
        prog.emit(
            f"{r} = dist.allreduce {m} on #mesh axes = [{', '.join(map(str, sorted(dm[1])))}] "
            f"reduce = {list(dm[1].values())[0]} : {vec(dm)} -> {vec(done)}"
        )
        m, dm = r, done

    def make(name, cand):
        e = name + "e"
        return [
            f"{e} = tensor.empty() : {prog.t(cand)}",
            f"{name} = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, "
            "affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], "
            f'iterator_types = ["parallel", "parallel"]}} ins({v}, {m} : {prog.t(d)}, '
            f"{vec(dm)}) outs({e} : {prog.t(cand)}) {{\n  ^bb0(%a: f32, %b: f32, %o: f32):\n"
            f"    %r = arith.subf %a, %b : f32\n    linalg.yield %r : f32\n  }} -> {prog.t(cand)}",
        ]

    got = prog.step(make)
    if got is None:
        raise RuntimeError(f"no distribution of the row {kind} subtracted from {d}")
    return got


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--programs", type=int, default=8)
    parser.add_argument(
        "--complete",
        action="store_true",
        help="annotate each program on its inputs only and " "let --dist-complete infer the rest",
    )
    parser.add_argument("--dump", help="write the last mesh's program here")
    parser.add_argument(
        "--matmul", choices=["blas", "loops"], default="blas", help="dist-run's --matmul"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    np_rng = np.random.default_rng(args.seed)
    ctx = dist.Context()
    ok = True
    for mesh, names in (([2], ["mp"]), ([2, 2], ["dp", "mp"])):
        prog = Chain(ctx, mesh, names, args.complete)
        prog.ops = []
        expected = []
        for _ in range(args.programs):
            prog.begin()
            X = np_rng.integers(-3, 4, size=(N, N)).astype(np.float32) / 4
            W = np_rng.integers(-2, 3, size=(N, N)).astype(np.float32) / 2
            prog.emit(f"%Xg = arith.constant {dense(X)} : {prog.ttype([N, N])}")
            prog.emit(f"%Wg = arith.constant {dense(W)} : {prog.ttype([N, N])}")
            start = len(prog.lines)
            r, want = add_case(prog, rng, X, W)
            if args.complete:
                chain = [(i, l) for i, l in enumerate(prog.lines) if i >= start]
                kept = {i: l for i, l in chain if i in prog.source_lines}
                stripped = strip_chain([l for i, l in chain if i not in kept], prog.sources)
                it = iter(stripped)
                # Sources stay where they were; the stripped chain (shorter
                # by its allreduces) fills the other places in order.
                out = []
                for i, l in chain:
                    if i in kept:
                        out.append(kept[i])
                    else:
                        nxt = next(it, None)
                        if nxt is not None:
                            out.append(nxt)
                out.extend(it)
                prog.lines[start:] = out
            # Every process holds the whole result: count its elements off.
            plain = prog.fresh("plain")
            prog.emit(
                f"{plain} = tensor.cast {r} : {prog.t(([-1, -1], {}))} to {prog.ttype([N, N])}"
            )
            prog.emit(
                f"%E = arith.constant {dense(want.astype(np.float32))} : {prog.ttype([N, N])}"
            )
            prog.end(count_off(prog, plain))
            expected.append(want)
        procs = int(np.prod(mesh))
        if args.dump:
            open(args.dump, "w").write(prog.text())
        flags = (
            "--dist-complete --dist-verify-distributions"
            if args.complete
            else "--dist-verify-distributions"
        )
        ranks = dist.run_on_mpi(prog.text(), procs, pass_flags=flags, matmul=args.matmul)
        bad = [
            (r, i, int(c))
            for r, printed in enumerate(ranks)
            for i, c in enumerate(printed[0])
            if c != 0
        ]
        for rank, i, c in bad[:10]:
            print(f"FAILED: program {i} on mesh {mesh}, rank {rank}: {c} elements differ")
        ok &= not bad
        print(
            f"{'ok' if not bad else 'FAILED'}: {args.programs} random linalg programs"
            f"{' annotated on their inputs only' if args.complete else ''} on "
            f"mesh {mesh} equal numpy ({procs} processes)"
        )
        counts = {op: prog.ops.count(op) for op in sorted(set(prog.ops))}
        print("  made of: " + ", ".join(f"{op} {n}" for op, n in counts.items()))
    sys.exit(0 if ok else 1)


def dense(a):
    rows = ", ".join("[" + ", ".join(f"{v:.8e}" for v in r) + "]" for r in a)
    return f"dense<[{rows}]>"


def count_off(prog, plain):
    ty = prog.ttype([N, N])
    e = prog.fresh("cmp")
    prog.emit(f"{e}e = tensor.empty() : {ty}")
    prog.emit(f"{e} = linalg.map ins({plain}, %E : {ty}, {ty}) outs({e}e : {ty})")
    prog.emit(
        "    (%a: f32, %b: f32, %o: f32) {\n      %d = arith.subf %a, %b : f32\n"
        "      %ad = math.absf %d : f32\n      %ab = math.absf %b : f32\n"
        "      %one = arith.constant 1.0 : f32\n      %sc = arith.addf %ab, %one : f32\n"
        "      %tol = arith.constant 1.0e-4 : f32\n      %lim = arith.mulf %sc, %tol : f32\n"
        "      %off = arith.cmpf ogt, %ad, %lim : f32\n"
        "      %r = arith.uitofp %off : i1 to f32\n      linalg.yield %r : f32\n    }"
    )
    return prog.sum_all(e, ty)


if __name__ == "__main__":
    main()
