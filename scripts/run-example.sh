#!/usr/bin/env bash
# The main job: builds dist-opt if needed and runs its rewrites on a shipped
# example.
#
#   scripts/run-example.sh [example.mlir] [extra dist-opt flags...]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DIST_BUILD_DIR:-$root/build}
# Build quietly; show the build's output only when it fails.
if ! log=$("$root/scripts/bootstrap.sh" dist-opt 2>&1); then
  printf '%s\n' "$log" >&2
  exit 1
fi

example=$root/examples/gpt_layer.mlir
if [ $# -gt 0 ] && [[ "$1" == *.mlir ]]; then
  example=$1
  shift
fi
# Without flags, run the default pipeline and print the overlap report (on
# stderr, after the IR on stdout): on the GPT layer, annotated on its
# signature only, completion places every collective, and the report says
# what a step moves, holds and hides at the cost model's constants.
if [ $# -eq 0 ]; then
  set -- --dist-auto-parallel --dist-overlap-report
fi
exec "$build/bin/dist-opt" "$example" "$@"
