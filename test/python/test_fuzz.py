"""Random and truncated text must raise DiagnosticError, never crash."""
import os
import random

import dist
from conftest import EXAMPLES

SOURCES = [
    os.path.join(EXAMPLES, "gpt_block.mlir"),
    os.path.join(os.path.dirname(__file__), "..", "Dialect", "Dist", "ops.mlir"),
]


def _texts():
    rng = random.Random(1234)
    for path in SOURCES:
        text = open(path).read()
        for _ in range(60):
            yield text[: rng.randrange(len(text))]
        for _ in range(60):
            chars = list(text)
            for _ in range(rng.randrange(1, 8)):
                i = rng.randrange(len(chars))
                chars[i] = rng.choice('[]<>{}(),:=%#!@"-0123456789xf ')
            yield "".join(chars)
    for _ in range(60):
        yield "".join(
            rng.choice('#dist.mesh<shape=[]>tensor{}()%:,-1 \n"')
            for _ in range(rng.randrange(1, 200))
        )


def test_parser_never_crashes(ctx):
    parsed = failed = 0
    for text in _texts():
        try:
            m = dist.Module.parse(text, context=ctx)
            str(m)
            parsed += 1
        except dist.DiagnosticError as e:
            assert e.diagnostics, "a failure without a diagnostic"
            failed += 1
    assert failed > 0


def test_pipeline_on_mutants_never_crashes(ctx):
    rng = random.Random(99)
    text = open(SOURCES[0]).read()
    for _ in range(40):
        chars = list(text)
        for _ in range(3):
            i = rng.randrange(len(chars))
            chars[i] = rng.choice("0123456789-")
        try:
            m = dist.Module.parse("".join(chars), context=ctx)
        except dist.DiagnosticError:
            continue
        try:
            m.run("dist-auto-parallel")
        except dist.DiagnosticError as e:
            assert e.diagnostics
