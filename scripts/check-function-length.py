#!/usr/bin/env python3
"""Lists every function in the C++ files under the given folders that is
longer than --max lines (default 100), and exits 1 if there is one.

    scripts/check-function-length.py [--max N] DIR...

A function is a definition at namespace or class scope: a line that ends
with "{" after a parameter list, up to the brace that closes it. The count
is of source lines, comments and blank lines included. Lambdas count with
the function that holds them, which is the point: a long function split
into lambdas is still one long function to read.
"""

import argparse
import pathlib
import re
import sys

NOT_A_FUNCTION = re.compile(
    r"\s*(namespace|struct|class|enum|union|extern|if|for|while|switch|"
    r"else|do|try|case|return)\b"
)


def code_of(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//")[0]


def long_functions(path, limit):
    lines = path.read_text(errors="replace").split("\n")
    depth, start, start_depth = 0, None, 0
    for i, line in enumerate(lines):
        code = code_of(line)
        recent = "".join(code_of(x) for x in lines[max(0, i - 3) : i + 1])
        if (
            start is None
            and depth <= 2
            and code.rstrip().endswith("{")
            and ")" in recent
            and not NOT_A_FUNCTION.match(code)
            and "=" not in code.split("(")[0]
        ):
            start, start_depth = i, depth
        depth += code.count("{") - code.count("}")
        if start is not None and depth <= start_depth:
            if i - start + 1 > limit:
                yield start + 1, i - start + 1, lines[start].strip()
            start = None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=100)
    parser.add_argument("dirs", nargs="+")
    args = parser.parse_args()
    found = 0
    files = 0
    for d in args.dirs:
        for path in sorted(pathlib.Path(d).rglob("*")):
            if path.suffix not in (".cpp", ".h"):
                continue
            files += 1
            for line, length, head in long_functions(path, args.max):
                print(f"{path}:{line}: {length} lines: {head}")
                found += 1
    print(f"check-function-length: {files} files, {found} functions over " f"{args.max} lines")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
