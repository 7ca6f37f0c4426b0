"""Deprecated spelling of dist.run's Python API (kept as an alias)."""
from .run import RunError, build_native, calibrate, parse_rank_output, run_on_mpi

__all__ = ["RunError", "build_native", "calibrate", "parse_rank_output", "run_on_mpi"]
