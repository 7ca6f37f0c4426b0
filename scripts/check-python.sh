#!/usr/bin/env bash
# Checks every Python file of the project with pyflakes (Debian's pyflakes3:
# unused or undefined names, imports, f-strings without placeholders), as
# check-format.sh checks the C++ files. Lit's configuration files are left
# out: lit defines their `config` itself. Lists what it finds and exits 1.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pyflakes=${PYFLAKES:-pyflakes3}
if ! command -v "$pyflakes" >/dev/null; then
  echo "check-python: $pyflakes not found (apt-get install pyflakes3)" >&2
  exit 2
fi
cd "$root"
mapfile -t files < <(
  { find python test bench scripts examples -type f -name '*.py' \
      ! -name 'lit.cfg.py' ! -name 'lit.site.cfg.py' 2>/dev/null
    # Python without the .py suffix: the tools' entry point template.
    echo tools/dist-run/dist-run.in; } | sort)
if ! "$pyflakes" "${files[@]}" >&2; then
  echo "check-python: pyflakes found the problems above" >&2
  exit 1
fi
echo "check-python: ${#files[@]} files clean"
