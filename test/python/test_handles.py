"""Handles that cross contexts, modules or functions raise, never crash.

Each case runs in a child interpreter: before the checks these programs
died with SIGSEGV once the other context or module was gone, which would
take pytest down with them instead of failing one test.
"""
import os
import subprocess
import sys
import textwrap

import pytest

import dist


def run_child(body):
    """Runs `body` in a fresh python3 with this `dist` importable; returns
    (exit code, stderr)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(dist.__file__))]
        + env.get("PYTHONPATH", "").split(os.pathsep)
    )
    proc = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc.returncode, proc.stderr


PRELUDE = """
import gc
import dist
"""


def test_type_of_another_context_raises():
    rc, err = run_child(
        """
    a, b = dist.Context(), dist.Context()
    m = dist.Module.create(a)
    f = m.function("f", [dist.TensorType([4], "f32", context=a)])
    other = dist.TensorType([4], "f32", dist.TensorDist(dist.Mesh([2], context=b), [0]))
    try:
        f.cast(f.arguments[0], other)
    except ValueError as e:
        print(e)
    del b, other
    gc.collect()
    f.return_(f.arguments[0])
    print(m)
    """
    )
    assert rc == 0, err


def test_value_of_another_module_raises():
    rc, err = run_child(
        """
    ctx = dist.Context()
    a, b = dist.Module.create(ctx), dist.Module.create(ctx)
    t = dist.TensorType([4], "f32", context=ctx)
    f, g = a.function("f", [t]), b.function("g", [t])
    try:
        g.arith("addf", f.arguments[0], g.arguments[0])
    except ValueError as e:
        print(e)
    f.return_(f.arguments[0])
    g.return_(g.arguments[0])
    del a, f
    gc.collect()
    print(b)
    """
    )
    assert rc == 0, err


def test_cross_handles_raise_with_what_and_where(ctx):
    other = dist.Context()
    t = dist.TensorType([4], "f32", context=ctx)
    m = dist.Module.create(ctx)
    f, g = m.function("f", [t]), m.function("g", [t])
    with pytest.raises(
        ValueError, match="operand #1 of 'arith.addf' is not a value of function @g"
    ):
        g.arith("addf", g.arguments[0], f.arguments[0])
    with pytest.raises(
        ValueError, match="a result type of 'tensor.cast' belongs to another dist.Context"
    ):
        g.cast(g.arguments[0], dist.TensorType([4], "f32", context=other))
    with pytest.raises(ValueError, match="returned value #0 is not a value of function @g"):
        g.return_(f.arguments[0])
    with pytest.raises(ValueError, match="an argument type belongs to another dist.Context"):
        m.function("h", [dist.TensorType([4], "f32", context=other)])
    with pytest.raises(ValueError, match="marker 'dist.param' belongs to another dist.Context"):
        m.function("h", [(t, {"dist.param": dist.Attribute.parse('"w"', other)})])
    with pytest.raises(ValueError, match="the element type belongs to another dist.Context"):
        dist.TensorType([4], dist.Type.parse("f32", other), context=ctx)
    # The builders are still usable after each refusal.
    g.return_(g.arguments[0])
    f.return_(f.arguments[0])
    m.verify()
    other.close()


def test_equality_with_other_objects_is_false_not_an_error(ctx):
    m = dist.Module.create(ctx)
    f = m.function("f", [dist.TensorType([4], "f32", context=ctx)])
    v = f.arguments[0]
    assert not (v == None)  # noqa: E711
    assert v != None  # noqa: E711
    assert v != "x"
    assert v == f.arguments[0]
    f.return_(v)
    op = m.operations[0]
    assert op != None  # noqa: E711
    assert op == m.operations[0]
    assert ctx != None  # noqa: E711
