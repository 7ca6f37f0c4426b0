"""pytest setup: `import dist` from the build tree unless it is importable
already (an installed prefix on PYTHONPATH)."""
import os
import shutil
import sys

import pytest

_BUILD = os.environ.get(
    "DIST_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build")
)
try:
    import importlib

    importlib.import_module("dist")
except ImportError:
    sys.path.insert(0, os.path.join(_BUILD, "python_packages"))

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


@pytest.fixture
def ctx():
    import dist

    context = dist.Context()
    yield context
    context.close()


def has_mpich():
    return shutil.which("mpirun.mpich") is not None


requires_mpich = pytest.mark.skipif(not has_mpich(), reason="MPICH is missing")
