#!/usr/bin/env python3
"""Break the compiler on purpose, one change at a time, and check that the
test meant to observe each behaviour fails.

  scripts/check-mutants.py [BUILD] [--only NAME,...]

Each mutant below is a wrong change someone could make while the printed IR
still looks plausible. For each: apply it, rebuild, run its tests, expect a
failure, restore the file. A mutant that survives (its tests still pass) is
a gap in the suite and makes this script exit non-zero. It takes about a
minute per mutant on 2 cores, so it is not part of scripts/test.sh; run it
after changing a pass or the tests that watch it (docs/testing.md).
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name, file, text to replace, replacement, tests (lit paths under test/ or
# pytest files under test/python), what the mutant means.
MUTANTS = [
    (
        "fan-out-at-the-view",
        "lib/Dialect/Dist/Transforms/Completion/Worklist.cpp",
        "  while (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(made.getOwner())) {",
        "  while (false) {",
        ["Transforms/dist-complete-fan-out-views.mlir"],
        "a viewed partial sum is allreduced after the view, where the overlap pass cannot find it",
    ),
    (
        "overlap-transposed-y-as-plain",
        "lib/Dialect/Dist/Transforms/MatmulGradOverlap.cpp",
        "  if (transposedY)\n    std::swap(x, dout);",
        "",
        ["Transforms/dist-matmul-grad-overlap.mlir"],
        "a transposed y's gradient is computed as for a plain y",
    ),
    (
        "slice-undecided-result-replicated",
        "lib/Dialect/Dist/Rules/TensorRuleModels.cpp",
        "    if (!getTensorDist(types.results.front())) {",
        "    if (false) {",
        ["Unit", "Integration/torch-ops.test"],
        "completion takes an undecided slice of a split tensor as replicated and refuses it",
    ),
    (
        "insert-undecided-whole-replicated",
        "lib/Dialect/Dist/Rules/TensorRuleModels.cpp",
        "    if (!getTensorDist(destType)) {",
        "    if (false) {",
        ["Integration/torch-ops.test"],
        "completion takes the whole of an undecided insert_slice (a slice's backward) as replicated",
    ),
    (
        "cast-back-any-through-reshape",
        "lib/Dialect/Dist/Transforms/VerifyDistributions.cpp",
        "    if (from == to || (from.isReplicated() && to.isReplicated() &&",
        "    if (from == to || (to.isReplicated() &&",
        ["Transforms/dist-verify-distributions-divergence-invalid.mlir"],
        "a shard cast away and cast back as replicated through a reshape passes the check",
    ),
    (
        "lookup-grad-average-unsplit",
        "lib/Dialect/Dist/Rules/DistRules.cpp",
        "  if (!table || table.getDimsMapping()[0] < 0)\n    return false;",
        "  if (!table)\n    return false;",
        ["Dialect/Dist/rules-invalid.mlir"],
        "Paddle's averaged lookup gradient is accepted where nothing reduces it",
    ),
    (
        "complete-fan-out-linear-only",
        "lib/Dialect/Dist/Transforms/Completion/Worklist.cpp",
        "      !inMarkedFunction(op))\n    return success();\n  bool linear",
        "      !inMarkedFunction(op) || llvm::any_of(d.getPartials(), [](auto p) {\n"
        "        return !rules::isLinearKind(p.second);\n      }))\n    return success();\n"
        "  bool linear",
        ["Transforms/dist-complete-fan-out-max.mlir", "Examples/gpt-model.test"],
        "a partial maximum with several uses is allreduced once per use",
    ),
    (
        "varying-lookup-row-axis",
        "lib/Analysis/Varying.cpp",
        "    if (auto lookup = dyn_cast<EmbeddingOp>(op)) {",
        "    if (auto lookup = dyn_cast<EmbeddingOp>(op); lookup && false) {",
        ["Transforms/dist-complete-lookup-grad.mlir"],
        "the varying check takes a whole lookup as differing along the table's row axis",
    ),
    (
        "reshard-unencoded-source-undecided",
        "lib/Dialect/Dist/Transforms/Completion/Worklist.cpp",
        "    if (failed(mesh) || !*mesh)\n      return success();",
        "    if (true)\n      return success();",
        ["Transforms/dist-complete-lookup-grad.mlir", "Examples/gpt-model.test"],
        "completion leaves a reshard of a replicated value undecided",
    ),
    (
        "embedding-fold-second-use",
        "lib/Dialect/Dist/Transforms/ParallelEmbedding.cpp",
        "  Value v = op.getResult();\n  if (!v.hasOneUse())\n    return nullptr;",
        "  Value v = op.getResult();\n  if (v.use_empty())\n    return nullptr;",
        ["Transforms/dist-parallel-embedding.mlir"],
        "the lookup's allreduce becomes a reduce-scatter although another use needs it whole",
    ),
    (
        "complete-no-replicated-first",
        "lib/Dialect/Dist/Transforms/Completion/Guessing.cpp",
        "  if (isa<DistributionRuleInterface>(op) && !meshOf(op) &&",
        "  if (false && isa<DistributionRuleInterface>(op) && !meshOf(op) &&",
        ["Transforms/dist-complete.mlir", "Examples/gpt-layer.test"],
        "completion lets a later op pull a replicated value partial",
    ),
    (
        "complete-fan-out-left-partial",
        "lib/Dialect/Dist/Transforms/Completion/Worklist.cpp",
        "  if (!d || !d.isPartial() || result.hasOneUse() || result.use_empty() ||",
        "  if (true || !d || !d.isPartial() || result.hasOneUse() || result.use_empty() ||",
        ["Transforms/dist-complete.mlir", "Examples/gpt-layer.test"],
        "completion leaves a partial sum with several uses partial (an allreduce per branch)",
    ),
    (
        "overlap-ignores-reduce-scatter",
        "lib/Dialect/Dist/Transforms/MatmulGradOverlap.cpp",
        "    if (!isa<AllReduceOp, ReduceScatterOp>(user))",
        "    if (!isa<AllReduceOp>(user))",
        ["Transforms/dist-matmul-grad-overlap.mlir", "Examples/gpt-layer.test"],
        "the overlap leaves sequence parallelism's reduce-scatter behind the dW matmul",
    ),
    (
        "coords-column-major",
        "lib/Dialect/Dist/Utils/MeshIndexing.cpp",
        """  auto delinearize = affine::AffineDelinearizeIndexOp::create(
      b, loc, linear, mesh.getShape(), /*hasOuterBound=*/true);
  return getAsOpFoldResult(delinearize.getResults());""",
        """  SmallVector<int64_t> reversed(llvm::reverse(mesh.getShape()));
  auto delinearize = affine::AffineDelinearizeIndexOp::create(
      b, loc, linear, reversed, /*hasOuterBound=*/true);
  SmallVector<OpFoldResult> coords = getAsOpFoldResult(delinearize.getResults());
  std::reverse(coords.begin(), coords.end());
  return coords;""",
        ["Integration/coords.test"],
        "the MPI lowering unravels coordinates column-major",
    ),
    (
        "coords-raw-rank",
        "lib/Dialect/Dist/Utils/MeshIndexing.cpp",
        "  if (mesh.hasDefaultProcessIds())\n    return rank;",
        "  if (mesh.hasDefaultProcessIds() || true)\n    return rank;",
        ["Integration/coords.test"],
        "the coordinate is taken from the raw rank, ignoring process_ids",
    ),
    (
        "embedding-dp-scale-by-mp",
        "lib/Dialect/Dist/Transforms/ParallelEmbedding.cpp",
        "b.getF64FloatAttr(1.0 / double(split.mesh.getAxisSize(dp))));",
        "b.getF64FloatAttr(1.0 / double(split.mesh.getAxisSize(split.axis))));",
        ["Integration/embedding.test"],
        "the dp gradient average divides by the mp size",
    ),
    (
        "amp-found-inf-sum",
        "lib/Dialect/Dist/Transforms/AmpCheckFinite.cpp",
        "step.mesh, allAxes, ReductionKind::Max, nullptr);",
        "step.mesh, allAxes, ReductionKind::Sum, nullptr);",
        ["Integration/amp.test"],
        "the AMP pass reduces found_inf with SUM (the rule check rejects it)",
    ),
    (
        "mpi-max-as-sum",
        "lib/Conversion/DistToMPI.cpp",
        "  case ReductionKind::Max:\n    return mpi::MPI_ReductionOpEnum::MPI_MAX;",
        "  case ReductionKind::Max:\n    return mpi::MPI_ReductionOpEnum::MPI_SUM;",
        ["Integration/amp.test"],
        "found_inf's MAX runs as MPI_SUM: two infs sum to 2, truncated to false",
    ),
    (
        "amp-multiply-by-scale",
        "lib/Conversion/DistToLinalg.cpp",
        "Value inverse = arith::DivFOp::create(rewriter, loc, one, scale);",
        "Value inverse = arith::MulFOp::create(rewriter, loc, one, scale);",
        ["Integration/amp.test"],
        "gradients are multiplied by the loss scale, not its inverse",
    ),
    (
        "amp-later-uses-scaled",
        "lib/Dialect/Dist/Transforms/AmpCheckFinite.cpp",
        "return user && check->isBeforeInBlock(user);",
        "return user && isa<func::ReturnOp>(user);",
        ["Integration/amp.test", "python/test_schedule.py"],
        "ops after the check keep reading the scaled gradients",
    ),
    (
        "async-max-as-sum",
        "lib/Conversion/DistToMPI.cpp",
        "rewriter, loc, rewriter.getI64IntegerAttr(reduction->kind));",
        "rewriter, loc, rewriter.getI64IntegerAttr(DIST_REDUCE_SUM));",
        ["Integration/collectives.test"],
        "asynchronous allreduces of every kind run as sums",
    ),
    (
        "stream-roles-swapped",
        "lib/Dialect/Dist/Transforms/AssignStreams.cpp",
        "      if (llvm::is_contained(mpAxes, name))\n        return StreamKind::ModelParallel;",
        "      if (llvm::is_contained(mpAxes, name))\n        return StreamKind::DataParallel;",
        ["python/test_schedule.py"],
        "model-parallel collectives go to the dp stream",
    ),
    (
        "wait-too-early",
        "lib/Dialect/Dist/Transforms/AssignStreams.cpp",
        "    if (firstUser)\n      b.setInsertionPoint(firstUser);",
        "    if (firstUser)\n      b.setInsertionPointAfter(op);",
        ["python/test_schedule.py"],
        "the wait comes right after the issue (PaddlePaddle PR 64662)",
    ),
    (
        "c-identity-wrong-axis",
        "lib/Dialect/Dist/Transforms/ParallelEmbedding.cpp",
        "                                      split.mesh, split.axis, nullptr);",
        "                                      split.mesh, split.mesh.getRank() - 1 - split.axis, nullptr);",
        ["python/test_schedule.py"],
        "c_identity is over the other mesh axis",
    ),
    (
        "overlap-allreduce-after-dy",
        "lib/Dialect/Dist/Transforms/MatmulGradOverlap.cpp",
        "  rewriter.replaceOp(allreduce, reduced.getResult());",
        "  reduced->moveAfter(dy);\n  rewriter.replaceOp(allreduce, reduced.getResult());",
        ["python/test_schedule.py"],
        "the dX allreduce is issued after the dY matmul",
    ),
    (
        "dropout-local-index",
        "lib/Conversion/DistToLinalg.cpp",
        "            if (offsets[d])\n              index = arith::AddIOp::create(b, l, index, offsets[d]);",
        "            if (offsets[d] && false)\n              index = arith::AddIOp::create(b, l, index, offsets[d]);",
        ["Integration/dropout.test"],
        "dropout masks hash the local index: every shard draws the same mask",
    ),
    (
        "dropout-other-axis",
        "lib/Conversion/DistToLinalg.cpp",
        "          getValueOrCreateConstantIndexOp(rewriter, loc, coords[axis]);",
        "          getValueOrCreateConstantIndexOp(rewriter, loc, coords[coords.size() - 1 - axis]);",
        ["Integration/dropout.test"],
        "a shard's offset uses the coordinate of the other mesh axis",
    ),
    (
        "cost-model-transpose-y-rate",
        "lib/Analysis/CostModel.cpp",
        "tflops = transposeY   ? measured->matmulTransposeYTflops",
        "tflops = transposeY   ? measured->matmulTransposeXTflops",
        ["Transforms/dist-overlap-report-cost-model.mlir"],
        "a transpose_y matmul is estimated at the transpose_x rate of the cost-model file",
    ),
    (
        "cost-model-farthest-group",
        "lib/Analysis/CostModel.cpp",
        "if (distance(link.groupSize) < distance(best->groupSize))",
        "if (distance(link.groupSize) > distance(best->groupSize))",
        ["Transforms/dist-overlap-report-cost-model.mlir"],
        "an unmeasured group size takes the farthest measured one's figures",
    ),
    (
        "measured-fastest-rank",
        "lib/Dialect/Dist/Transforms/OverlapReport.cpp",
        "if (m.ranks > 1 && span <= m.figures.makespan)",
        "if (m.ranks > 1 && span >= m.figures.makespan)",
        ["Transforms/dist-overlap-report-measured.mlir"],
        "the measured figures are the fastest rank's, not the slowest's",
    ),
    (
        "grad-dx-untransposed-y",
        "lib/Conversion/DistToLinalg.cpp",
        "op.getTransposeY() ? y : transposeLastTwo(rewriter, loc, y),",
        "op.getTransposeY() ? transposeLastTwo(rewriter, loc, y) : y,",
        ["python/test_matmul_numerics.py"],
        "matmul_grad computes dX from y the wrong way round",
    ),
    (
        "adamw-no-bias-correction",
        "lib/Conversion/DistToLinalg.cpp",
        "Value mHat = arith::DivFOp::create(b, l, m, bc1);",
        "Value mHat = m;",
        ["Integration/zero.test"],
        "AdamW's first moment is used without its bias correction",
    ),
    (
        "unpack-drops-front",
        "lib/Conversion/DistToLinalg.cpp",
        "ValueRange{}, ValueRange{}, ValueRange{}, ArrayRef<int64_t>{0},\n"
        "            ArrayRef<int64_t>{n}, ArrayRef<int64_t>{1});",
        "ValueRange{}, ValueRange{}, ValueRange{},\n"
        "            ArrayRef<int64_t>{rows * chunk - n}, ArrayRef<int64_t>{n},\n"
        "            ArrayRef<int64_t>{1});",
        ["Integration/zero.test"],
        "unpacking drops the first elements instead of the padding",
    ),
    (
        "shard-skips-other-axes",
        "lib/Dialect/Dist/Transforms/ShardOptimizer.cpp",
        "  if (!others.empty()) {",
        "  if (false && !others.empty()) {",
        ["Transforms/dist-shard-optimizer.mlir"],
        "a gradient partial over dp and tp is reduce-scattered over dp only",
    ),
    (
        "bucket-waits-for-late-gradient",
        "lib/Dialect/Dist/Transforms/BucketGradients.cpp",
        "if (!bucket.members.empty() && bucket.firstUse <= c.ready) {",
        "if (false && !bucket.members.empty() && bucket.firstUse <= c.ready) {",
        ["Transforms/dist-bucket-gradients.mlir"],
        "a bucket takes a gradient that is ready only after a member's result is used",
    ),
]


def run(cmd, cwd, timeout=900):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def tests_fail(build, tests):
    """Whether any of `tests` fails (or does not build)."""
    env = dict(
        os.environ,
        PATH="/usr/lib/llvm-22/bin:" + os.environ["PATH"],
        PYTHONPATH=os.path.join(build, "python_packages"),
    )
    for test in tests:
        if test.startswith("python/"):
            cmd = ["/usr/bin/python3", "-m", "pytest", "-q", "-x", os.path.join(ROOT, "test", test)]
        else:
            cmd = ["lit", "-q", os.path.join(build, "test", test)]
        if (
            subprocess.run(cmd, cwd=build, env=env, capture_output=True, timeout=900).returncode
            != 0
        ):
            return test
    return None


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    build = os.path.abspath(args.build)
    # Unmutated, every test must pass, or each mutant would look caught.
    if run(["ninja", "-j2"], build).returncode != 0:
        sys.exit("check-mutants: the unmutated build fails")
    all_tests = sorted({t for m in MUTANTS for t in m[4]})
    broken = tests_fail(build, all_tests)
    if broken:
        sys.exit(f"check-mutants: {broken} fails without a mutant")
    survivors = []
    for name, path, old, new, tests, meaning in MUTANTS:
        if only and name not in only:
            continue
        full = os.path.join(ROOT, path)
        original = open(full).read()
        if original.count(old) != 1:
            print(f"STALE {name}: the text to change is not in {path} exactly once")
            survivors.append(name)
            continue
        start = time.time()
        try:
            with open(full, "w") as f:
                f.write(original.replace(old, new))
            built = run(["ninja", "-j2"], build).returncode == 0
            caught = "the build" if not built else tests_fail(build, tests)
        finally:
            with open(full, "w") as f:
                f.write(original)
        status = f"killed by {caught}" if caught else "SURVIVED"
        print(f"{name}: {status} ({meaning}; {time.time() - start:.0f} s)", flush=True)
        if not caught:
            survivors.append(name)
    run(["ninja", "-j2"], build)
    print(f"mutants: {len(survivors)} survived")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
