"""Modules: parsing, printing, walking, diagnostics, passes."""
import os

import pytest

import dist
from conftest import EXAMPLES

GPT = os.path.join(EXAMPLES, "gpt_block.mlir")

STEP = """
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @step(%x: tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>,
                %w: tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>,
                %d: tensor<4x16xf32, #dist.tensor<#mesh, [-1, 0]>>)
    -> (tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>,
        tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>) {
  %dx, %dw = dist.matmul_grad %x, %w, %d
      : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>,
        tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>,
        tensor<4x16xf32, #dist.tensor<#mesh, [-1, 0]>>
      -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>,
         tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>
  %r = dist.allreduce %dx on #mesh axes = [0] reduce = sum
      : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>
      -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  return %r, %dw : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>,
                   tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>
}
"""


def test_parse_print_roundtrip(ctx):
    m = dist.Module.parse(STEP, context=ctx)
    text = str(m)
    assert "dist.matmul_grad" in text
    assert str(dist.Module.parse(text, context=ctx)) == text
    generic = m.print(generic=True)
    assert '"dist.allreduce"' in generic
    assert str(dist.Module.parse(generic, context=ctx)) == text
    assert 'loc("step.mlir"' in dist.Module.parse(STEP, filename="step.mlir", context=ctx).print(
        debug_info=True
    )


def test_read(ctx):
    m = dist.Module.read(GPT, context=ctx)
    assert any(op.name == "dist.embedding" for op in m.walk())
    with pytest.raises(OSError):
        dist.Module.read("/nonexistent.mlir", context=ctx)


def test_walk_and_inspect(ctx):
    m = dist.Module.parse(STEP, filename="step.mlir", context=ctx)
    names = [op.name for op in m.walk()]
    assert names == ["func.func", "dist.matmul_grad", "dist.allreduce", "func.return"]
    [func] = m.operations
    [region] = func.regions
    [block] = region.blocks
    assert [str(a.type.dist.dims_mapping) for a in block.arguments] == [
        "[-1, -1]",
        "[-1, 0]",
        "[-1, 0]",
    ]
    ar = block.operations[1]
    assert ar.location.file == "step.mlir"
    assert ar.location.line == 14
    assert ar.location.column == 8
    attrs = ar.attributes
    assert isinstance(attrs["mesh"], dist.Mesh)
    assert attrs["mesh"].names == ["mp"]
    assert str(attrs["axes"]) == "array<i64: 0>"
    [operand] = ar.operands
    assert operand.type.dist.partial == {0: "sum"}
    [result] = ar.results
    assert result.type.dist.partial == {}
    assert "dist.allreduce" in str(ar)


def test_def_use_and_order(ctx):
    m = dist.Module.parse(STEP, context=ctx)
    [func] = m.operations
    [block] = func.regions[0].blocks
    grad, ar, ret = block.operations
    # Values and ops compare by identity, so they can key dicts.
    assert ar.operands[0] == grad.results[0]
    assert ar.operands[0] != grad.results[1]
    assert ar.operands[0].owner == grad and grad.results[0] in {grad.results[0]}
    assert block.arguments[0].owner is None
    assert ar.results[0].users == [ret]
    assert {op.name for op in block.arguments[0].users} == {"dist.matmul_grad"}
    assert grad.next == ar and ar.next == ret and ret.next is None
    m.run("dist-verify-distributions")
    with pytest.raises(RuntimeError, match="stale"):
        ar.next


def test_parse_errors_carry_every_diagnostic(ctx):
    text = "func.func @f() {\n  %x = dist.bogus\n}\n"
    with pytest.raises(dist.DiagnosticError) as info:
        dist.Module.parse(text, filename="bad.mlir", context=ctx)
    [d] = info.value.diagnostics
    assert (d.severity, d.file, d.line, d.column) == ("error", "bad.mlir", 2, 8)
    assert "dist.bogus" in d.message
    assert "bad.mlir:2:8: error:" in str(info.value)


def test_verifier_errors_have_notes(ctx):
    text = (
        "#mesh = #dist.mesh<shape = [2]>\n"
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %r = dist.allreduce %x on #mesh axes = [3] reduce = sum"
        " : tensor<4xf32> -> tensor<4xf32>\n"
        "  return %r : tensor<4xf32>\n}\n"
    )
    with pytest.raises(dist.DiagnosticError) as info:
        dist.Module.parse(text, context=ctx)
    [d] = info.value.diagnostics
    assert "mesh axis 3 is out of range" in d.message
    assert d.line == 3
    assert d.notes and d.notes[0].severity == "note"


DIVERGENT = """
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
!p = tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
!r = tensor<4xf32, #dist.tensor<#mesh, [-1]>>
func.func private @sync(%p: !p) -> !r {
  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : !p -> !r
  return %r : !r
}
func.func @f(%p: !p) {
  %c = dist.process_coord #mesh axis = 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %c, %c0 : index
  scf.if %first {
    %r = func.call @sync(%p) : (!p) -> !r
  }
  return
}
"""


def test_verify_distributions(ctx):
    # STEP checks; the call under a condition on the coordinate does not,
    # and the error is located, with the condition and the callee's
    # collective as notes.
    dist.Module.parse(STEP, context=ctx).verify_distributions()
    m = dist.Module.parse(DIVERGENT, filename="div.mlir", context=ctx)
    m.verify()  # MLIR's verifier has nothing against it
    with pytest.raises(dist.DiagnosticError) as info:
        m.verify_distributions()
    assert str(info.value).startswith("the distribution check failed")
    [d] = info.value.diagnostics
    assert (d.severity, d.file, d.line) == ("error", "div.mlir", 14)
    assert "calls a function that issues collectives" in d.message
    assert [(n.line, n.message) for n in d.notes] == [
        (13, "the 'scf.if' is here"),
        (10, "it differs along mesh axis 0 (mp) from this process's " "coordinate here"),
        (6, "@sync issues 'dist.allreduce' here"),
    ]


def test_run_pipeline_and_remarks(ctx):
    m = dist.Module.parse(STEP, context=ctx)
    remarks = m.run("dist-matmul-grad-overlap{remarks=true}")
    assert remarks == []
    names = [op.name for op in m.walk()]
    assert "dist.matmul_grad" not in names
    assert names.count("dist.matmul") == 2
    # A second run finds nothing to split and says why.
    m2 = dist.Module.parse(str(m), context=ctx)
    m2.run("func.func(dist-assign-streams)")
    # Function passes nest implicitly, as with dist-opt.
    m2.run("dist-assign-streams,canonicalize")
    assert any(op.name == "dist.wait" for op in m2.walk())
    # The cost gate keeps a split that would hide little, and says why.
    m3 = dist.Module.parse(STEP, context=ctx)
    remarks = m3.run("dist-matmul-grad-overlap{remarks=true min-overlap-ratio=1000}")
    [r] = remarks
    assert r.severity == "remark" and "not split" in r.message


def test_pipeline_errors(ctx):
    m = dist.Module.parse(STEP, context=ctx)
    with pytest.raises(dist.DiagnosticError, match="no-such-pass"):
        m.run("no-such-pass")
    with pytest.raises(dist.DiagnosticError, match="peak-tflops"):
        m.run("dist-overlap-report{peak-tflops=0}")
    # A failing pass: lowering a row-split embedding needs the rewrite.
    bad = dist.Module.parse(
        "#mesh = #dist.mesh<shape = [2]>\n"
        "func.func @f(%i: tensor<2xi64>, %w: tensor<4x3xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<2x3xf32> {\n"
        "  %e = dist.embedding %i, %w : tensor<2xi64>, tensor<4x3xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<2x3xf32>\n"
        "  return %e : tensor<2x3xf32>\n}\n",
        context=ctx,
    )
    with pytest.raises(dist.DiagnosticError) as info:
        bad.run("convert-dist-to-linalg")
    messages = [d.message for d in info.value.diagnostics]
    assert any("run --dist-parallel-embedding" in msg for msg in messages)
    assert any("failed to legalize" in msg for msg in messages)


def test_bad_pass_options_raise_with_the_reason_and_print_nothing(ctx, capfd):
    m = dist.Module.parse(STEP, context=ctx)
    # llvm::cl reports a bad option value on stderr: the exception carries
    # it instead, and nothing reaches the terminal.
    for pipeline, reason in [
        (
            "dist-matmul-grad-overlap{min-overlap-ratio=abc}",
            "for the --min-overlap-ratio option: 'abc' value invalid for floating point argument",
        ),
        ("dist-auto-parallel{peak-tflops=x}", "for the --peak-tflops option: 'x' value invalid"),
        ("dist-matmul-grad-overlap{bogus=1}", "no such option bogus"),
    ]:
        with pytest.raises(dist.DiagnosticError) as info:
            m.run(pipeline)
        message = info.value.diagnostics[0].message
        assert message.startswith(f"invalid pass pipeline '{pipeline}'")
        assert reason in message
    out, err = capfd.readouterr()
    assert err == "" and out == ""
    dist.PassManager("dist-auto-parallel{peak-tflops=50}", context=ctx)


def test_pass_manager(ctx):
    pm = dist.PassManager("dist-auto-parallel{peak-tflops=50}", context=ctx)
    m = dist.Module.read(GPT, context=ctx)
    pm.run(m)
    assert any(op.name == "dist.c_embedding" for op in m.walk())
    with pytest.raises(dist.DiagnosticError):
        dist.PassManager("dist-auto-parallel{no-such-option=1}", context=ctx)


def test_overlap_report(ctx):
    m = dist.Module.read(GPT, context=ctx)
    before = dist.overlap_report(m, peak_tflops=0.001)
    m.run("dist-auto-parallel")
    after = m.overlap_report(peak_tflops=0.001)
    step = {f["name"]: f for f in after["functions"]}["train_step"]
    assert step["comm_us"] == pytest.approx(71.72)
    assert step["exposed_comm_us"] == pytest.approx(61.475)
    # Before the pipeline there is no vocab-parallel allreduce yet.
    assert before["functions"][0]["comm_us"] < step["comm_us"]


def test_stale_operations_raise(ctx):
    m = dist.Module.parse(STEP, context=ctx)
    ops = list(m.walk())
    m.run("dist-matmul-grad-overlap")
    with pytest.raises(RuntimeError, match="stale"):
        ops[1].name
    assert [op.name for op in m.walk()][1] == "dist.matmul"


def test_closed_context_raises_never_crashes():
    c = dist.Context()
    m = dist.Module.parse(STEP, context=c)
    mesh = dist.Mesh([2], context=c)
    ops = list(m.walk())
    c.close()
    assert c.closed
    for use in (
        lambda: str(m),
        lambda: m.run("canonicalize"),
        lambda: ops[0].name,
        lambda: str(mesh),
        lambda: mesh.coord(0),
        lambda: dist.Module.parse(STEP, context=c),
        lambda: dist.TensorDist(mesh, [0]),
    ):
        with pytest.raises(RuntimeError, match="closed"):
            use()


def test_context_manager():
    with dist.Context() as c:
        m = dist.Module.parse(STEP, context=c)
    with pytest.raises(RuntimeError):
        str(m)


def test_module_outlives_its_context_object():
    m = dist.Module.parse(STEP, context=dist.Context())
    import gc

    gc.collect()
    assert "dist.allreduce" in str(m)


LINALG = """
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @f(%x: tensor<4x4xf32, #dist.tensor<#mesh, [-1, 0]>>,
             %w: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>,
             %e: tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>)
    -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>> {
  %z = arith.constant 0.0 : f32
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>)
      -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  %m = linalg.matmul ins(%x, %w : tensor<4x4xf32, #dist.tensor<#mesh, [-1, 0]>>,
                                  tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>)
      outs(%c : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>)
      -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  return %m : tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>
}
"""


def test_linalg_rules(ctx):
    # The linalg rules reach Python users through the same check: a matmul
    # over a split contraction declared complete names the allreduce.
    m = dist.Module.parse(LINALG, filename="mm.mlir", context=ctx)
    with pytest.raises(dist.DiagnosticError) as info:
        m.verify_distributions()
    [d] = info.value.diagnostics
    assert (d.file, d.line) == ("mm.mlir", 10)
    assert "'linalg.matmul' op result #0 is declared" in d.message
    assert "partial = [0 : sum]" in d.message
    assert "insert dist.allreduce ... axes = [0] reduce = sum" in d.message


MARKED = """
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @f(%x: tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>,
             %w: tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>>)
    -> tensor<8x16xf32> attributes {dist.complete} {
  %y = dist.matmul %x, %w : tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>,
      tensor<16x16xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x16xf32>
  %t = math.tanh %y : tensor<8x16xf32>
  return %t : tensor<8x16xf32>
}
"""


def test_completion(ctx):
    # A function marked for completion is not taken for complete by the
    # check; completion decides it, says where it resharded, and the result
    # passes the check.
    m = dist.Module.parse(MARKED, filename="c.mlir", context=ctx)
    with pytest.raises(dist.DiagnosticError) as info:
        m.verify_distributions()
    assert "is marked 'dist.complete'" in info.value.diagnostics[0].message
    [r] = m.run("dist-complete")
    assert (r.severity, r.file, r.line) == ("remark", "c.mlir", 8)
    assert "reshard of operand #0 from [-1, -1] partial [0 : sum]" in r.message
    text = str(m)
    assert "dist.complete" not in text
    assert "partial = [0 : sum]>> -> tensor<8x16xf32>" in text
    m.verify_distributions()
    m.run("dist-lower-reshard")
    assert [op.name for op in m.walk()].count("dist.allreduce") == 1


def test_pipeline_pass(ctx):
    """--dist-pipeline from Python: the stages, their transfers and the
    report, and a refusal as an exception with the pass's location."""
    path = os.path.join(
        os.path.dirname(__file__), "..", "Transforms", "Inputs", "pipeline-mlp.mlir"
    )
    m = dist.Module.read(path, context=ctx)
    remarks = m.run("dist-pipeline{microbatches=4 schedule=zb-h1 remarks}")
    [report] = remarks
    assert "zb-h1 on 2 stages, 4 microbatches: 8 transfers" in report.message
    assert "stage 1: F0 B0 F1 B1 F2 B2 F3 B3 W0 W1 W2 W3" in report.message
    names = [op.name for op in m.walk()]
    assert names.count("dist.send") == names.count("dist.recv") == 8
    assert "dist.matmul_grad" not in names
    m.run("dist-verify-distributions")
    bad = dist.Module.read(path, context=ctx)
    with pytest.raises(
        dist.DiagnosticError, match="do not group evenly into 2 pipeline stages of 3"
    ):
        bad.run("dist-pipeline{microbatches=4 schedule=interleaved chunks=3}")
