#!/usr/bin/env bash
# Interesting (exit 1, mlir-reduce's convention) while --dist-auto-parallel
# still reports the embedding's axis clash on the file.
"$DIST_OPT" "$1" --dist-auto-parallel -o /dev/null 2>&1 \
  | grep -q "ids batch dim is split over mesh axis 1" && exit 1
exit 0
