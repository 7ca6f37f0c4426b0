"""Deprecated spelling of dist.run.timeline (kept as an alias):

  python3 -m dist.timeline run.json -o run.svg
"""
import sys

from .run.timeline import main, timeline_svg

__all__ = ["main", "timeline_svg"]

if __name__ == "__main__":
    sys.exit(main())
