"""Parses each `// -----` part of a file through the Python package (the C
API's parser) and says how many were refused for an empty reassociation
group: upstream-verifier-crash.mlir."""
import sys

import dist

parts = open(sys.argv[1]).read().split("// -----")
parsed = refused = 0
for text in parts:
    try:
        dist.Module.parse(text)
        parsed += 1
    except dist.DiagnosticError as e:
        refused += "is empty: every group must name at least one dim" in str(e)
print(
    f"parsed {parsed} of {len(parts)} inputs; refused {refused} with an error naming an empty group"
)
