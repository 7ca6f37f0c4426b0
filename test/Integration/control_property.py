#!/usr/bin/env python3
"""The divergence and cast checks against MPI: random control flow, calls
and casts around a collective.

  control_property.py [--seed N] [--programs K]

Each program, on a [2, 2] mesh (dp, mp), reduces a value that is partial
over some axes (a sum of shares no process holds alone) under random
control: scf.if, cf.cond_br, a flag chosen by the condition and merged
through plain cf.br's before the cf.cond_br on it, an scf.for whose trip
count depends on the condition, or scf.index_switch; the collective sits
directly in the region, in a called function, or two calls down. The
condition is the same everywhere (a constant, a value after an
allreduce, a local size) or a process's coordinate along dp or mp. Some
programs also cast the partial value away and back: to its own encoding,
or to a replicated one (laundering: the allreduce is then left out).

What the check must say is known from how the program was drawn: it
rejects the laundering and a condition on a coordinate along an axis the
collective reduces over, and accepts the rest. Every accepted program
runs on 4 processes and each rank's result must equal the serial value
(the reduced value, times the trips the rank took, or zero); every
rejected one, run anyway, must fail (a divergent group is stopped by the
runtime or by dist-run --timeout) or print another value.
"""
import itertools

import numpy as np

import dist
import textir
from dist.run import RunError

SHAPE, NAMES = [2, 2], ["dp", "mp"]
X = np.array([1.5, -2.0, 3.25, 0.5], dtype=np.float32)
R_SHARE = np.array([0.25, 1.0, -0.75, 2.0], dtype=np.float32)
CONTROLS = ["if", "cf", "join", "for", "switch"]
CONDITIONS = ["true", "agreed", "dim", "coord0", "coord1"]
DEPTHS = [0, 1, 2]
CASTS = ["none", "same", "launder"]
AXES = [[0], [1], [0, 1]]


def enc(axes, partial=True):
    if not partial:
        return "#dist.tensor<#mesh, [-1]>"
    return "#dist.tensor<#mesh, [-1], partial = [" + ", ".join(f"{a} : sum" for a in axes) + "]>"


def program(control, condition, depth, cast, axes):
    P = f"tensor<4xf32, {enc(axes)}>"
    R = f"tensor<4xf32, {enc(axes, False)}>"
    T = "tensor<4xf32>"
    ax = ", ".join(map(str, axes))
    lines = []
    emit = lines.append
    head = (
        '#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "mp"]>\n'
        "func.func private @printMemrefF32(memref<*xf32>)\n"
        f"func.func private @sync(%p: {P}) -> {T} {{\n"
        f"  %r = dist.allreduce %p on #mesh axes = [{ax}] reduce = sum : {P} -> {R}\n"
        f"  %plain = tensor.cast %r : {R} to {T}\n"
        f"  return %plain : {T}\n}}\n"
        f"func.func private @mid(%p: {P}) -> {T} {{\n"
        f"  %r = func.call @sync(%p) : ({P}) -> {T}\n"
        f"  return %r : {T}\n}}\n"
    )
    emit("%c0 = arith.constant 0 : index")
    emit("%c1 = arith.constant 1 : index")
    emit("%c2 = arith.constant 2 : index")
    emit("%crd0 = dist.process_coord #mesh axis = 0")
    emit("%crd1 = dist.process_coord #mesh axis = 1")
    emit(f"%zero = arith.constant dense<0.0> : {T}")
    emit("%x = arith.constant dense<[" + ", ".join(f"{v:.6e}" for v in X) + f"]> : {T}")
    emit("%one = arith.constant 1.0 : f32")
    m = "%one"
    for a in axes:
        emit(f"%is{a} = arith.cmpi eq, %crd{a}, %c0 : index")
        emit(f"%isf{a} = arith.uitofp %is{a} : i1 to f32")
        emit(f"%m{a} = arith.mulf {m}, %isf{a} : f32")
        m = f"%m{a}"
    # The share: r everywhere but at coordinate 0 of the reduced axes, which
    # holds x - (g-1) r (g processes in a group), so that no process holds
    # the sum.
    g = 2 ** len(axes)
    emit(f"%ms = tensor.splat {m} : {T}")
    emit("%rr = arith.constant dense<[" + ", ".join(f"{v:.6e}" for v in R_SHARE) + f"]> : {T}")
    emit("%gr = arith.constant dense<[" + ", ".join(f"{g * v:.6e}" for v in R_SHARE) + f"]> : {T}")
    emit(f"%xd = arith.subf %x, %gr : {T}")
    emit(f"%xm = arith.mulf %xd, %ms : {T}")
    emit(f"%share = arith.addf %rr, %xm : {T}")
    emit(f"%t0 = tensor.cast %share : {T} to {P}")
    t = "%t0"
    if cast != "none":
        emit(f"%away = tensor.cast %t0 : {P} to {T}")
        to = P if cast == "same" else R
        emit(f"%t = tensor.cast %away : {T} to {to}")
        t = "%t"
    # The condition.
    if condition == "true":
        emit("%cond = arith.constant true")
    elif condition == "agreed":
        emit(f"%y = func.call @sync(%t0) : ({P}) -> {T}")
        emit("%y0 = tensor.extract %y[%c0] : tensor<4xf32>")
        emit("%low = arith.constant -1000.0 : f32")
        emit("%cond = arith.cmpf ogt, %y0, %low : f32")
    elif condition == "dim":
        emit(f"%d = tensor.dim %t0, %c0 : {P}")
        emit("%four = arith.constant 4 : index")
        emit("%cond = arith.cmpi eq, %d, %four : index")
    else:
        emit(f"%cond = arith.cmpi eq, %crd{condition[-1]}, %c0 : index")

    def call(indent, name):
        """The reduction of t into `name` (plain), at `depth`."""
        pad = " " * indent
        if cast == "launder":
            # Declared replicated: the allreduce is left out.
            return [f"{pad}{name} = tensor.cast {t} : {R} to {T}"]
        if depth == 0:
            return [
                f"{pad}{name}r = dist.allreduce {t} on #mesh axes = [{ax}] reduce = sum : {P} -> {R}",
                f"{pad}{name} = tensor.cast {name}r : {R} to {T}",
            ]
        callee = "@sync" if depth == 1 else "@mid"
        return [f"{pad}{name} = func.call {callee}({t}) : ({P}) -> {T}"]

    tail = (
        "  %buf = bufferization.to_buffer %res : tensor<4xf32> to memref<4xf32>\n"
        "  %u = memref.cast %buf : memref<4xf32> to memref<*xf32>\n"
        "  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()\n"
        "  return\n}\n"
    )
    # Each region op: the lines before the reduction %s and after it ($T is
    # the plain type).
    regions = {
        "if": (
            ["%res = scf.if %cond -> ($T) {"],
            ["  scf.yield %s : $T", "} else {", "  scf.yield %zero : $T", "}"],
        ),
        "for": (
            [
                "%n = arith.select %cond, %c2, %c1 : index",
                "%res = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> ($T) {",
            ],
            ["  %next = arith.addf %acc, %s : $T", "  scf.yield %next : $T", "}"],
        ),
        "switch": (
            [
                "%k = arith.select %cond, %c1, %c0 : index",
                "%res = scf.index_switch %k -> $T",
                "case 1 {",
            ],
            ["  scf.yield %s : $T", "}", "default {", "  scf.yield %zero : $T", "}"],
        ),
    }
    if control in regions:
        before, after = regions[control]
        lines.extend(line.replace("$T", T) for line in before)
        lines.extend(call(4, "%s"))
        lines.extend(line.replace("$T", T) for line in after)
        body = lines
    else:
        merge = ""
        if control == "cf":
            emit(f"cf.cond_br %cond, ^take, ^join(%zero : {T})")
        else:
            # "join": the condition chooses a constant flag on each side and
            # the sides merge through plain cf.br's; the flag decides.
            emit("%true = arith.constant true")
            emit("%false = arith.constant false")
            emit("cf.cond_br %cond, ^yes, ^no")
            merge = (
                "\n^yes:\n  cf.br ^merge(%true : i1)\n^no:\n  cf.br ^merge(%false : i1)"
                f"\n^merge(%flag: i1):\n  cf.cond_br %flag, ^take, ^join(%zero : {T})"
            )
        text = "\n".join("  " + l for l in lines)
        take = "\n".join("  " + l.strip() for l in call(0, "%s"))
        return (
            head
            + "func.func @main() {\n"
            + text
            + merge
            + "\n^take:\n"
            + take
            + f"\n  cf.br ^join(%s : {T})\n^join(%res: {T}):\n"
            + tail
        )
    return head + "func.func @main() {\n" + "\n".join("  " + l for l in body) + "\n" + tail


def expected(control, condition, cast, axes, rank):
    """What rank `rank` prints in the serial meaning of the program."""
    coords = (rank // 2, rank % 2)
    cond = condition in ("true", "agreed", "dim") or coords[int(condition[-1])] == 0
    # Serially one process holds the whole value (laundered or not).
    value = X
    trips = (2 if cond else 1) if control == "for" else (1 if cond else 0)
    return value * trips


def predicted(condition, cast, axes):
    if cast == "launder":
        return False
    if condition.startswith("coord"):
        return int(condition[-1]) not in axes
    return True


def main():
    args, rng, _ = textir.property_args(__doc__, 20261201, "programs", 12)
    ctx = dist.Context()
    ok = True
    # Every control and every condition, then random draws.
    draws = [(c, k) for c, k in itertools.product(CONTROLS, CONDITIONS)]
    rng.shuffle(draws)
    counts = {"accepted": 0, "rejected": 0}
    pairs = set()
    for i in range(args.programs):
        control, condition = draws[i % len(draws)]
        depth, cast, axes = rng.choice(DEPTHS), rng.choice(CASTS), rng.choice(AXES)
        pairs.add((control, condition))
        label = (
            f"{control} on {condition}, collective at depth {depth} over " f"{axes}, cast {cast}"
        )
        text = program(control, condition, depth, cast, axes)
        module = dist.Module.parse(text, context=ctx)
        try:
            module.verify_distributions()
            accepted = True
        except dist.DiagnosticError:
            accepted = False
        if accepted != predicted(condition, cast, axes):
            print(f"FAILED: the check {'accepts' if accepted else 'rejects'} {label}")
            print(text)
            ok = False
            continue
        try:
            # A rejected program is lowered anyway, unchecked, to see it fail.
            ranks = dist.run_on_mpi(text, 4, timeout=20, verify=accepted)
            equal = all(
                len(r) == 1
                and np.allclose(r[0], expected(control, condition, cast, axes, k), atol=1e-5)
                for k, r in enumerate(ranks)
            )
            outcome = "equals the serial value" if equal else "differs"
        except RunError as e:
            equal = False
            outcome = "failed: " + next(
                (
                    l
                    for l in e.stderr.splitlines()
                    if "dist-run: rank" in l or "did not finish" in l
                ),
                "see stderr",
            )
        good = equal if accepted else not equal
        ok &= good
        counts["accepted" if accepted else "rejected"] += 1
        print(
            f"{'ok' if good else 'FAILED'}: {'accepted' if accepted else 'rejected'} "
            f"{label}: {outcome}"
        )
    textir.finish(
        ok,
        f"{counts['accepted']} accepted, {counts['rejected']} rejected; "
        f"covered: {len(pairs)} of {len(draws)} (control, condition) pairs",
    )


if __name__ == "__main__":
    main()
