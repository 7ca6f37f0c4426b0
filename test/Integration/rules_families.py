#!/usr/bin/env python3
"""Every rule family and partial kind of the distribution rules, on MPI.

  rules_families.py [--seed N] [--cases K]

rules_property.py draws matmuls with sum partials; this draws the other
rules: each elementwise family (additive addf/subf, multiplicative mulf,
dividend divf, linear negf, the monotone and exact casts truncf/extf,
nonlinear maximumf/minimumf) and the reshapes (collapse_shape,
expand_shape), on operands split and partial over random axes with each
reduction kind (sum, max, min, prod, avg). The operands are built from a
global array the way a program receives them: sliced by the coordinates
and, over each partial axis, perturbed per process so that the reduction
of the pieces is the slice (for a sum, the process at coordinate 0 holds
x - (n-1)r and the others r).

For each case the check (Module.verify_distributions) says whether the
rules accept it and, for a reshape, which encoding the result has. The
accepted cases of a mesh form one program that the whole check accepts
(the gathers too: plain tensors, collectives); it runs on the mesh's
processes and every gathered result must equal numpy's. The rejected ones
form another, run unchecked with the encoding a rule would have to give
(the operand's): each result must differ from numpy's, or the rule
rejected a correct program for nothing.
"""
import re

import numpy as np

import dist
import textir
from textir import fmt

MESHES = [([2], ["mp"]), ([2, 2], ["dp", "mp"]), ([2, 4], ["dp", "mp"])]
KINDS = ["sum", "max", "min", "prod", "avg"]
ELEMENTWISE = {
    "addf": (2, lambda x, y: x + y),
    "subf": (2, lambda x, y: x - y),
    "mulf": (2, lambda x, y: x * y),
    "divf": (2, lambda x, y: x / y),
    "maximumf": (2, np.maximum),
    "minimumf": (2, np.minimum),
    "negf": (1, lambda x: -x),
    "round_f16": (1, lambda x: x.astype(np.float16).astype(np.float32)),
}
RESHAPES = ["collapse", "expand"]


def dense(a):
    if a.ndim == 1:
        return "[" + ", ".join(fmt(v) for v in a) + "]"
    return "[" + ", ".join(dense(r) for r in a) + "]"


def dense_int(a):
    if a.ndim == 1:
        return "[" + ", ".join(str(int(v)) for v in a) + "]"
    return "[" + ", ".join(dense_int(r) for r in a) + "]"


class Program(textir.Body):
    """The text of one @main on `mesh`, built case by case."""

    def __init__(self, shape, names):
        super().__init__(shape)
        self.shape, self.names = shape, names
        self.expected = []  # per printed result, numpy
        mesh = ", ".join(str(s) for s in shape)
        quoted = ", ".join(f'"{n}"' for n in names)
        self.head = f"#mesh = #dist.mesh<shape = [{mesh}], names = [{quoted}]>\n"
        for a in range(len(shape)):
            self.emit(f"%crd{a} = dist.process_coord #mesh axis = {a}")

    def local(self, gshape, dims):
        return self.local_shape(gshape, dims)

    def holder_masks(self, axis, holders):
        """1.0 where this process's coordinate along `axis` is `holders`'
        element, 0.0 elsewhere; and the complement."""
        shape = list(holders.shape)
        it = self.ttype(shape, elt="index")
        c = self.fresh("h")
        self.emit(f"{c}s = tensor.splat %crd{axis} : {it}")
        self.emit(f"{c}c = arith.constant dense<{dense_int(holders)}> : {it}")
        self.emit(f"{c}b = arith.cmpi eq, {c}s, {c}c : {it}")
        self.emit(
            f"{c} = arith.uitofp {c}b : {self.ttype(shape, elt='i1')} to " f"{self.ttype(shape)}"
        )
        return c, self.binop("subf", self.splat(1.0, shape), c, shape)

    def const(self, array):
        return self.let(
            "c", f"arith.constant dense<{dense(array)}> : " f"{self.ttype(list(array.shape))}"
        )

    def scalar_splat(self, name, shape):
        return self.let("s", f"tensor.splat {name} : {self.ttype(shape)}")

    def binop(self, op, a, b, shape):
        return self.let("v", f"arith.{op} {a}, {b} : {self.ttype(shape)}")

    def operand(self, glob, dims, partial, rng):
        """This process's piece of `glob` split by `dims` and partial over
        `partial` (axis -> kind), as an encoded value."""
        gshape = list(glob.shape)
        local = self.local(gshape, dims)
        g = self.let("g", f"arith.constant dense<{dense(glob)}> : {self.ttype(gshape)}")
        v = self.slice_of(g, gshape, local, dims)
        # Per element, and with the process that holds the value's own
        # share (the maximum, for a max) drawn per element, so that a rule
        # that wrongly accepts shows on some element whatever the values.
        for a, kind in sorted(partial.items()):
            n = self.shape[a]
            m, nm = self.holder_masks(a, rng.integers(0, n, local))
            r = rng.standard_normal(local).astype(np.float32)
            if kind in ("sum", "avg"):
                # The holder has x - (n-1)r (n x - (n-1)r for an average),
                # the others r.
                if kind == "avg":
                    v = self.binop("mulf", v, self.splat(n, local), local)
                d = self.binop("subf", v, self.const(n * r), local)
                v = self.binop("addf", self.const(r), self.binop("mulf", m, d, local), local)
            elif kind in ("max", "min"):
                # The others are below (above) the holder's x.
                t = self.binop("mulf", nm, self.const(1 + np.abs(r)), local)
                v = self.binop("subf" if kind == "max" else "addf", v, t, local)
            else:
                # prod: the holder has x / f^(n-1), the others f.
                f = (0.75 + 0.5 * rng.random(local)).astype(np.float32)
                q = self.binop("mulf", v, self.const(f ** -(n - 1)), local)
                d = self.binop("subf", q, self.const(f), local)
                v = self.binop("addf", self.const(f), self.binop("mulf", m, d, local), local)
        return self.let(
            "e",
            f"tensor.cast {v} : {self.ttype(local)} to "
            f"{self.ttype(local, self.enc(dims, partial))}",
        )

    def gather_print(self, value, gshape, dims, partial, expected):
        """Completes and gathers `value` on plain tensors (the check lets
        them leave the program) and prints it."""
        local = self.local(gshape, dims)
        p = self.fresh("p")
        self.emit(
            f"{p} = tensor.cast {value} : "
            f"{self.ttype(local, self.enc(dims, partial))} to "
            f"{self.ttype(local)}"
        )
        for kind in sorted(set(partial.values())):
            axes = sorted(a for a, k in partial.items() if k == kind)
            q = self.fresh("p")
            self.emit(
                f"{q} = dist.allreduce {p} on #mesh axes = "
                f"[{', '.join(map(str, axes))}] reduce = {kind} : "
                f"{self.ttype(local)} -> {self.ttype(local)}"
            )
            p = q
        split = sorted(a for a in dims if a >= 0)
        if split:
            z = self.let("z", f"arith.constant dense<0.0> : {self.ttype(gshape)}")
            offs = ", ".join(self.offsets(local, dims))
            ones = ", ".join("1" for _ in gshape)
            ins = self.let(
                "p",
                f"tensor.insert_slice {p} into {z}[{offs}] "
                f"[{', '.join(map(str, local))}] [{ones}] : "
                f"{self.ttype(local)} into {self.ttype(gshape)}",
            )
            full = self.fresh("p")
            self.emit(
                f"{full} = dist.allreduce {ins} on #mesh axes = "
                f"[{', '.join(map(str, split))}] reduce = sum : "
                f"{self.ttype(gshape)} -> {self.ttype(gshape)}"
            )
            p = full
        flat = [int(np.prod(gshape))]
        c = self.fresh("flat")
        self.emit(
            f"{c} = tensor.collapse_shape {p} [[{', '.join(map(str, range(len(gshape))))}]] : "
            f"{self.ttype(gshape)} into {self.ttype(flat)}"
        )
        b = self.fresh("buf")
        self.emit(
            f"{b} = bufferization.to_buffer {c} : {self.ttype(flat)} to memref<{flat[0]}xf32>"
        )
        u = self.fresh("u")
        self.emit(f"{u} = memref.cast {b} : memref<{flat[0]}xf32> to memref<*xf32>")
        self.emit(f"func.call @printMemrefF32({u}) : (memref<*xf32>) -> ()")
        self.expected.append(np.asarray(expected, dtype=np.float32).reshape(-1))

    def text(self):
        return (
            self.head + "func.func private @printMemrefF32(memref<*xf32>)\n"
            "func.func @main() {\n" + "\n".join(self.lines) + "\n  return\n}\n"
        )


def random_encoding(rng, rank, mesh_rank, kind):
    """Random dims mapping, and partial (`kind`) over at least one axis the
    dims leave free (one is freed when they use all)."""
    dims = []
    for _ in range(rank):
        dims.append(rng.choice([-1] + [a for a in range(mesh_rank) if a not in dims]))
    if all(a in dims for a in range(mesh_rank)):
        dims[rng.choice([i for i, a in enumerate(dims) if a >= 0])] = -1
    free = [a for a in range(mesh_rank) if a not in dims]
    partial = {a: kind for a in free if rng.random() < 0.5}
    if not partial:
        partial = {rng.choice(free): kind}
    return dims, partial


ENC = re.compile(
    r"#dist\.tensor<#dist\.mesh<[^>]*>, \[([-\d, ]*)\]" r"(?:, partial = \[([^\]]*)\])?>"
)


def parse_enc(text):
    m = ENC.search(text)
    dims = [int(x) for x in m.group(1).split(",")] if m.group(1).strip() else []
    partial = {}
    if m.group(2):
        for entry in m.group(2).split(","):
            a, k = entry.split(":")
            partial[int(a)] = k.strip()
    return dims, partial


def case_text(p, op, args, enc_in, gshape_in, enc_out, gshape_out, local_out):
    """The op of a case on `args` (encoded values); its result."""
    (din, pin), (dout, pout) = enc_in, enc_out
    lin = p.local(gshape_in, din)
    tin = p.ttype(lin, p.enc(din, pin))
    tout = p.ttype(local_out, p.enc(dout, pout))
    r = p.fresh("r")
    if op in ELEMENTWISE and op != "round_f16":
        p.emit(f"{r} = arith.{op} {', '.join(args)} : {tin}")
    elif op == "round_f16":
        half = p.ttype(lin, p.enc(din, pin), elt="f16")
        h = p.let("h", f"arith.truncf {args[0]} : {tin} to {half}")
        p.emit(f"{r} = arith.extf {h} : {half} to {tin}")
    elif op == "collapse":
        p.emit(f"{r} = tensor.collapse_shape {args[0]} [[0, 1]] : {tin} into {tout}")
    else:
        p.emit(
            f"{r} = tensor.expand_shape {args[0]} [[0, 1]] output_shape "
            f"[{local_out[0]}, {local_out[1]}] : {tin} into {tout}"
        )
    return r


def probe(ctx, shape, names, op, enc_in, gshape_in, gshape_out):
    """Whether the check accepts the op on operands of `enc_in`, and the
    result's encoding (the operand's for an elementwise op; for a reshape
    what the rule computes, found by declaring it replicated)."""
    p = Program(shape, names)
    din, pin = enc_in
    lin = p.local(gshape_in, din)
    tin = p.ttype(lin, p.enc(din, pin))
    arity = ELEMENTWISE[op][0] if op in ELEMENTWISE else 1
    if op in ELEMENTWISE:
        enc_out, local_out = enc_in, lin
    else:
        # The rule's answer is read off the diagnostic.
        size = int(np.prod(lin))
        local_out = [size] if op == "collapse" else [size // 8, 8]
        enc_out = ([-1] * len(gshape_out), {})
    body = Program(shape, names)
    body.lines = []
    case_text(
        body,
        op,
        [f"%a{i}" for i in range(arity)],
        enc_in,
        gshape_in,
        enc_out,
        gshape_out,
        local_out,
    )
    args = ", ".join(f"%a{i}: {tin}" for i in range(arity))
    text = p.head + f"func.func @probe({args}) {{\n" + "\n".join(body.lines) + "\n  return\n}\n"
    m = dist.Module.parse(text, context=ctx)
    try:
        m.verify_distributions()
        return True, enc_out, local_out
    except dist.DiagnosticError as e:
        msg = e.diagnostics[0].message
        if "but computes" in msg and op in RESHAPES:
            computed = msg.split("but computes", 1)[1]
            if "a replicated value" in computed.split(":")[0]:
                return True, ([-1] * len(gshape_out), {}), local_out
            enc = parse_enc(computed)
            lo = p.local(gshape_out, enc[0])
            return True, enc, lo
        return False, None, None


OPS = sorted(ELEMENTWISE) + RESHAPES


def draw(rng, np_rng, shape, index):
    """Case `index`: the first len(OPS) * len(KINDS) cases go through every
    op with every partial kind once, the rest are random."""
    if index < len(OPS) * len(KINDS):
        op, kind = OPS[index % len(OPS)], KINDS[index // len(OPS)]
    else:
        op, kind = rng.choice(OPS), rng.choice(KINDS)
    gshape_in = [32] if op == "expand" else [4, 8]
    gshape_out = {"collapse": [32], "expand": [4, 8]}.get(op, gshape_in)
    enc_in = random_encoding(rng, len(gshape_in), len(shape), kind)
    arity = ELEMENTWISE[op][0] if op in ELEMENTWISE else 1
    xs = [np_rng.standard_normal(gshape_in).astype(np.float32) for _ in range(arity)]
    if op == "divf":
        xs[1] = (np.abs(xs[1]) + 0.5) * np.sign(xs[1] + 1e-3)
    if op in ELEMENTWISE:
        expected = ELEMENTWISE[op][1](*xs)
    else:
        expected = xs[0].reshape(gshape_out)
    return op, kind, enc_in, gshape_in, gshape_out, xs, expected


def run_and_compare(prog, procs, want_equal):
    ranks = dist.run_on_mpi(prog.text(), procs, verify=False)
    verdicts = []
    for i, e in enumerate(prog.expected):
        same = all(
            len(r) == len(prog.expected) and np.allclose(r[i], e, rtol=1e-4, atol=1e-4)
            for r in ranks
        )
        verdicts.append(same)
    return verdicts


def main():
    args, rng, np_rng = textir.property_args(__doc__, 20261201, "cases", 24)
    ctx = dist.Context()
    ok = True
    index = 0
    unexpressible = 0
    pairs = set()
    for shape, names in MESHES:
        procs = int(np.prod(shape))
        good, bad = Program(shape, names), Program(shape, names)
        good_labels, bad_labels = [], []
        families, kinds = set(), set()
        for _ in range(args.cases):
            op, kind, enc_in, gin, gout, xs, expected = draw(rng, np_rng, shape, index)
            index += 1
            accepted, enc_out, local_out = probe(ctx, shape, names, op, enc_in, gin, gout)
            label = f"{op} on {good.enc(*enc_in)}"
            if accepted:
                prog, labels = good, good_labels
            else:
                if op in RESHAPES:
                    # What a rule would have to give: the split moved to the
                    # outer dim, the partials kept.
                    d = enc_in[0]
                    enc_out = (
                        ([d[0] if d[0] >= 0 else d[1]]) if op == "collapse" else [d[0], -1],
                        enc_in[1],
                    )
                else:
                    enc_out = enc_in
                local_out = bad.local(gout, enc_out[0])
                if np.prod(local_out) != np.prod(bad.local(gin, enc_in[0])):
                    # No encoding holds the local result (two split dims
                    # collapsed into one): nothing to run.
                    unexpressible += 1
                    continue
                prog, labels = bad, bad_labels
            if enc_in[1]:
                kinds.add(kind)
                pairs.add((op, kind))
            families.add(op)
            operands = [prog.operand(x, enc_in[0], enc_in[1], np_rng) for x in xs]
            r = case_text(prog, op, operands, enc_in, gin, enc_out, gout, local_out)
            prog.gather_print(r, gout, enc_out[0], enc_out[1], expected)
            labels.append(label)
        # The accepted program passes the whole check; the other does not.
        dist.Module.parse(good.text(), context=ctx).verify_distributions()
        if bad_labels:
            try:
                dist.Module.parse(bad.text(), context=ctx).verify_distributions()
                print(f"FAILED: the rejected cases on {shape} pass the check together")
                ok = False
            except dist.DiagnosticError:
                pass
        verdicts = run_and_compare(good, procs, True) if good_labels else []
        for label, same in zip(good_labels, verdicts):
            if not same:
                print(f"FAILED: accepted {label} on {shape} differs from numpy")
        ok &= all(verdicts)
        print(
            f"{'ok' if all(verdicts) else 'FAILED'}: {len(good_labels)} accepted "
            f"cases on mesh {shape} equal numpy ({procs} processes)"
        )
        verdicts = run_and_compare(bad, procs, False) if bad_labels else []
        for label, same in zip(bad_labels, verdicts):
            if same:
                print(
                    f"FAILED: rejected {label} on {shape} equals numpy: "
                    "the rule is stricter than it needs to be"
                )
        ok &= not any(verdicts)
        print(
            f"{'ok' if not any(verdicts) else 'FAILED'}: {len(bad_labels)} "
            f"rejected cases on mesh {shape} differ from numpy when run anyway"
        )
        print(
            f"  families: {' '.join(sorted(families))}; partial kinds: "
            f"{' '.join(sorted(kinds))}"
        )
    print(f"  rejected reshapes no encoding could hold: {unexpressible}")
    textir.finish(
        ok,
        f"covered: {len(pairs)} of {len(OPS) * len(KINDS)} (op, partial kind) "
        f"pairs ({len(OPS)} ops, kinds {' '.join(KINDS)})",
    )


if __name__ == "__main__":
    main()
