#!/usr/bin/env bash
# Regenerates the references in docs/ from the TableGen descriptions.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DIST_BUILD_DIR:-$root/build}
"$root/scripts/bootstrap.sh" mlir-doc
for f in "$build"/docs/*/*.md; do
  rel=${f#"$build/docs/"}
  mkdir -p "$root/docs/$(dirname "$rel")"
  cp "$f" "$root/docs/$rel"
done
