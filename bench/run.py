#!/usr/bin/env python3
"""Measures dist-opt's compile speed and memory against its parse+print floor,
upstream mlir-opt, and MLIR's shard dialect doing the same job.

  run.py [--sizes 10000,100000,1000000] [--reps 3] [--out DIR]

For each size and program shape (one function, one function per layer):
  floor          dist-opt parse + verify + print
  <pass>         each dist pass alone
  pipeline       --dist-auto-parallel (verifying after every pass, the
                 dist-opt/mlir-opt default)
  pipeline-nv    the same with --verify-each=false (as a compiler embedding
                 the passes runs them); the output is still verified on parse
  bytecode-*     the same program as bytecode, read and written as bytecode:
                 its floor, the pipeline and the pipeline without verify-each
  mlir-opt       upstream mlir-opt --canonicalize on the generic form
                 (--allow-unregistered-dialect), and its own floor
  shard          sharding-propagation + shard-partition on the same layers
                 written with the shard dialect, and its own floor
  <pass>-alone, passes, passes-1thread
                 the passes' own wall time (no parse, print or verifier),
                 from --dist-pass-wall-time, on all threads and on one; the
                 ratio of the last two is the thread speedup. (--mlir-timing
                 times every function on every thread, which on several
                 threads costs as much as the passes and hides the speedup.)
Wall time is the median of --reps runs; peak RSS is the child's maximum
resident set. Writes results.json and results.md to --out.
"""
import argparse
import json
import re
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PASSES = [
    "dist-dropout-seed",
    "dist-parallel-embedding",
    "dist-amp-check-finite",
    "dist-matmul-grad-overlap",
    "dist-assign-streams",
]
SHARD_PIPELINE = "builtin.module(func.func(sharding-propagation,shard-partition))"


WALL_TOTAL = re.compile(r"^dist-pass-wall-time: ([\d.]+) s  total$", re.M)


def pass_seconds(stderr):
    """The passes' wall time printed by --dist-pass-wall-time."""
    m = WALL_TOTAL.search(stderr)
    return float(m.group(1)) if m else 0.0


def run_once(cmd, timeout):
    """Wall seconds, peak RSS (MiB) and pass-only seconds (when the command
    asks for --mlir-timing) of one run, or None on failure/timeout."""
    # stderr goes to a file, not a pipe: a child that prints more than a
    # pipe holds would block on it while this loop waits for it to exit.
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                return None, "timeout"
            time.sleep(0.005)
        wall = time.perf_counter() - start
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        return None, stderr[-400:]
    return (wall, usage.ru_maxrss / 1024.0, pass_seconds(stderr)), None


def measure(cmd, reps, timeout):
    walls, rss, passes = [], [], []
    for _ in range(reps):
        result, error = run_once(cmd, timeout)
        if result is None:
            return {"error": error}
        walls.append(result[0])
        rss.append(result[1])
        passes.append(result[2])
    out = {"wall_s": statistics.median(walls), "rss_mib": max(rss), "runs": walls}
    if "--dist-pass-wall-time" in cmd:
        out["pass_s"] = statistics.median(passes)
    return out


def count_ops(path):
    """Ops in a generated file: one per line that defines or returns a value."""
    with open(path) as f:
        return sum(1 for line in f if " = " in line or line.lstrip().startswith("return"))


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--shapes", default="one,layers")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--dist-opt", default=os.path.join(HERE, "..", "build", "bin", "dist-opt"))
    parser.add_argument("--mlir-opt", default="/usr/lib/llvm-22/bin/mlir-opt")
    parser.add_argument("--skip", default="", help="comma-separated configs to skip")
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    skip = set(filter(None, args.skip.split(",")))
    dist_opt, mlir_opt = args.dist_opt, args.mlir_opt
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            for size in [int(s) for s in args.sizes.split(",")]:
                dist = os.path.join(tmp, f"dist-{shape}-{size}.mlir")
                generic = os.path.join(tmp, f"generic-{shape}-{size}.mlir")
                shard = os.path.join(tmp, f"shard-{shape}-{size}.mlir")
                gen = [
                    sys.executable,
                    os.path.join(HERE, "gen.py"),
                    "--ops",
                    str(size),
                    "--shape",
                    shape,
                ]
                subprocess.run(gen + ["-o", dist], check=True)
                subprocess.run(gen + ["--dialect", "shard", "-o", shard], check=True)
                subprocess.run(
                    [dist_opt, dist, "--mlir-print-op-generic", "-o", generic], check=True
                )
                bytecode = os.path.join(tmp, f"dist-{shape}-{size}.mlirbc")
                # Not checked: a dist-opt that cannot write it fails the
                # bytecode configurations, which are reported as such.
                subprocess.run(
                    [dist_opt, dist, "--emit-bytecode", "-o", bytecode],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                out = os.path.join(tmp, "out.mlir")

                def on(tool, source, *flags):
                    return [tool, source, *flags, "-o", out]

                nv, wall, one = (
                    "--verify-each=false",
                    "--dist-pass-wall-time",
                    "--mlir-disable-threading",
                )
                auto, emit = "--dist-auto-parallel", "--emit-bytecode"
                configs = [("floor", on(dist_opt, dist))]
                configs += [(p, on(dist_opt, dist, f"--{p}")) for p in PASSES]
                configs += [(f"{p}-alone", on(dist_opt, dist, f"--{p}", nv, wall)) for p in PASSES]
                configs += [
                    ("pipeline", on(dist_opt, dist, auto)),
                    ("pipeline-nv", on(dist_opt, dist, auto, nv)),
                    ("pipeline-1thread", on(dist_opt, dist, auto, one)),
                    # The passes' own time (no parse, print or verifier).
                    ("passes", on(dist_opt, dist, auto, nv, wall)),
                    ("passes-1thread", on(dist_opt, dist, auto, nv, wall, one)),
                    ("mlir-opt-floor", on(mlir_opt, generic, "--allow-unregistered-dialect")),
                    (
                        "mlir-opt-canonicalize",
                        on(mlir_opt, generic, "--allow-unregistered-dialect", "--canonicalize"),
                    ),
                    # The bytecode route, bytecode in and out, against its
                    # own floor (read, verify, write).
                    ("bytecode-floor", on(dist_opt, bytecode, emit)),
                    ("bytecode-pipeline", on(dist_opt, bytecode, auto, emit)),
                    ("bytecode-pipeline-nv", on(dist_opt, bytecode, auto, nv, emit)),
                    ("shard-floor", on(mlir_opt, shard)),
                    ("shard", on(mlir_opt, shard, f"--pass-pipeline={SHARD_PIPELINE}")),
                ]
                row = {"shape": shape, "size": size, "ops": count_ops(dist), "configs": {}}
                for name, cmd in configs:
                    if name in skip:
                        continue
                    row["configs"][name] = measure(cmd, args.reps, args.timeout)
                    print(
                        f"{shape:6} {size:>8} {name:24} {row['configs'][name].get('wall_s', row['configs'][name].get('error'))}",
                        file=sys.stderr,
                        flush=True,
                    )
                results.append(row)

    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"reps": args.reps, "results": results}, f, indent=1)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(render(results))
    print(render(results))
    failed = [
        (row["shape"], row["size"], name)
        for row in results
        for name, config in row["configs"].items()
        if "error" in config
    ]
    for shape, size, name in failed:
        print(f"error: {name} failed on {shape} {size}", file=sys.stderr)
    return 1 if failed else 0


def fmt(config, floor=None):
    if config is None:
        return "-"
    if "error" in config:
        return "timeout" if config["error"] == "timeout" else "error"
    text = f"{config['wall_s']:.2f} s"
    if floor and "wall_s" in floor:
        text += f" ({config['wall_s'] / floor['wall_s']:.2f}x)"
    return text


def render(results):
    lines = [
        "| shape | ops | floor | "
        + " | ".join(PASSES)
        + " | pipeline | pipeline, no verify-each | pipeline, 1 thread | RSS floor / pipeline"
        " | mlir-opt floor | mlir-opt canonicalize | shard floor | shard |",
        "|" + "---|" * (11 + len(PASSES)),
    ]
    for row in results:
        c = row["configs"]
        floor = c.get("floor")
        rss = "-"
        if floor and "rss_mib" in floor and "rss_mib" in c.get("pipeline", {}):
            rss = (
                f"{floor['rss_mib']:.0f} / {c['pipeline']['rss_mib']:.0f} MiB "
                f"({c['pipeline']['rss_mib'] / floor['rss_mib']:.2f}x)"
            )
        cells = [row["shape"], str(row["ops"]), fmt(floor)]
        cells += [fmt(c.get(p), floor) for p in PASSES]
        cells += [
            fmt(c.get("pipeline"), floor),
            fmt(c.get("pipeline-nv"), floor),
            fmt(c.get("pipeline-1thread"), floor),
            rss,
            fmt(c.get("mlir-opt-floor")),
            fmt(c.get("mlir-opt-canonicalize"), c.get("mlir-opt-floor")),
            fmt(c.get("shard-floor")),
            fmt(c.get("shard"), c.get("shard-floor")),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    # Bytecode in and out.
    lines.append("")
    lines.append(
        "| shape | ops | bytecode floor (read, verify, write) | pipeline | "
        "pipeline, no verify-each | text floor |"
    )
    lines.append("|---|---|---|---|---|---|")
    for row in results:
        c = row["configs"]
        bc = c.get("bytecode-floor")
        lines.append(
            "| "
            + " | ".join(
                [
                    row["shape"],
                    str(row["ops"]),
                    fmt(bc),
                    fmt(c.get("bytecode-pipeline"), bc),
                    fmt(c.get("bytecode-pipeline-nv"), bc),
                    fmt(c.get("floor")),
                ]
            )
            + " |"
        )
    # The passes' own wall time (--dist-pass-wall-time, no verify-each).
    lines.append("")
    lines.append(
        "| shape | ops | "
        + " | ".join(f"{p} alone" for p in PASSES)
        + " | pipeline passes | pipeline passes, 1 thread | thread speedup |"
    )
    lines.append("|" + "---|" * (5 + len(PASSES)))
    for row in results:
        c = row["configs"]
        cell = lambda name: (f"{c[name]['pass_s']:.3f} s" if "pass_s" in c.get(name, {}) else "-")
        speedup = "-"
        if c.get("passes", {}).get("pass_s") and "pass_s" in c.get("passes-1thread", {}):
            speedup = f"{c['passes-1thread']['pass_s'] / c['passes']['pass_s']:.2f}x"
        lines.append(
            "| "
            + " | ".join(
                [row["shape"], str(row["ops"])]
                + [cell(f"{p}-alone") for p in PASSES]
                + [cell("passes"), cell("passes-1thread"), speedup]
            )
            + " |"
        )
    # Scaling: time(largest) / time(previous size) per config, per shape.
    lines.append("")
    lines.append(
        "| shape | config (`-alone`, `passes*`: pass time only) | time ratio between consecutive sizes (10x ops) |"
    )
    lines.append("|---|---|---|")
    for shape in sorted({r["shape"] for r in results}):
        rows = sorted((r for r in results if r["shape"] == shape), key=lambda r: r["size"])
        names = ["floor"] + PASSES + ["pipeline", "pipeline-nv", "shard"]
        names += [f"{p}-alone" for p in PASSES] + ["passes", "passes-1thread"]
        for name in names:
            key = "pass_s" if name.endswith("-alone") or name.startswith("passes") else "wall_s"
            ratios = []
            for a, b in zip(rows, rows[1:]):
                ca, cb = a["configs"].get(name, {}), b["configs"].get(name, {})
                if key in ca and key in cb and ca[key] > 0:
                    ratios.append(f"{a['size']}->{b['size']}: {cb[key] / ca[key]:.1f}")
            if ratios:
                lines.append(f"| {shape} | {name} | {', '.join(ratios)} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
