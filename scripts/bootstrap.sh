#!/usr/bin/env bash
# Installs the Debian packages dist needs (only those missing), configures the
# build tree on first use and builds the given targets (default: everything).
#
#   scripts/bootstrap.sh [ninja targets...]
#
# Environment: DIST_BUILD_DIR (default <repo>/build), DIST_JOBS (default 2),
# DIST_CMAKE_ARGS (extra configure arguments, e.g. -DDIST_ENABLE_SANITIZERS=ON).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DIST_BUILD_DIR:-$root/build}
llvm=/usr/lib/llvm-22

packages=(cmake ninja-build g++ ccache python3 libgtest-dev mpich libmpich-dev
          libmimalloc-dev llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
          clang-22 libclang-rt-22-dev clang-format-22 pybind11-dev python3-dev
          python3-numpy python3-pytest pyflakes3 black libopenblas-dev
          python3-mpi4py iproute2)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# PyTorch is the GPT model's independent oracle
# (test/Integration/gpt-model-torch.test), optional: without it that test is
# unsupported. Its recommendations (a desktop stack) are not needed.
if ! dpkg-query -W -f='${Status}' python3-torch 2>/dev/null | grep -q "install ok installed"; then
  echo "bootstrap: installing python3-torch" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  { $sudo apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      python3-torch >/dev/null; } ||
    echo "bootstrap: python3-torch is not installed; the PyTorch oracle test will be skipped" >&2
fi

if [ ! -f "$build/build.ninja" ]; then
  # shellcheck disable=SC2086
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache \
    -DMLIR_DIR="$llvm/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$llvm/bin/lit" \
    -DPython3_EXECUTABLE=/usr/bin/python3 \
    ${DIST_CMAKE_ARGS:-} >/dev/null
fi
ninja -C "$build" -j "${DIST_JOBS:-2}" "$@" >&2
