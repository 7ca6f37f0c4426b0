"""A calibrated cost model from Python: dist.calibrate measures this machine
(dist-run --calibrate), overlap_report estimates with the file and sets a
traced run beside the estimate."""
import json
import os

import pytest

import dist

X = "tensor<64x32xf32, #dist.tensor<#mesh, [-1, 0]>>"
W = "tensor<32x64xf32, #dist.tensor<#mesh, [0, -1]>>"
P = "tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>"
R = "tensor<64x64xf32, #dist.tensor<#mesh, [-1, -1]>>"
# A row-parallel linear layer: each process multiplies its column block of x
# by its row block of w, and an allreduce sums the partial products.
STEP = f"""
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @step(%x: {X}, %w: {W}) -> {R} {{
  %p = dist.matmul %x, %w : {X}, {W} -> {P}
  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : {P} -> {R}
  return %r : {R}
}}
func.func @main() {{
  %c = arith.constant dense<0.5> : tensor<64x32xf32>
  %d = arith.constant dense<0.5> : tensor<32x64xf32>
  %x = tensor.cast %c : tensor<64x32xf32> to {X}
  %w = tensor.cast %d : tensor<32x64xf32> to {W}
  %o = call @step(%x, %w) : ({X}, {W}) -> {R}
  return
}}
"""


@pytest.mark.skipif(not os.path.exists("/usr/bin/mpirun.mpich"), reason="needs MPICH")
def test_calibrate_estimate_and_measure(tmp_path):
    costs = tmp_path / "costs.json"
    model = dist.calibrate(2, str(costs))
    assert model["measured-on"]["processes"] == 2
    assert [link["group-size"] for link in model["allreduce"]] == [2]
    assert json.loads(costs.read_text()) == model
    module = dist.Module.parse(STEP)
    calibrated = dist.overlap_report(module, cost_model=str(costs))
    default = dist.overlap_report(module)
    [step] = [f for f in calibrated["functions"] if f["name"] == "step"]
    [fast] = [f for f in default["functions"] if f["name"] == "step"]
    # 2 * 64 * 32 * 64 flops at this machine's measured rate, not 100 TFLOP/s.
    rate = model["matmul-tflops"]["matmul"] * 1e12
    assert step["compute_us"] == pytest.approx(2 * 64 * 32 * 64 / rate * 1e6, rel=1e-3)
    # A CPU core, even through OpenBLAS (about 0.1 TFLOP/s here), is two to
    # three orders of magnitude below the default constants' GPU.
    assert step["compute_us"] > 100 * fast["compute_us"]
    trace = tmp_path / "run.json"
    dist.run_on_mpi(module, 2, trace=str(trace))
    report = dist.overlap_report(module, cost_model=str(costs), measured_trace=str(trace))
    [step] = [f for f in report["functions"] if f["name"] == "step"]
    assert step["measured"]["ranks"] == 2 and step["measured"]["calls"] == 1
    assert step["measured"]["makespan_us"] > 0
    assert set(step["error_pct"]) == {"compute", "comm", "exposed_comm", "makespan"}


def test_cost_model_errors_are_diagnostics(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"dist-cost-model": 2}')
    module = dist.Module.parse(STEP)
    with pytest.raises(dist.DiagnosticError, match="'dist-cost-model' must be 1"):
        dist.overlap_report(module, cost_model=str(bad))
