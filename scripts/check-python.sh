#!/usr/bin/env bash
# Checks every Python file of the project as check-format.sh checks the C++
# files: pyflakes (Debian's pyflakes3: unused or undefined names, imports,
# f-strings without placeholders) and black's formatting (Debian's black,
# settings in pyproject.toml; `scripts/check-python.sh --fix` reformats).
# Lit's configuration files are left out of pyflakes only: lit defines their
# `config` itself. Lists what it finds and exits 1.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pyflakes=${PYFLAKES:-pyflakes3}
black=${BLACK:-black}
for tool in "$pyflakes" "$black"; do
  if ! command -v "$tool" >/dev/null; then
    echo "check-python: $tool not found (apt-get install pyflakes3 black)" >&2
    exit 2
  fi
done
cd "$root"
mapfile -t files < <(
  { find python test bench scripts examples -type f -name '*.py' 2>/dev/null
    # Python without the .py suffix: the tools' entry point template.
    echo tools/dist-run/dist-run.in; } | sort)
if [ "${1:-}" = --fix ]; then
  exec "$black" -q "${files[@]}"
fi
mapfile -t flaked < <(printf '%s\n' "${files[@]}" | grep -v '/lit\.cfg\.py$')
status=0
if ! "$pyflakes" "${flaked[@]}" >&2; then
  echo "check-python: pyflakes found the problems above" >&2
  status=1
fi
if ! black_out=$("$black" --check "${files[@]}" 2>&1); then
  grep '^would reformat' <<<"$black_out" >&2 || echo "$black_out" >&2
  echo "check-python: black would reformat the files above" \
    "(scripts/check-python.sh --fix)" >&2
  status=1
fi
[ "$status" -eq 0 ] && echo "check-python: ${#files[@]} files clean"
exit "$status"
