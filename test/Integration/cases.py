#!/usr/bin/env python3
"""Numerical equivalence of dist rewrites on a real MPI runtime.

  cases.py CASE --dist-run PATH --dist-opt PATH [--procs 2,4]

Each case is generated here for any process count: a serial reference (one
process, global shapes, no communication) and an SPMD program that cuts its
shard out of the same global constants, runs the annotated step, and gathers
every result back to its global shape (each shard is inserted into zeros and
summed over the axes that split it), so every rank prints global values.
The SPMD program runs before and after the rewrite under test, and the
outputs of every rank must match the reference within rtol 1e-4 / atol 1e-5.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

RTOL, ATOL = 1e-4, 1e-5


def values(n, salt):
    """Deterministic values in [-1, 1] with a few distinct magnitudes."""
    return [((i * 37 + salt * 11) % 17 - 8) / 8.0 for i in range(n)]


def dense(shape, vals, elt="f32"):
    def nest(vs, dims):
        if not dims:
            return vs[0]
        step = len(vs) // dims[0]
        return "[" + ", ".join(nest(vs[i * step:(i + 1) * step], dims[1:])
                               for i in range(dims[0])) + "]"
    fmt = [repr(float(v)) if elt.startswith("f") else str(int(v)) for v in vals]
    return f"dense<{nest(fmt, list(shape))}> : {ttype(shape, elt)}"


def ttype(shape, elt="f32", enc=None):
    dims = "x".join(str(d) for d in shape)
    enc = f", {enc}" if enc else ""
    return f"tensor<{dims}x{elt}{enc}>" if shape else f"tensor<{elt}{enc}>"


def enc(dims, partial=None):
    p = f", partial = [{partial}]" if partial else ""
    return f"#dist.tensor<#mesh, [{', '.join(str(d) for d in dims)}]{p}>"


class Program:
    """Builds the body of @main line by line."""

    def __init__(self, mesh=None):
        self.lines, self.funcs, self.n = [], [], 0
        self.mesh, self.coords = mesh, {}

    def tmp(self):
        self.n += 1
        return f"%v{self.n}"

    def __call__(self, line):
        self.lines.append("  " + line)

    def const(self, shape, vals, elt="f32"):
        v = self.tmp()
        self(f"{v} = arith.constant {dense(shape, vals, elt)}")
        return v

    def index(self, value):
        v = self.tmp()
        self(f"{v} = arith.constant {value} : index")
        return v

    def coord(self, axis):
        if axis not in self.coords:
            v = self.tmp()
            self(f"{v} = dist.process_coord #mesh axis = {axis}")
            self.coords[axis] = v
        return self.coords[axis]

    def offsets(self, local, dims):
        offs = []
        for size, axis in zip(local, dims):
            if axis < 0:
                offs.append("0")
            else:
                v = self.tmp()
                self(f"{v} = arith.muli {self.coord(axis)}, {self.index(size)} : index")
                offs.append(v)
        return offs

    def shard(self, glob, gshape, dims, elt="f32"):
        """The local shard of global tensor `glob`, with its encoding."""
        local = [g // self.mesh[a] if a >= 0 else g for g, a in zip(gshape, dims)]
        offs = self.offsets(local, dims)
        s, c = self.tmp(), self.tmp()
        self(f"{s} = tensor.extract_slice {glob}[{', '.join(offs)}] [{', '.join(map(str, local))}] "
             f"[{', '.join('1' for _ in local)}] : {ttype(gshape, elt)} to {ttype(local, elt)}")
        self(f"{c} = tensor.cast {s} : {ttype(local, elt)} to {ttype(local, elt, enc(dims))}")
        return c, local

    def gather(self, value, local, dims, elt="f32"):
        """The global tensor from every process's shard (replicated)."""
        gshape = [l * self.mesh[a] if a >= 0 else l for l, a in zip(local, dims)]
        plain, zero, ins = self.tmp(), self.tmp(), self.tmp()
        self(f"{plain} = tensor.cast {value} : {ttype(local, elt, enc(dims))} to {ttype(local, elt)}")
        if all(a < 0 for a in dims):
            return plain
        offs = self.offsets(local, dims)
        self(f"{zero} = arith.constant dense<0.0> : {ttype(gshape, elt)}")
        self(f"{ins} = tensor.insert_slice {plain} into {zero}[{', '.join(offs)}] "
             f"[{', '.join(map(str, local))}] [{', '.join('1' for _ in local)}] : "
             f"{ttype(local, elt)} into {ttype(gshape, elt)}")
        axes = sorted(a for a in dims if a >= 0)
        out = self.tmp()
        self(f"{out} = dist.allreduce {ins} on #mesh axes = [{', '.join(map(str, axes))}] "
             f"reduce = sum : {ttype(gshape, elt)} -> {ttype(gshape, elt)}")
        return out

    def print(self, value, shape, elt="f32"):
        if elt != "f32":
            f = self.tmp()
            self(f"{f} = arith.uitofp {value} : {ttype(shape, elt)} to {ttype(shape)}")
            value = f
        m, u = self.tmp(), self.tmp()
        memref = ttype(shape).replace("tensor", "memref")
        self(f"{m} = bufferization.to_buffer {value} : {ttype(shape)} to {memref}")
        unranked = "memref<*xf32>"
        self(f"{u} = memref.cast {m} : {memref} to {unranked}")
        self(f"call @printMemrefF32({u}) : ({unranked}) -> ()")

    def text(self, mesh_decl=""):
        return "\n".join([mesh_decl, "func.func private @printMemrefF32(memref<*xf32>)"]
                         + self.funcs + ["func.func @main() {"] + self.lines
                         + ["  return", "}", ""])


def mesh_decl(shape, names):
    quoted = ", ".join(f'"{n}"' for n in names)
    return f"#mesh = #dist.mesh<shape = [{', '.join(map(str, shape))}], names = [{quoted}]>"


#===------------------------------------------------------------------------===#
# Cases
#===------------------------------------------------------------------------===#

def mlp(procs, rank3):
    """Column- then row-parallel linear, forward and backward; the column
    matmul_grad's dX allreduce is what --dist-matmul-grad-overlap moves."""
    lead = [2, 2] if rank3 else [4]
    H, F = 4, 8
    xs, gs = lead + [H], lead + [H]
    hs = lead + [F]
    vals = {"x": values(math.prod(xs), 1), "w1": values(H * F, 2),
            "w2": values(F * H, 3), "g": values(math.prod(gs), 4)}

    def body(p, spmd):
        x = p.const(xs, vals["x"]); w1 = p.const([H, F], vals["w1"])
        w2 = p.const([F, H], vals["w2"]); g = p.const(gs, vals["g"])
        r = [-1] * len(lead)
        if spmd:
            x, _ = p.shard(x, xs, r + [-1]); g, _ = p.shard(g, gs, r + [-1])
            w1, w1l = p.shard(w1, [H, F], [-1, 0]); w2, w2l = p.shard(w2, [F, H], [0, -1])
            Fl = F // procs
            t = lambda shape, dims, part=None: ttype(shape, "f32", enc(dims, part))
            X, G = t(xs, r + [-1]), t(gs, r + [-1])
            W1, W2 = t([H, Fl], [-1, 0]), t([Fl, H], [0, -1])
            Hh = t(lead + [Fl], r + [0])
            Op, O = t(xs, r + [-1], "0 : sum"), t(xs, r + [-1])
        else:
            X = G = O = Op = ttype(xs); W1 = ttype([H, F]); W2 = ttype([F, H])
            Hh = ttype(hs)
        h, op, o = p.tmp(), p.tmp(), p.tmp()
        p(f"{h} = dist.matmul {x}, {w1} : {X}, {W1} -> {Hh}")
        p(f"{op} = dist.matmul {h}, {w2} : {Hh}, {W2} -> {Op}")
        if spmd:
            p(f"{o} = dist.allreduce {op} on #mesh axes = [0] reduce = sum : {Op} -> {O}")
        else:
            o = op
        dh, dw2, dxp, dw1, dx = p.tmp(), p.tmp(), p.tmp(), p.tmp(), p.tmp()
        p(f"{dh}, {dw2} = dist.matmul_grad {h}, {w2}, {g} : {Hh}, {W2}, {G} -> {Hh}, {W2}")
        p(f"{dxp}, {dw1} = dist.matmul_grad {x}, {w1}, {dh} : {X}, {W1}, {Hh} -> {Op}, {W1}")
        if spmd:
            p(f"{dx} = dist.allreduce {dxp} on #mesh axes = [0] reduce = sum : {Op} -> {O}")
            o, dx = p.gather(o, xs, r + [-1]), p.gather(dx, xs, r + [-1])
            dw1 = p.gather(dw1, w1l, [-1, 0]); dw2 = p.gather(dw2, w2l, [0, -1])
        else:
            dx = dxp
        for v, s in [(o, xs), (dx, xs), (dw1, [H, F]), (dw2, [F, H])]:
            p.print(v, s)

    serial = Program(); body(serial, False)
    spmd = Program([procs]); body(spmd, True)
    return serial.text(), spmd.text(mesh_decl([procs], ["mp"]))


def embedding(dp, mp):
    """Vocab-parallel embedding forward and backward on a [dp, mp] mesh; the
    table is perturbed on non-root dp replicas, so only the startup
    broadcast makes them agree."""
    B, S, V, D = 4, 3, 8, 3
    ids = [(i * 5 + 3) % V for i in range(B * S)]
    w = values(V * D, 5)
    dout = values(B * S * D, 6)
    serial = Program()
    i = serial.const([B, S], ids, "i64"); W = serial.const([V, D], w)
    G = serial.const([B, S, D], [v / dp for v in dout])
    e, dw = serial.tmp(), serial.tmp()
    serial(f"{e} = dist.embedding {i}, {W} : {ttype([B, S], 'i64')}, {ttype([V, D])} -> {ttype([B, S, D])}")
    serial(f"{dw} = dist.embedding_grad {i}, {W}, {G} : {ttype([B, S], 'i64')}, {ttype([V, D])}, "
           f"{ttype([B, S, D])} -> {ttype([V, D])}")
    serial.print(e, [B, S, D]); serial.print(dw, [V, D])

    p = Program([dp, mp])
    IDS, WL = ttype([B // dp, S], "i64", enc([0, -1])), ttype([V // mp, D], "f32", enc([1, -1]))
    GL = ttype([B // dp, S, D], "f32", enc([0, -1, -1]))
    p.funcs += [
        f'func.func @startup(%w: {WL} {{dist.param = "w"}}) -> ({WL} {{dist.param = "w"}}) '
        "attributes {dist.startup} {", f"  return %w : {WL}", "}",
        f'func.func @step(%ids: {IDS}, %w: {WL} {{dist.param = "w"}}, %g: {GL}) -> ({GL}, {WL}) {{',
        f"  %e = dist.embedding %ids, %w : {IDS}, {WL} -> {GL}",
        f"  %dw = dist.embedding_grad %ids, %w, %g : {IDS}, {WL}, {GL} -> {WL}",
        f"  return %e, %dw : {GL}, {WL}", "}"]
    i = p.const([B, S], ids, "i64"); W = p.const([V, D], w); G = p.const([B, S, D], dout)
    il, _ = p.shard(i, [B, S], [0, -1], "i64")
    wl, wls = p.shard(W, [V, D], [1, -1])
    gl, _ = p.shard(G, [B, S, D], [0, -1, -1])
    # Replicas along dp start from different tables, as after a local init.
    c = p.coord(0); ci, cf, sp, pert = p.tmp(), p.tmp(), p.tmp(), p.tmp()
    p(f"{ci} = arith.index_cast {c} : index to i32")
    p(f"{cf} = arith.sitofp {ci} : i32 to f32")
    p(f"{sp} = tensor.splat {cf} : {WL}")
    p(f"{pert} = arith.addf {wl}, {sp} : {WL}")
    ws, e, dw = p.tmp(), p.tmp(), p.tmp()
    p(f"{ws} = call @startup({pert}) : ({WL}) -> {WL}")
    p(f"{e}:2 = call @step({il}, {ws}, {gl}) : ({IDS}, {WL}, {GL}) -> ({GL}, {WL})")
    eg = p.gather(f"{e}#0", [B // dp, S, D], [0, -1, -1])
    dwg = p.gather(f"{e}#1", [V // mp, D], [1, -1])
    p.print(eg, [B, S, D]); p.print(dwg, [V, D])
    return serial.text(), p.text(mesh_decl([dp, mp], ["dp", "mp"]))


def dropout(procs):
    """A dropout and its recomputation in the backward: the recomputed mask
    must be the forward one on every process (and the serial one)."""
    R, C = 4, 8
    x = [v + 2.0 for v in values(R * C, 7)]  # nonzero, so zeros mark drops

    def body(p, spmd):
        X = p.const([R, C], x)
        T = ttype([R, C])
        if spmd:
            X, local = p.shard(X, [R, C], [-1, 0])
            T = ttype(local, "f32", enc([-1, 0]))
        y, z = p.tmp(), p.tmp()
        p(f'{y} = dist.dropout {X} prob = 5.000000e-01 {{fix_seed = 7 : i32, id = "d"}} : {T} -> {T}')
        # The serial reference states the intent: the same seed.
        extra = "" if spmd else "fix_seed = 7 : i32, "
        p(f'{z} = dist.dropout {X} prob = 5.000000e-01 {{{extra}recompute_of = "d"}} : {T} -> {T}')
        if spmd:
            y, z = p.gather(y, local, [-1, 0]), p.gather(z, local, [-1, 0])
        p.print(y, [R, C]); p.print(z, [R, C])

    serial = Program(); body(serial, False)
    spmd = Program([procs]); body(spmd, True)
    return serial.text(), spmd.text(mesh_decl([procs], ["mp"]))


def amp_step(procs):
    """An AMP step over one gradient; process 1 holds an inf."""
    G = ttype([4], "f32", enc([-1]))
    return "\n".join([
        mesh_decl([procs], ["dp"]),
        f"func.func @step(%g: {G}, %ls: tensor<1xf32> {{dist.loss_scale}}) -> ({G} {{dist.grad = \"p\"}}) {{",
        f"  return %g : {G}", "}", ""])


def amp_main(procs, stepped):
    """Calls the rewritten step (which now also returns found_inf)."""
    p = Program([procs])
    G = ttype([4], "f32", enc([-1]))
    F = ttype([1], "i1", enc([-1]))
    g = p.const([4], [1.0, 2.0, 3.0, 4.0])
    c = p.coord(0)
    one, is1, inf, bad, gg, cg, ls, r = (p.tmp() for _ in range(8))
    p(f"{one} = arith.constant 1 : index")
    p(f"{is1} = arith.cmpi eq, {c}, {one} : index")
    p(f"{inf} = arith.constant dense<[0x7F800000, 2.0, 3.0, 4.0]> : {ttype([4])}")
    p(f"{bad} = arith.select {is1}, {inf}, {g} : {ttype([4])}")
    p(f"{gg} = tensor.cast {bad} : {ttype([4])} to {G}")
    p(f"{ls} = arith.constant dense<2.0> : tensor<1xf32>")
    p(f"{r}:2 = call @step({gg}, {ls}) : ({G}, tensor<1xf32>) -> ({G}, {F})")
    fi, fl, fp = p.tmp(), p.tmp(), p.tmp()
    p(f"{fi} = tensor.cast {r}#1 : {F} to {ttype([1], 'i1')}")
    p.print(fi, [1], "i1")
    # Keep the module's mesh alias; put main inside the rewritten module.
    body = "\n".join(["func.func private @printMemrefF32(memref<*xf32>)",
                      "func.func @main() {"] + p.lines + ["  return", "}"])
    head, tail = stepped.rsplit("}", 1)
    return head + body + "\n}" + tail


#===------------------------------------------------------------------------===#
# Running and comparing
#===------------------------------------------------------------------------===#

NUMBER = re.compile(r"-?(?:inf|nan|\d+(?:\.\d*)?(?:e[+-]?\d+)?)")


def run(args, text, procs, flags=""):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    cmd = [args.dist_run, "-n", str(procs), f.name]
    if flags:
        cmd.append(f"--pass-flags={flags}")
    env = dict(os.environ, DIST_OPT=args.dist_opt)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {out.returncode}\n{out.stderr}\n{text}")
    os.unlink(f.name)
    ranks = re.split(r"^== rank \d+ ==$", out.stdout, flags=re.M)[1:]
    # Each print is "Unranked Memref <header> data = <values>".
    return [[[float(v) for v in NUMBER.findall(chunk.split("data =", 1)[1])]
             for chunk in section.split("Unranked Memref")[1:]] for section in ranks]


def close(a, b):
    if len(a) != len(b):
        return False
    return all(math.isclose(x, y, rel_tol=RTOL, abs_tol=ATOL) for x, y in zip(a, b))


def check(name, reference, ranks):
    ok = True
    for r, arrays in enumerate(ranks):
        if len(arrays) != len(reference) or not all(close(a, b) for a, b in zip(arrays, reference)):
            print(f"MISMATCH {name}: rank {r}\n  got      {arrays}\n  expected {reference}")
            ok = False
    print(f"{'ok' if ok else 'FAILED'}: {name} ({len(ranks)} processes)")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("case", choices=["mlp", "mlp3", "embedding", "dropout", "amp"])
    parser.add_argument("--dist-run", required=True)
    parser.add_argument("--dist-opt", required=True)
    parser.add_argument("--procs", default="2,4")
    args = parser.parse_args()
    ok = True
    for procs in [int(n) for n in args.procs.split(",")]:
        if args.case in ("mlp", "mlp3"):
            serial, spmd = mlp(procs, args.case == "mlp3")
            ref = run(args, serial, 1)[0]
            for label, flags in [("before", ""), ("overlap", "--dist-matmul-grad-overlap"),
                                 ("auto-parallel", "--dist-auto-parallel")]:
                ok &= check(f"{args.case} {label}", ref, run(args, spmd, procs, flags))
        elif args.case == "embedding":
            dp, mp = (1, 2) if procs == 2 else (2, 2)
            serial, spmd = embedding(dp, mp)
            ref = run(args, serial, 1)[0]
            for label, flags in [("parallel-embedding", "--dist-parallel-embedding"),
                                 ("auto-parallel", "--dist-auto-parallel")]:
                ok &= check(f"embedding [{dp}, {mp}] {label}", ref,
                            run(args, spmd, procs, flags))
        elif args.case == "dropout":
            serial, spmd = dropout(procs)
            ref = run(args, serial, 1)[0]
            if ref[0] != ref[1]:
                sys.exit("FAIL: the serial reference's recomputed mask differs")
            # The MPI lowering first, then the rest: the dropout still draws
            # the mask of its global elements.
            for label, flags in [("dropout seed", "--dist-dropout-seed"),
                                 ("dropout seed, mpi lowered first",
                                  "--dist-dropout-seed --convert-dist-to-mpi")]:
                ranks = run(args, spmd, procs, flags)
                ok &= check(label, ref, ranks)
                ok &= all(arrays[0] == arrays[1] for arrays in ranks)
        elif args.case == "amp":
            step = subprocess.run([args.dist_opt, "--dist-amp-check-finite", "-"],
                                  input=amp_step(procs), capture_output=True, text=True)
            if step.returncode:
                sys.exit(step.stderr)
            ranks = run(args, amp_main(procs, step.stdout), procs)
            # Only process 1 saw the inf; every process must say found_inf.
            ok &= check("amp found_inf", [[1.0]], ranks)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
