#!/usr/bin/env python3
"""A property of the distribution rules, checked on MPI.

  rules_property.py [--seed N] [--programs K]

Random small programs (a matmul of randomly distributed operands, completed
by the allreduces its partial result needs, then an elementwise op or a
scale) on [2], [2, 2] and [2, 4] meshes. For each program the rule's result
encoding is found by asking the verifier about every candidate; the
accepted program then runs on as many processes as its mesh has, and every
result, gathered by its declared encoding, must equal numpy's serial result.
Then one program the rules reject (a partial result declared complete: its
allreduce left out) is made to run anyway, through a cast the check trusts,
and must differ: the rejection was a real mismatch.
"""
import sys

import numpy as np

import cases
import dist
import textir

MESHES = [([2], ["mp"]), ([2, 2], ["dp", "mp"]), ([2, 4], ["dp", "mp"])]


def rule_result(ctx, mesh, a_t, b_t, shape):
    """The distribution the matmul rule gives, found by verifying every
    candidate declaration; None when no candidate verifies."""
    for dims, partial in textir.distributions(len(shape), len(mesh.shape)):
        d = dist.TensorDist(mesh, dims, {a: "sum" for a in partial})
        m = dist.Module.create(ctx)
        f = m.function("probe", [a_t, b_t])
        a, b = f.arguments
        try:
            f.matmul(a, b, dist=d)
            f.return_()
            m.verify()
            return dims, partial
        except (dist.DiagnosticError, ValueError):
            # The builder refuses local shapes that cannot be multiplied
            # (the verifier's shape rule) before the verifier sees them.
            continue
    return None


def random_dims(rng, rank, mesh_rank):
    axes = list(range(mesh_rank))
    dims = []
    for _ in range(rank):
        choice = rng.choice([-1] + [a for a in axes if a not in dims])
        dims.append(choice)
    return dims


class Builder(cases.Program):
    """main(): shards global constants, runs the cases, prints gathered
    results."""

    def __init__(self, ctx, shape, names):
        super().__init__(ctx, shape, names)
        self.f = self.start_main()
        self.expected = []

    def local(self, shape, dims):
        return [g // self.mesh.shape[a] if a >= 0 else g for g, a in zip(shape, dims)]

    def shard(self, glob, dims):
        f = self.f
        g = f.constant(glob, dist.TensorType(list(glob.shape), context=self.ctx))
        local = self.local(glob.shape, dims)
        s = f.extract_slice(g, self.offsets(local, dims), local)
        return f.cast(s, dist.TensorType(local, "f32", dist.TensorDist(self.mesh, dims)))

    def gather(self, value, shape):
        """The global value of `value`, by its declared encoding."""
        f = self.f
        t = value.type
        d = t.dist
        plain = f.cast(value, dist.TensorType(t.shape, context=self.ctx))
        split = sorted(a for a in d.dims_mapping if a >= 0)
        # Complete what the declaration says is pending.
        if d.partial:
            rep = dist.TensorDist(self.mesh, [-1] * len(t.shape), d.partial)
            p = f.cast(plain, dist.TensorType(t.shape, "f32", rep))
            plain = f.cast(
                f.allreduce(p, self.mesh, sorted(d.partial)),
                dist.TensorType(t.shape, context=self.ctx),
            )
        if not split:
            return plain
        zero = f.constant(np.zeros(shape), dist.TensorType(shape, context=self.ctx))
        ins = f.insert_slice(plain, zero, self.offsets(t.shape, d.dims_mapping))
        part = dist.TensorDist(self.mesh, [-1] * len(shape), {a: "sum" for a in split})
        ins = f.cast(ins, dist.TensorType(shape, "f32", part))
        return f.cast(f.allreduce(ins, self.mesh, split), dist.TensorType(shape, context=self.ctx))


def add_case(b, rng, np_rng, lie=False):
    """One random accepted program into `b`; with `lie`, its partial result
    is declared complete (the rules reject that), smuggled through a cast.
    Returns False when the random operands admit no program (skip)."""
    ctx, mesh = b.ctx, b.mesh
    m_, k_, n_ = 8, 8, 8
    rank = len(mesh.shape)
    da, db = random_dims(rng, 2, rank), random_dims(rng, 2, rank)
    A = np_rng.standard_normal((m_, k_)).astype(np.float32)
    B = np_rng.standard_normal((k_, n_)).astype(np.float32)
    a_t = dist.TensorType(b.local(A.shape, da), "f32", dist.TensorDist(mesh, da))
    b_t = dist.TensorType(b.local(B.shape, db), "f32", dist.TensorDist(mesh, db))
    found = rule_result(ctx, mesh, a_t, b_t, [m_, n_])
    if found is None or (lie and not found[1]):
        return False
    dims, partial = found
    f = b.f
    a, bb = b.shard(A, da), b.shard(B, db)
    p = f.matmul(a, bb, dist=dist.TensorDist(mesh, dims, {x: "sum" for x in partial}))
    if lie:
        # The rules reject declaring this complete: force it through the
        # trusted cast and see what the gathered value is.
        complete = dist.TensorDist(mesh, dims)
        plain = f.cast(p, dist.TensorType(p.type.shape, context=ctx))
        q = f.cast(plain, dist.TensorType(p.type.shape, "f32", complete))
    else:
        q = f.allreduce(p, mesh, partial) if partial else p
    op = rng.choice(["addf", "scale", "negf"])
    if op == "addf":
        r, expected = f.arith("addf", q, q), 2 * (A @ B)
    elif op == "scale":
        r, expected = f.scale(q, 0.5), 0.5 * (A @ B)
    else:
        r, expected = f.arith("negf", q), -(A @ B)
    f.print(b.gather(r, [m_, n_]))
    b.expected.append(expected)
    return True


def run(b, procs):
    b.f.return_()
    b.module.verify()
    return dist.run_on_mpi(b.module, procs, verify=False)


def main():
    args, rng, np_rng = textir.property_args(__doc__, 20261130, "programs", 6)
    ctx = dist.Context()
    ok = True
    for shape, names in MESHES:
        b = Builder(ctx, shape, names)
        made = attempts = 0
        while made < args.programs and attempts < 50 * args.programs:
            made += add_case(b, rng, np_rng)
            attempts += 1
        procs = int(np.prod(shape))
        ranks = run(b, procs)
        good = all(
            len(arrays) == len(b.expected)
            and all(np.allclose(x, e, rtol=1e-4, atol=1e-4) for x, e in zip(arrays, b.expected))
            for arrays in ranks
        )
        ok &= good
        print(
            f"{'ok' if good else 'FAILED'}: {made} accepted programs on mesh "
            f"{shape} equal the serial result ({procs} processes)"
        )

    # A rejected program is really wrong.
    b = Builder(ctx, [2, 2], ["dp", "mp"])
    for _ in range(200):
        if add_case(b, rng, np_rng, lie=True):
            break
    else:
        print("FAILED: no random program had a partial result to leave out")
        sys.exit(1)
    ranks = run(b, 4)
    wrong = not np.allclose(ranks[0][0], b.expected[0], rtol=1e-4, atol=1e-4)
    ok &= wrong
    print(
        f"{'ok' if wrong else 'FAILED'}: a program the rules reject "
        f"(allreduce left out) {'differs from' if wrong else 'EQUALS'} the "
        f"serial result (4 processes)"
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
