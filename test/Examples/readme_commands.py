#!/usr/bin/env python3
"""Runs every command that README.md and docs/*.md show, as written.

  readme_commands.py SRC_ROOT BUILD_DIR

The commands are every line of a ```sh block (a line ending in a backslash
goes on to the next) and every inline `python3 examples/...` command. Each
runs with bash from a scratch directory that links the repository's
top-level entries and copies those commands write into (COPIED), so that a
command may write `-o step` or redraw a figure without touching the source
tree, with BUILD_DIR/bin first on PATH, Debian's python3 and
BUILD_DIR/python_packages on PYTHONPATH, as on a fresh machine after the
README's test command. A command must exit 0 within its time limit, and
print the output the docs show for it (SHOWN_OUTPUT).

The commands that cannot run here are listed in EXCUSED with the reason,
and the test that does their job; a synopsis with placeholders ("[...]")
is skipped as such. A command that is neither run nor excused (a new one
in the docs) fails the test, and so does an excused one that no doc shows
any more. Prints one line per command and a summary.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Command (as it is written, whitespace normalised) -> why it is not run.
EXCUSED = {
    "scripts/test.sh": "the test command itself (.ci/run runs it)",
    "cmake --install build --prefix /opt/dist": "installs outside the tree "
    "(Downstream/downstream.test installs to a temporary prefix and builds on it)",
    "cmake -G Ninja -S . -B build -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir "
    "-DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit -DCMAKE_CXX_COMPILER_LAUNCHER=ccache "
    "-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22": "configures the "
    "build tree these tests run in (scripts/bootstrap.sh does the same)",
    "ninja -C build": "builds the tree these tests run in",
    "ninja -C build check-dist": "runs this suite",
    "scripts/bootstrap.sh": "builds the tree these tests run in",
    "python3 bench/run.py --sizes 10000,100000,1000000 --reps 3 --timeout 120 "
    "--out bench/results": "the compile-speed benchmark, minutes long "
    "(Bench/smoke.test runs it small)",
    # The benchmark at 500,000 ops (it writes bench/results-500k).
    "python3 bench/run.py --sizes 500000 --reps 3 --out bench/results-500k --skip dist-dropout-seed,dist-parallel-embedding,dist-amp-check-finite,dist-matmul-grad-overlap,dist-assign-streams,pipeline-nv,pipeline-1thread,mlir-opt-floor,mlir-opt-canonicalize,shard-floor,shard": "the compile-speed benchmark at 500,000 ops, minutes long "
    "(Bench/smoke.test runs it small)",
    "mlir-opt-22 --load-dialect-plugin=/opt/dist/lib/DistPlugin.so "
    "--load-pass-plugin=/opt/dist/lib/DistPlugin.so "
    "--pass-pipeline='builtin.module(dist-auto-parallel, dist-to-llvm{world-size=8})' "
    "examples/gpt_block.mlir": "needs the install in /opt/dist "
    "(Tools/mlir-opt-plugin.test runs this pipeline from the build tree)",
    "dist-run -n 2 --calibrate costs.json": "measures this machine for "
    "a minute (Integration/calibrate.test runs it short)",
    "dist-opt step.mlir --dist-overlap-report=cost-model=costs.json": "step.mlir "
    "stands for the user's program (Transforms/dist-overlap-report-cost-model.mlir)",
    "dist-compile -n 16 --pass-flags=--dist-auto-parallel step.mlir -o step": "step.mlir "
    "stands for the user's program (the README's dist-compile command runs)",
    "scp step cluster:work/": "needs a cluster",
    "mpiexec -f hostfile -n 16 ./step": "needs a cluster (Integration/multihost.test)",
    "srun -n 16 --mpi=pmi2 ./step": "needs Slurm",
    "dist-run -n 16 --hostfile hostfile ./step": "needs a cluster (Integration/multihost.test)",
    "dist-run -n 16 --launcher 'srun --mpi=pmi2' ./step": "needs Slurm "
    "(Integration/multihost.test runs a launcher of its own)",
    "apt-get install --no-install-recommends python3-torch": "installs a system "
    "package (scripts/bootstrap.sh installs it before the tests)",
    "dist-opt --dist-auto-parallel step.mlir": "step.mlir is what the reader's "
    "Python wrote (Integration/torch-doc.test writes it and runs this)",
    "dist-run -n 4 program.mlir": "program.mlir stands for the reader's program "
    "with a @main (the README's dist-run command runs)",
    "scripts/emulated_cluster.py run --hosts 2 --rate 1gbit -- dist-run -n 2 "
    "--calibrate costs.json": "makes network namespaces, as root "
    "(Integration/emulated-cluster.test runs this calibration)",
    "scripts/emulated_cluster.py up --hosts 2 --rate 10gbit": "makes network "
    "namespaces, as root, that outlive the command (Integration/emulated-cluster.test "
    "makes and removes them)",
    "scripts/emulated_cluster.py down": "removes the namespaces another test may "
    "be using (Integration/emulated-cluster.test runs it)",
    "dist-run -n 2 --emulated-cluster step.mlir": "step.mlir stands for the user's "
    "program (Integration/emulated-cluster.test runs programs on the cluster)",
}

TIMEOUT = 600

# Command -> (doc, the words that introduce the fenced block of its output
# there): each line of that block must be a line the command prints.
SHOWN_OUTPUT = {
    "scripts/run-example.sh": ("README.md", "The quick start prints"),
}


def shown_output_missing(root, command, printed):
    """The first line of the output the docs show for `command` that it
    did not print; None when it printed them all."""
    doc, intro = SHOWN_OUTPUT[command]
    text = open(os.path.join(root, doc)).read()
    block = re.search(re.escape(intro) + r".*?```\n(.*?)```", text, re.S).group(1)
    lines = {line.rstrip() for line in printed.splitlines()}
    for line in block.splitlines():
        if line.rstrip() not in lines:
            return line
    return None


def commands(root):
    """(file, command) for every command the docs show, in order."""
    found = []
    for path in ["README.md"] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))):
        name = os.path.relpath(os.path.join(root, path), root)
        text = open(os.path.join(root, path)).read()
        for block in re.findall(r"```(?:sh|bash)\n(.*?)```", text, re.S):
            line = ""
            for raw in block.splitlines():
                line += raw.strip()
                if line.endswith("\\"):
                    line = line[:-1].strip() + " "
                    continue
                # Drop a trailing comment (none of the commands quote a '#').
                command = re.sub(r"(^|\s)#.*$", "", line).strip()
                if command and not command.startswith("#"):
                    found.append((name, " ".join(command.split())))
                line = ""
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        for inline in re.findall(r"`(python3 examples/[^`]*)`", prose):
            found.append((name, " ".join(inline.split())))
    return found


# Top-level entries that commands write into (a figure the docs show, a
# benchmark's results): copied, so that running the docs never changes the
# repository.
COPIED = ("docs", "bench")


def scratch(root):
    """A directory whose entries link the repository's top level (those in
    COPIED are copies)."""
    tmp = tempfile.mkdtemp(prefix="readme-commands-")
    for entry in os.listdir(root):
        if entry.startswith(".") or entry.startswith("build"):
            continue
        if entry in COPIED:
            shutil.copytree(os.path.join(root, entry), os.path.join(tmp, entry), symlinks=True)
        else:
            os.symlink(os.path.join(root, entry), os.path.join(tmp, entry))
    return tmp


def main():
    root, build = sys.argv[1], sys.argv[2]
    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "bin") + ":/usr/bin:/bin"
    env["PYTHONPATH"] = os.path.join(build, "python_packages")
    env["DIST_BUILD_DIR"] = build
    counts = {"ran": 0, "excused": 0, "synopsis": 0, "failed": 0}
    shown = set()
    tmp = scratch(root)
    # The docs' paths are the build tree's at build/.
    os.symlink(build, os.path.join(tmp, "build"))
    try:
        run_all(root, tmp, env, counts, shown)
    finally:
        shutil.rmtree(tmp)
    for command in sorted(set(EXCUSED) - shown):
        counts["failed"] += 1
        print(f"FAILED: excused but shown nowhere: {command}")
    print(
        f"{counts['ran']} ran, {counts['excused']} excused, "
        f"{counts['synopsis']} synopses, {counts['failed']} failed"
    )
    sys.exit(1 if counts["failed"] else 0)


def run_all(root, tmp, env, counts, shown):
    for doc, command in commands(root):
        shown.add(command)
        if command in EXCUSED:
            counts["excused"] += 1
            print(f"excused: {doc}: {command}: {EXCUSED[command]}")
            continue
        if "[" in command and re.search(r"\[--?[a-z]|\[[A-Z]", command):
            counts["synopsis"] += 1
            print(f"synopsis: {doc}: {command}")
            continue
        try:
            result = subprocess.run(
                ["bash", "-c", command],
                cwd=tmp,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                timeout=TIMEOUT,
            )
            status = result.returncode
            tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        except subprocess.TimeoutExpired:
            status, tail = "timeout", []
        if status == 0 and command in SHOWN_OUTPUT:
            missing = shown_output_missing(root, command, result.stdout + result.stderr)
            if missing:
                status, tail = "output", [f"the docs show a line it did not print: {missing}"]
        if status == 0:
            counts["ran"] += 1
            print(f"ran: {doc}: {command}")
        else:
            counts["failed"] += 1
            print(f"FAILED ({status}): {doc}: {command}")
            for line in tail:
                print(f"  {line}")


if __name__ == "__main__":
    main()
