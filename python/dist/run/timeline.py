"""An SVG timeline of a dist-run --trace file: a lane per rank and stream.

  python3 -m dist.run.timeline run.json -o run.svg

Compute is blue, communication the compute stream waits for (blocking
collectives and waits: exposed) red, issues orange, asynchronous
collectives in flight on their streams green; each bar's tooltip names the
op, and a thin dark bracket above a lane spans each function call. A reader
sees at a glance whether communication overlaps compute.
"""
import argparse
import json
import math
from xml.sax.saxutils import escape, quoteattr

COLORS = {"compute": "#4c8bd6", "collective": "#d64c4c", "wait": "#d64c4c",
          "issue": "#f0a33c"}
ASYNC = "#4caf50"
WIDTH, LABEL, LANE, GAP = 1100, 190, 18, 4


def tick_step(span):
    """1, 2 or 5 times a power of ten, giving four to ten ticks over `span`."""
    if not span > 0:
        return 1.0
    step = 10.0 ** math.floor(math.log10(span / 8))
    for factor in (1, 2, 5, 10):
        if span / (step * factor) <= 10:
            return step * factor
    return step * 10


def time_axis(y, x0, scale, span):
    """SVG elements of a time axis from x0 (time 0) at `scale` px per us,
    ticks labelled in us, or ms from 5 ms on."""
    step = tick_step(span)
    unit, div = ("ms", 1000.0) if span >= 5000 else ("us", 1.0)
    out = ['<g class="axis">',
           f'<line x1="{x0}" y1="{y}" x2="{x0 + span * scale:.2f}" y2="{y}" stroke="#444"/>']
    i = 0
    while i * step <= span * (1 + 1e-9):
        t = i * step
        x = x0 + t * scale
        out.append(f'<line x1="{x:.2f}" y1="{y}" x2="{x:.2f}" y2="{y + 4}" stroke="#444"/>')
        out.append(f'<text x="{x:.2f}" y="{y + 15}" text-anchor="middle">'
                   f'{t / div:g} {unit}</text>')
        i += 1
    out.append("</g>")
    return out


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
    height = top + len(lanes) * (LANE + GAP) + 80
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
    y = top + len(lanes) * (LANE + GAP)
    out += time_axis(y, LABEL, scale, end)
    y += 30
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
