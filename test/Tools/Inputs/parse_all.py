"""Parses each `// -----` part of a file through the Python package (the C
API's parser) and prints, per part, `part N: parsed` or `part N: refused`
followed by the errors, one per line, for FileCheck. A part is preceded by
as many empty lines as the file has before it, so that the errors name the
file's lines (as dist-opt -split-input-file's do)."""
import sys

import dist

parts = open(sys.argv[1]).read().split("// -----")
lines_before = 0
for index, text in enumerate(parts):
    padded = "\n" * lines_before + text
    lines_before += text.count("\n")
    try:
        dist.Module.parse(padded)
        print(f"part {index}: parsed")
    except dist.DiagnosticError as e:
        print(f"part {index}: refused")
        for line in str(e).splitlines()[1:]:
            print(f"  {line}")
