#!/usr/bin/env python3
"""Runs the ```python blocks of a Markdown page in order, in one namespace,
as a reader would paste them: DOC [BLOCK...] (1-based; all by default).
test/Integration is on the path (the pages import torch_models). Prints
each block's number and the names it bound."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main(argv):
    text = open(argv[0]).read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    chosen = [int(n) for n in argv[1:]] or range(1, len(blocks) + 1)
    namespace = {"__name__": "__doc__"}
    for n in chosen:
        before = set(namespace)
        exec(compile(blocks[n - 1], f"{argv[0]} block {n}", "exec"), namespace)
        print(f"block {n}: ok ({', '.join(sorted(set(namespace) - before - {'__builtins__'}))})")
    return namespace


if __name__ == "__main__":
    ns = main(sys.argv[1:])
    if "loss" in ns:
        print(f"loss {float(ns['loss']):.6f}")
