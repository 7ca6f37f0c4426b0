"""Deprecated spelling of dist.run.timeline (kept as an alias):

  python3 -m dist.timeline run.json -o run.svg
"""
from .run.timeline import main, tick_step, time_axis, timeline_svg

__all__ = ["main", "tick_step", "time_axis", "timeline_svg"]

if __name__ == "__main__":
    main()
