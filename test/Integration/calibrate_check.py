"""Checks a cost-model file written by dist-run --calibrate, or (--report)
that an overlap report made with one estimates in milliseconds, where the
default constants (a 100 TFLOP/s machine) give microseconds.

  calibrate_check.py FILE PROCESSES
  calibrate_check.py --report JSON|-
"""
import json
import math
import sys


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
    groups = {}
    expected = [g for g in range(2, processes + 1) if processes % g == 0]
    for kind in ("allreduce", "broadcast"):
        groups[kind] = [link["group-size"] for link in model[kind]]
        if groups[kind] != expected:
            fail(f"{kind} groups {groups[kind]}, expected {expected}")
        for link in model[kind]:
            if not (0 <= link["latency-us"] < 1e6 and 0 < link["bandwidth-gbps"] < 1e4):
                fail(f"{kind} link {link}")
    points = model["measured-on"]["points"]
    if any(p["median-us"] <= 0 for p in points):
        fail("a measured point is not positive")
    print(f"ok: {len(rates)} matmul rates, allreduce groups {groups['allreduce']}, "
          f"broadcast groups {groups['broadcast']}, {len(points)} measured points")


def check_report(source):
    text = sys.stdin.read() if source == "-" else open(source).read()
    report = json.loads(text)
    for function in report["functions"]:
        if function["compute_us"] > 0:
            if function["makespan_us"] < 1000:
                fail(f"@{function['name']} makespan {function['makespan_us']} us")
            print(f"ok: the report of @{function['name']} is in milliseconds")


if __name__ == "__main__":
    if sys.argv[1] == "--report":
        check_report(sys.argv[2])
    else:
        check_file(sys.argv[1], int(sys.argv[2]))
