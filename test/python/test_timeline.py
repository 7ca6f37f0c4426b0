"""The SVG timeline of a trace (dist.timeline, drawn by the C++ drawer the
overlap report's svg-file uses): valid XML, a group per rank with a labelled
lane per stream, a bar per interval, exposed communication red, op names
escaped; a text that is no trace is a ValueError."""
import xml.etree.ElementTree as ET

import pytest

from dist.timeline import timeline_svg

SVG = "{http://www.w3.org/2000/svg}"


def test_timeline_lanes_bars_and_colors():
    name = 'x.mlir:1:2: dist.allreduce "<sum>" & co'
    X = lambda cat, ts, dur, tid=0, pid=0, n="compute": {
        "name": n,
        "cat": cat,
        "ph": "X",
        "ts": ts,
        "dur": dur,
        "pid": pid,
        "tid": tid,
    }
    trace = {
        "traceEvents": [
            {
                "ph": "M",
                "name": "thread_name",
                "pid": 0,
                "tid": 0,
                "args": {"name": "compute stream"},
            },
            {"ph": "M", "name": "thread_name", "pid": 0, "tid": 100, "args": {"name": "mp stream"}},
            X("compute", 0, 10),
            X("issue", 10, 1, n="issue " + name),
            X("compute", 11, 20),
            X("wait", 31, 5, n="wait " + name),
            X("collective", 10, 26, tid=100, n=name),
            X("collective", 0, 40, pid=1, n=name),
            X("function", 0, 36, n="step"),
        ]
    }
    root = ET.fromstring(timeline_svg(trace))
    groups = {
        g.get("data-name"): [t.text for t in g.iter(SVG + "text")]
        for g in root.iter(SVG + "g")
        if g.get("class") == "process"
    }
    assert groups == {
        "rank 0": ["rank 0", "compute stream", "mp stream"],
        "rank 1": ["rank 1", "thread 0"],
    }
    bars = [r for r in root.iter(SVG + "rect") if r.find(SVG + "title") is not None]
    assert len(bars) == 7
    # A function call is a thin bracket above its lane, not a bar over it.
    [call] = [r for r in bars if r.get("class") == "function"]
    assert float(call.get("height")) < 5 and "@step" in call.find(SVG + "title").text
    fills = {r.get("class"): set() for r in bars}
    for r in bars:
        fills[r.get("class")].add(r.get("fill"))
    assert fills["wait"] == {"#d64c4c"} and fills["compute"] == {"#4c8bd6"}
    # The blocking collective on rank 1 is exposed (red); the async one on
    # the mp stream is green.
    assert fills["collective"] == {"#d64c4c", "#4caf50"}
    assert any(name in r.find(SVG + "title").text for r in bars)
    # Bars are placed in time order along the lane.
    compute = sorted(float(r.get("x")) for r in bars if r.get("class") == "compute")
    assert compute == sorted(compute) and compute[0] < compute[1]


def test_timeline_has_a_time_axis_with_a_scale():
    X = lambda ts, dur: {
        "name": "c",
        "cat": "compute",
        "ph": "X",
        "ts": ts,
        "dur": dur,
        "pid": 0,
        "tid": 0,
    }
    # 148 us: ticks every 20 us, labelled in us, at the bars' scale.
    root = ET.fromstring(timeline_svg({"traceEvents": [X(0, 16), X(16, 132)]}))
    [axis] = [g for g in root.iter(SVG + "g") if g.get("class") == "axis"]
    ticks = [t.text for t in axis.iter(SVG + "text")]
    assert ticks == [f"{t} us" for t in range(0, 141, 20)]
    xs = {t.text: float(t.get("x")) for t in axis.iter(SVG + "text")}
    bars = sorted(
        (float(r.get("x")), float(r.get("width")))
        for r in root.iter(SVG + "rect")
        if r.get("class") == "compute"
    )
    # The second bar starts at 16 us: 0.8 of the way from 0 us to 20 us.
    assert abs(bars[1][0] - (xs["0 us"] + 0.8 * (xs["20 us"] - xs["0 us"]))) < 0.01
    # 12 ms: labelled in ms.
    root = ET.fromstring(timeline_svg({"traceEvents": [X(0, 12000)]}))
    [axis] = [g for g in root.iter(SVG + "g") if g.get("class") == "axis"]
    assert [t.text for t in axis.iter(SVG + "text")] == [f"{t} ms" for t in range(0, 13, 2)]


@pytest.mark.parametrize(
    "trace, why",
    [
        ({}, "no 'traceEvents' array"),
        ({"dist-trace": 2, "traceEvents": []}, "trace format version 2; this dist reads version 1"),
        (
            {"traceEvents": [{"ph": "X", "name": "c", "pid": 0, "tid": 0, "ts": 0, "dur": 1}]},
            "event 0 lacks a name, category",
        ),
        (
            {"traceEvents": [{"ph": "X", "name": "c", "pid": 0, "tid": 0, "ts": 0}]},
            "event 0 lacks a name, category, time, duration, process or thread",
        ),
        (
            {"traceEvents": [{"ph": "X", "name": "c", "pid": 0, "tid": 0, "ts": 0, "dur": -1}]},
            "event 0 lacks",
        ),
    ],
)
def test_timeline_refuses_what_is_no_trace(trace, why):
    with pytest.raises(ValueError, match=why):
        timeline_svg(trace)


def test_timeline_command_line(tmp_path, capsys):
    from dist.run import timeline

    good, bad = tmp_path / "t.json", tmp_path / "bad.json"
    good.write_text(
        '{"traceEvents": [{"ph": "X", "name": "c", "cat": "compute", '
        '"pid": 0, "tid": 0, "ts": 0, "dur": 5}]}'
    )
    bad.write_text('{"traceEvents": [{"ph": "X"}]}')
    assert timeline.main([str(good), "-o", str(tmp_path / "t.svg")]) == 0
    ET.parse(tmp_path / "t.svg")
    assert timeline.main([str(bad), "-o", str(tmp_path / "b.svg")]) == 1
    assert "bad.json: not a dist trace: event 0 lacks" in capsys.readouterr().err
    assert not (tmp_path / "b.svg").exists()
