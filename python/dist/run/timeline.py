"""An SVG timeline of a trace (what dist-run --trace measured, or what
--dist-overlap-report's trace-file estimated): a lane per process and stream.

  python3 -m dist.run.timeline run.json -o run.svg

Compute is blue, communication the compute stream waits for (blocking
collectives and waits: exposed) red, issues orange, asynchronous
collectives in flight on their streams green; each bar's tooltip names the
op, and a thin dark bracket above a lane spans each function call. A reader
sees at a glance whether communication overlaps compute.

The drawing is dist's one trace drawer (lib/Support/TraceSvg.cpp, through
the extension), the one --dist-overlap-report's svg-file uses.
"""
import argparse
import json
import sys

from .errors import RunError, fail
from .trace import read


def timeline_svg(trace):
    """The SVG text for `trace` (a dict in the run trace format); ValueError
    when it is not one."""
    from .. import _dist  # The extension: only drawing needs native code.

    return _dist._render_trace_svg(json.dumps(trace))


def main(argv=None):
    """The command line; returns the exit status."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("trace")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    try:
        try:
            svg = timeline_svg(read(args.trace))
        except ValueError as e:
            fail(f"{args.trace}: {e}")
        try:
            with open(args.output, "w") as f:
                f.write(svg)
        except OSError as e:
            fail(f"{args.output}: {e.strerror}")
    except RunError as e:
        print(f"error: {e.message}", file=sys.stderr)
        return e.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
