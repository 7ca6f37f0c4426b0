//===- RedistributionKindTest.cpp - one definition, the verifiers agree ---===//
//
// RedistributionKind.h defines what each kind of redistribution does to a
// mesh axis it runs over (allowsTransition). The ops' verifiers are where a
// user meets that definition, and the allreduce and the broadcast still
// word their own diagnostics: for every op and every pair of axis states of
// a 4 x 4 tensor on a mesh of two, the verifier accepts the op exactly
// when the definition allows its transition.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/RedistributionKind.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "gtest/gtest.h"

#include <string>

using namespace mlir;
using namespace mlir::dist;

namespace {

constexpr int64_t kSize = 4;

class RedistributionKindTest : public ::testing::Test {
protected:
  RedistributionKindTest() {
    context.loadDialect<DistDialect>();
    mesh = MeshAttr::get(&context, {2});
    module = ModuleOp::create(UnknownLoc::get(&context));
  }
  ~RedistributionKindTest() override { module.erase(); }

  /// Every state of the mesh's one axis for a rank-2 tensor.
  SmallVector<TensorDistAttr> distributions() {
    SmallVector<TensorDistAttr> out = {TensorDistAttr::get(mesh, {-1, -1}, {}),
                                       TensorDistAttr::get(mesh, {0, -1}, {}),
                                       TensorDistAttr::get(mesh, {-1, 0}, {})};
    for (ReductionKind kind :
         {ReductionKind::Sum, ReductionKind::Max, ReductionKind::Avg})
      out.push_back(TensorDistAttr::get(mesh, {-1, -1}, {{0, kind}}));
    return out;
  }

  RankedTensorType typeOf(TensorDistAttr dist) {
    SmallVector<int64_t> local = *mesh::localShape({kSize, kSize}, dist);
    return withTensorDist(
        RankedTensorType::get(local, Float32Type::get(&context)), dist);
  }

  /// Builds the op of `kind` from `from` to `to` and says whether it
  /// verifies.
  bool verifies(RedistributionKind kind, std::optional<ReductionKind> reduce,
                TensorDistAttr from, TensorDistAttr to) {
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = b.getUnknownLoc();
    Value in =
        UnrealizedConversionCastOp::create(b, loc, typeOf(from), ValueRange())
            .getResult(0);
    Type out = typeOf(to);
    SmallVector<int64_t> axes = {0};
    Operation *op = nullptr;
    switch (kind) {
    case RedistributionKind::AllReduce:
      op = AllReduceOp::create(b, loc, out, in, mesh, axes, *reduce, nullptr);
      break;
    case RedistributionKind::Broadcast:
      op = BroadcastOp::create(b, loc, out, in, mesh, axes, 0, nullptr);
      break;
    case RedistributionKind::AllGather:
      op = AllGatherOp::create(b, loc, out, in, mesh, axes, nullptr);
      break;
    case RedistributionKind::ReduceScatter:
      op = ReduceScatterOp::create(b, loc, out, in, mesh, axes, *reduce,
                                   nullptr);
      break;
    case RedistributionKind::AllToAll:
      op = AllToAllOp::create(b, loc, out, in, mesh, axes, nullptr);
      break;
    case RedistributionKind::AllSlice:
      op = AllSliceOp::create(b, loc, out, in, mesh, axes);
      break;
    case RedistributionKind::MakePartial:
      op = MakePartialOp::create(b, loc, out, in, mesh, axes, *reduce);
      break;
    }
    EXPECT_EQ(cast<RedistributionOpInterface>(op).getRedistributionKind(),
              kind);
    EXPECT_EQ(cast<RedistributionOpInterface>(op).getReduction(), reduce);
    ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) {});
    return succeeded(verify(op, /*verifyRecursively=*/false));
  }

  MLIRContext context;
  MeshAttr mesh;
  ModuleOp module;
};

std::string str(Attribute a) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << a;
  return s;
}

TEST_F(RedistributionKindTest, VerifiersAcceptWhatTheKindAllows) {
  using Kind = RedistributionKind;
  int64_t allowed = 0, checked = 0;
  for (Kind kind :
       {Kind::AllReduce, Kind::Broadcast, Kind::AllGather, Kind::ReduceScatter,
        Kind::AllToAll, Kind::AllSlice, Kind::MakePartial}) {
    bool reduces = kind == Kind::AllReduce || kind == Kind::ReduceScatter ||
                   kind == Kind::MakePartial;
    SmallVector<std::optional<ReductionKind>> reductions = {std::nullopt};
    if (reduces)
      reductions = {ReductionKind::Sum, ReductionKind::Max, ReductionKind::Avg};
    for (std::optional<ReductionKind> reduce : reductions)
      for (TensorDistAttr from : distributions())
        for (TensorDistAttr to : distributions()) {
          bool expected = allowsTransition(kind, reduce, getAxisState(from, 0),
                                           getAxisState(to, 0));
          SCOPED_TRACE(getRedistributionOpName(kind).str() + " " + str(from) +
                       " -> " + str(to));
          EXPECT_EQ(verifies(kind, reduce, from, to), expected);
          allowed += expected;
          ++checked;
        }
  }
  // 6 x 6 pairs for each of the 4 kinds without a reduction and for each
  // reduction of the 3 that reduce; every kind allows some of them.
  EXPECT_EQ(checked, 13 * 36);
  EXPECT_GT(allowed, 13);
}

TEST_F(RedistributionKindTest, RingFactors) {
  using Kind = RedistributionKind;
  EXPECT_DOUBLE_EQ(ringFactor(Kind::AllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(ringFactor(Kind::Broadcast, 4), 1.0);
  for (Kind kind : {Kind::AllGather, Kind::ReduceScatter, Kind::AllToAll})
    EXPECT_DOUBLE_EQ(ringFactor(kind, 4), 0.75);
  for (Kind kind : {Kind::AllSlice, Kind::MakePartial}) {
    EXPECT_DOUBLE_EQ(ringFactor(kind, 4), 0.0);
    EXPECT_FALSE(communicates(kind));
  }
  EXPECT_TRUE(communicates(Kind::Broadcast));
}

} // namespace
