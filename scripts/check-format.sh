#!/usr/bin/env bash
# Checks that every C and C++ source of the project is formatted as
# .clang-format (LLVM style) says; lists the files that are not and exits 1.
# With --fix, formats them in place instead.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
format=${CLANG_FORMAT:-clang-format-22}
if ! command -v "$format" >/dev/null; then
  echo "check-format: $format not found (apt-get install clang-format-22)" >&2
  exit 2
fi
mapfile -t files < <(cd "$root" && find include lib tools runtime unittests \
  test/lib test/CAPI examples python -type f \
  \( -name '*.cpp' -o -name '*.h' -o -name '*.c' \) 2>/dev/null | sort)
cd "$root"
if [ "${1:-}" = "--fix" ]; then
  "$format" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$format" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  printf 'check-format: not formatted (run scripts/check-format.sh --fix):\n' >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
