"""Checks a cost-model file written by dist-run --calibrate, or (--report)
that an overlap report made with one estimates over 100 us for the GPT
step, where the default constants (a 100 TFLOP/s machine) give about 10.

  calibrate_check.py FILE PROCESSES
  calibrate_check.py --report JSON|-
  calibrate_check.py --numbers FILE JSON|-

With --numbers, the report is of collectives.mlir (Inputs/): its comm_us
must be what the file's latency and bandwidth terms give for those
collectives, computed here (a reader that mixes up the terms, or their
units, is a wrong number, not a wrong text).
"""
import json
import math
import sys

# The collectives a cost-model file measures.
KINDS = ("allreduce", "broadcast", "all-gather", "reduce-scatter", "all-to-all")


def fail(message):
    print(f"FAILED: {message}")
    sys.exit(1)


def check_file(path, processes):
    with open(path) as f:
        model = json.load(f)
    if model.get("dist-cost-model") != 1:
        fail("no 'dist-cost-model': 1")
    if model["measured-on"]["processes"] != processes:
        fail(f"measured on {model['measured-on']['processes']} processes")
    rates = model["matmul-tflops"]
    if sorted(rates) != ["matmul", "matmul-grad", "matmul-transpose-x", "matmul-transpose-y"]:
        fail(f"matmul rates {sorted(rates)}")
    for form, rate in rates.items():
        # A 2-core machine runs loop nests at 1e-4 to 1e-1 TFLOP/s.
        if not (math.isfinite(rate) and 1e-6 < rate < 1.0):
            fail(f"{form}: {rate} TFLOP/s")
    # Elementwise code on a 2-core machine streams at 0.1 to 100 GB/s; the
    # point it came from is the second call's (a first call's page faults
    # would make it several times slower).
    memory = model["memory-gbps"]
    if not (math.isfinite(memory) and 0.1 < memory < 100):
        fail(f"memory: {memory} GB/s")
    [stream] = [p for p in model["measured-on"]["points"] if p["op"] == "memory"]
    if not math.isclose(stream["bytes"] / (stream["median-us"] * 1e3), memory, rel_tol=1e-9):
        fail(f"memory: {memory} GB/s is not the point {stream}")
    groups = {}
    expected = [g for g in range(2, processes + 1) if processes % g == 0]
    for kind in KINDS:
        groups[kind] = [link["group-size"] for link in model[kind]]
        if groups[kind] != expected:
            fail(f"{kind} groups {groups[kind]}, expected {expected}")
        for link in model[kind]:
            if not (0 <= link["latency-us"] < 1e6 and 0 < link["bandwidth-gbps"] < 1e4):
                fail(f"{kind} link {link}")
    points = model["measured-on"]["points"]
    if any(p["median-us"] <= 0 for p in points):
        fail("a measured point is not positive")
    print(
        f"ok: {len(rates)} matmul rates, a memory rate, "
        + ", ".join(f"{kind} groups {groups[kind]}" for kind in KINDS)
        + f", {len(points)} measured points"
    )


def check_report(source):
    text = sys.stdin.read() if source == "-" else open(source).read()
    report = json.loads(text)
    for function in report["functions"]:
        if function["compute_us"] > 0:
            # The defaults make the step about 10 us; a 2-core machine's
            # measured rates make it hundreds to thousands.
            if function["makespan_us"] < 100:
                fail(f"@{function['name']} makespan {function['makespan_us']} us")
            print(f"ok: the report of @{function['name']} is the file's (over 100 us)")


def check_fit(model):
    """The fitted line goes through the smallest and the largest message's
    medians, which dist-run fits it to (only those: the others depend on
    how loaded the machine was, as any timing does). A fit in the wrong unit
    or with the terms swapped misses them by orders of magnitude."""
    for kind in KINDS:
        for link in model[kind]:
            points = sorted(
                (p["bytes"], p["median-us"])
                for p in model["measured-on"]["points"]
                if p["op"] == kind and p["group-size"] == link["group-size"]
            )
            predict = lambda size: link["latency-us"] + size / (link["bandwidth-gbps"] * 1e3)
            ends = [points[-1]]
            # The smallest, unless the latency was clamped at zero.
            if link["latency-us"] > 0:
                ends.append(points[0])
            for size, median in ends:
                if not math.isclose(predict(size), median, rel_tol=0.01):
                    fail(
                        f"{kind} in groups of {link['group-size']}: the fit predicts "
                        f"{predict(size):.2f} us for {size} bytes, measured {median} us"
                    )


# Inputs/collectives-cost.mlir: (op, bytes, group size) of each collective
# in the order the report meets them; the bytes of an all-gather are its
# result's, of a reduce-scatter its operand's, of an all-to-all the shard's.
REPORTED = [
    ("allreduce", 4096 * 4, 2),
    ("allreduce", 262144 * 4, 2),
    ("broadcast", 65536 * 4, 2),
    ("all-gather", 65536 * 4, 2),
    ("reduce-scatter", 65536 * 4, 2),
    ("all-to-all", 65536 * 4, 2),
]


def check_numbers(path, source):
    with open(path) as f:
        model = json.load(f)
    check_fit(model)
    text = sys.stdin.read() if source == "-" else open(source).read()
    [function] = json.loads(text)["functions"]
    expected = 0.0
    for op, size, group in REPORTED:
        [link] = [l for l in model[op] if l["group-size"] == group]
        expected += link["latency-us"] + size / (link["bandwidth-gbps"] * 1e3)
    got = function["comm_us"]
    if not math.isclose(got, expected, rel_tol=1e-6):
        fail(f"@{function['name']}: comm {got} us, the file's terms give {expected} us")
    print(
        "ok: the fit goes through the measured end points, and the report's "
        "communication is the file's latency + bytes / bandwidth"
    )


if __name__ == "__main__":
    if sys.argv[1] == "--report":
        check_report(sys.argv[2])
    elif sys.argv[1] == "--numbers":
        check_numbers(sys.argv[2], sys.argv[3])
    else:
        check_file(sys.argv[1], int(sys.argv[2]))
