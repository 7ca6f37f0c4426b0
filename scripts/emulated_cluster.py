#!/usr/bin/env python3
"""The emulated cluster's command line (python/dist/run/cluster.py says what
it makes): scripts/emulated_cluster.py {run,up,down,check} --help."""
import importlib.util
import os
import sys

_PATH = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "python", "dist", "run", "cluster.py"
)
_spec = importlib.util.spec_from_file_location("dist_emulated_cluster", _PATH)
cluster = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cluster)

if __name__ == "__main__":
    sys.exit(cluster.main())
