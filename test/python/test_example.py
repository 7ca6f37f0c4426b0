"""python/examples/gpt_block.py runs as docs/python.md says it does."""
import os
import subprocess
import sys

from conftest import requires_mpich

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "python", "examples", "gpt_block.py")


@requires_mpich
def test_gpt_block_example():
    out = subprocess.run(
        [sys.executable, EXAMPLE],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    # The same figures as examples/gpt_block.mlir gives dist-opt.
    assert lines[0] == (
        "exposed communication of @train_step at 0.001 TFLOP/s: "
        "71.720 us without the overlap split, 61.475 us with it"
    )
    assert lines[1].startswith("2 processes ([1, 2]) vs 1: equal")
