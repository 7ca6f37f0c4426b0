"""An SVG timeline of a dist-run --trace file: a lane per rank and stream.

  python3 -m dist.timeline run.json -o run.svg

Compute is blue, communication the compute stream waits for (blocking
collectives and waits: exposed) red, issues orange, asynchronous
collectives in flight on their streams green; each bar's tooltip names the
op, and a thin dark bracket above a lane spans each function call. A reader
sees at a glance whether communication overlaps compute.
"""
import argparse
import json
from xml.sax.saxutils import escape, quoteattr

COLORS = {"compute": "#4c8bd6", "collective": "#d64c4c", "wait": "#d64c4c",
          "issue": "#f0a33c"}
ASYNC = "#4caf50"
WIDTH, LABEL, LANE, GAP = 1100, 190, 18, 4


def timeline_svg(trace):
    """The SVG text for `trace` (a dict as dist-run --trace writes it)."""
    events = trace["traceEvents"]
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e["ph"] == "M" and e["name"] == "thread_name"}
    timed = [e for e in events if e["ph"] == "X"]
    lanes = sorted({(e["pid"], e["tid"]) for e in timed})
    end = max((e["ts"] + e["dur"] for e in timed), default=1.0) or 1.0
    scale = (WIDTH - LABEL - 20) / end
    top = 40
    height = top + len(lanes) * (LANE + GAP) + 50
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
           f'<text x="10" y="20" font-size="14">dist-run trace: {len(lanes)} lanes, '
           f'{end / 1000:.2f} ms</text>']
    for row, (pid, tid) in enumerate(lanes):
        y = top + row * (LANE + GAP)
        name = f"rank {pid}: {threads.get((pid, tid), f'thread {tid}')}"
        out.append(f'<text x="10" y="{y + LANE - 5}">{escape(name)}</text>')
        out.append(f'<line x1="{LABEL}" y1="{y + LANE / 2}" x2="{WIDTH - 20}" '
                   f'y2="{y + LANE / 2}" stroke="#ddd"/>')
        for e in (e for e in timed if (e["pid"], e["tid"]) == (pid, tid)):
            color = ASYNC if tid >= 100 else COLORS.get(e["cat"], "#888")
            x = LABEL + e["ts"] * scale
            w = max(e["dur"] * scale, 0.5)
            tip = f'{e["name"]}: {e["dur"] / 1000:.3f} ms at {e["ts"] / 1000:.3f} ms'
            if e["cat"] == "function":
                # A call spans the bars of its body: a thin bracket above them.
                out.append(f'<rect x="{x:.2f}" y="{y - 3}" width="{w:.2f}" height="2" '
                           f'fill="#333" class="function"><title>@{escape(tip)}</title></rect>')
                continue
            out.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{LANE}" '
                       f'fill="{color}" class={quoteattr(e["cat"])}>'
                       f'<title>{escape(tip)}</title></rect>')
    y = top + len(lanes) * (LANE + GAP) + 20
    x = LABEL
    for label, color in [("compute", COLORS["compute"]), ("exposed communication", "#d64c4c"),
                         ("issue", COLORS["issue"]), ("in flight on a stream", ASYNC)]:
        out.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{color}"/>')
        out.append(f'<text x="{x + 16}" y="{y + 10}">{label}</text>')
        x += 40 + 7 * len(label)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    with open(args.trace) as f:
        trace = json.load(f)
    with open(args.output, "w") as f:
        f.write(timeline_svg(trace))


if __name__ == "__main__":
    main()
