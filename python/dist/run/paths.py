"""Finding dist's own tools and libraries, LLVM's tools and MPICH."""
import os
import shutil

from . import _config
from .errors import fail

_HERE = os.path.dirname(os.path.abspath(__file__))
# The tools' directory beside this package: the build tree keeps the package
# in build/python_packages/dist/run and the tools in build/bin; an install
# prefix in P/lib/python3.X/site-packages/dist/run and P/bin.
_BIN_DIRS = [
    os.path.join(_HERE, "..", "..", "..", "bin"),
    os.path.join(_HERE, "..", "..", "..", "..", "..", "bin"),
]

LIBMPI = _config.LIBMPI
LIBBLAS = _config.LIBBLAS


def _executable(path):
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def dist_opt():
    """dist-opt: $DIST_OPT, the build's or the prefix's, or the one on PATH."""
    candidates = [os.environ.get("DIST_OPT")]
    candidates += [os.path.join(d, "dist-opt") for d in _BIN_DIRS]
    candidates.append(shutil.which("dist-opt"))
    for candidate in candidates:
        if _executable(candidate):
            return os.path.abspath(candidate)
    fail("dist-opt not found: build it (scripts/bootstrap.sh) or set DIST_OPT")


def lib_dir(dist_opt_path):
    """The libraries (libdist_runtime.so, libdist_native.a) that belong to
    the dist-opt at `dist_opt_path`."""
    return os.path.abspath(os.path.join(os.path.dirname(dist_opt_path), "..", "lib"))


def llvm_tool(name):
    path = os.path.join(_config.LLVM_BIN_DIR, name)
    if not os.path.exists(path):
        fail(f"{name} is missing: apt-get install mlir-22-tools llvm-22 clang-22")
    return path


def llvm_lib(name):
    return os.path.join(_config.LLVM_LIB_DIR, name)


def mpirun():
    """MPICH's launcher, or None."""
    return shutil.which(_config.MPIRUN)


def require_libmpi():
    if not LIBMPI or not os.path.exists(LIBMPI):
        fail(f"{LIBMPI or 'libmpich.so'} is missing: apt-get install libmpich-dev")
