# -*- Python -*-
import os
import shutil
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "DIST"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".c"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dist_obj_root, "test")
# Unit/ is a suite of its own (GoogleTest), with its own lit.cfg.py.
config.excludes = [
    "Unit",
    "Inputs",
    "tools",
    "lib",
    "CMakeLists.txt",
    "lit.cfg.py",
    "lit.site.cfg.py",
]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%examples", os.path.join(config.dist_src_root, "examples")))
config.substitutions.append(("%dist_src_root", config.dist_src_root))
config.substitutions.append(("%scripts", os.path.join(config.dist_src_root, "scripts")))
# In a sanitizer build, hosts that are not instrumented (python3, mlir-opt,
# mlir-runner under dist-run) load dist's instrumented libraries: they get
# the shared sanitizer runtime preloaded, and their own allocations are not
# leak-checked (python3 and the JIT keep memory until exit).
hosted = ""
# PyTorch (Debian's python3-torch, which scripts/bootstrap.sh installs) is
# the independent oracle of the GPT model (Integration/gpt-model-torch.test).
# Importing it costs seconds, so it is asked once, here.
if (
    subprocess.run(
        [sys.executable, "-c", "import torch"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    ).returncode
    == 0
):
    config.available_features.add("torch")

if config.enable_sanitizers:
    hosted = (
        f"/usr/bin/env LD_PRELOAD={config.asan_runtime} "
        "ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=false "
    )
config.substitutions.append(("%python", hosted + sys.executable))
config.substitutions.append(("%mlir_opt", hosted + os.path.join(config.llvm_tools_dir, "mlir-opt")))
config.substitutions.append(("%llvm_tools_dir", config.llvm_tools_dir))
config.substitutions.append(("%dist_obj_root", config.dist_obj_root))
config.substitutions.append(("%c_compiler", config.c_compiler))
config.substitutions.append(("%cxx_compiler", config.cxx_compiler))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
# `import dist` from the build tree (test/Integration/cases.py, test/python).
config.environment["PYTHONPATH"] = os.path.join(config.dist_obj_root, "python_packages")
llvm_config.use_default_substitutions()

# Integration/ runs programs on MPI: it needs MPICH and the runtime library,
# which the build makes only when it finds MPICH. Without them those tests
# are UNSUPPORTED, not failed (scripts/bootstrap.sh installs MPICH).
if shutil.which("mpirun.mpich") and os.path.exists(
    os.path.join(config.dist_obj_root, "lib", "libdist_runtime.so")
):
    config.available_features.add("mpich")


# The emulated cluster (python/dist/run/cluster.py: network namespaces joined
# by tc-shaped links) needs root, iproute2 and tbf; where it cannot be made,
# its tests are UNSUPPORTED (and lit says why).
def _load_cluster():
    import importlib.util

    path = os.path.join(config.dist_src_root, "python", "dist", "run", "cluster.py")
    spec = importlib.util.spec_from_file_location("dist_emulated_cluster", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if "mpich" in config.available_features:
    _cluster = _load_cluster()
    _why_no_cluster = _cluster.check()
    # Opt-in (--param netns-tests=1) for now: making the cluster adds and
    # removes a bridge and veth ends in this namespace, and an MPI process
    # of another test that starts meanwhile can fail in UCX's device scan
    # ("init_worker: No such device"), as one did in a full .ci/run. The
    # cure is a cluster whose links never appear here (the bridge in a
    # namespace of its own, mpiexec inside the cluster).
    if _why_no_cluster is not None:
        lit_config.note(f"emulated-cluster tests unsupported: {_why_no_cluster}")
    elif lit_config.params.get("netns-tests") == "1":
        config.available_features.add("netns")
    # --param emulated-cluster=RATE (10gbit, 1gbit, ...): every dist-run of
    # the suite runs on a 2-host emulated cluster with links of RATE, made
    # here and removed when lit exits (DIST_RUN_CLUSTER=1 makes it dist-run's
    # default).
    _rate = lit_config.params.get("emulated-cluster")
    if _rate:
        if _why_no_cluster is not None:
            lit_config.fatal(f"--param emulated-cluster={_rate}: {_why_no_cluster}")
        import atexit

        _cluster.up(2, _rate)
        atexit.register(_cluster.down)
        config.environment["DIST_RUN_CLUSTER"] = "1"
        config.available_features.add("emulated-cluster")
        lit_config.note(f"every dist-run runs on a 2-host emulated cluster at {_rate}")

# The format check needs the clang-format release the tree is formatted
# with (scripts/bootstrap.sh installs it).
clang_format = shutil.which("clang-format-22")
if clang_format:
    config.available_features.add("clang-format")
    config.substitutions.append(("%clang_format", clang_format))

# The ignore-rules test asks git about the source tree: it needs git and a
# checkout (a tarball of the sources has no .git).
if shutil.which("git") and os.path.exists(os.path.join(config.dist_src_root, ".git")):
    config.available_features.add("git-checkout")

# Python files are checked with pyflakes3 and black (Debian's pyflakes3 and
# black packages, which scripts/bootstrap.sh installs), as C++ files are
# with clang-format.
pyflakes, black = shutil.which("pyflakes3"), shutil.which("black")
if pyflakes and black:
    config.available_features.add("python-checks")
    config.substitutions.append(("%pyflakes", pyflakes))
    config.substitutions.append(("%black", black))

if config.enable_sanitizers:
    config.available_features.add("sanitizers")
    # A leak or a UBSan report (fatal: -fno-sanitize-recover) fails the test.
    # Debian's LLVM is not built with ASan: its poisoning annotations, which
    # instrumented code inlines from LLVM's headers, are ignored.
    config.environment["ASAN_OPTIONS"] = "detect_leaks=1:allow_user_poisoning=false"
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    # dist-run gives the ranks (mlir-runner, with libdist_runtime.so) the
    # runtime too.
    config.environment["DIST_RUN_PRELOAD"] = config.asan_runtime
    # MPICH's UCX patches mmap with a relative jump to its hook; where ASLR
    # puts that hook beyond the jump's reach (as it may beside the ASan
    # runtime), the patched mmap jumps to nowhere and a rank dies while
    # loading libmpich. Without the hooks UCX registers memory on demand.
    config.environment["UCX_MEM_MMAP_HOOK_MODE"] = "none"

tool_dirs = [config.dist_tools_dir, config.llvm_tools_dir]
tools = [
    ToolSubst("dist-opt", unresolved="fatal"),
    ToolSubst("not", unresolved="fatal"),
    ToolSubst("count", unresolved="fatal"),
    ToolSubst("dist-run", unresolved="fatal"),
    ToolSubst("dist-compile", unresolved="fatal"),
    ToolSubst("dist-capi-test", unresolved="fatal"),
    ToolSubst("dist-lsp-server", unresolved="fatal"),
    ToolSubst("dist-reduce", unresolved="fatal"),
    ToolSubst("dist-bare-opt", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
