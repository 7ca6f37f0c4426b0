//===- MeshUtilsTest.cpp - process-mesh arithmetic ------------------------===//

#include "dist/Dialect/Dist/IR/MeshUtils.h"
#include "dist/Dialect/Dist/IR/DistAttrs.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::dist;

namespace {

using Vec = SmallVector<int64_t>;

class MeshUtilsTest : public ::testing::Test {
protected:
  MeshUtilsTest() { context.loadDialect<DistDialect>(); }

  MeshAttr mesh(ArrayRef<int64_t> shape, ArrayRef<int64_t> ids = {}) {
    if (ids.empty())
      return MeshAttr::get(&context, shape);
    return MeshAttr::get(&context, shape, ids, {});
  }

  MLIRContext context;
};

TEST_F(MeshUtilsTest, UnravelAndRavelAreInverse) {
  Vec shape = {2, 3, 4};
  for (int64_t p = 0; p < 24; ++p)
    EXPECT_EQ(mesh::ravel(shape, mesh::unravel(shape, p)), p);
  EXPECT_EQ(mesh::unravel(shape, 23), (Vec{1, 2, 3}));
  EXPECT_EQ(mesh::unravel(shape, 4), (Vec{0, 1, 0}));
}

// The brief's example: rank 6 on a [2, 4] mesh sits at (1, 2), so a weight
// split by rows over axis 1 with 8000 local rows starts at 16000.
TEST_F(MeshUtilsTest, CoordOnDefaultMesh) {
  MeshAttr m = mesh({2, 4});
  EXPECT_EQ(*mesh::processCoord(m, 6), (Vec{1, 2}));
  EXPECT_EQ((*mesh::processCoord(m, 6))[1] * 8000, 16000);
  EXPECT_EQ(*mesh::processCoord(m, 0), (Vec{0, 0}));
  EXPECT_FALSE(mesh::processCoord(m, 8).has_value());
  EXPECT_FALSE(mesh::processCoord(m, -1).has_value());
}

// The coordinate comes from the position in the id list, not from the rank.
TEST_F(MeshUtilsTest, CoordOnPermutedMesh) {
  MeshAttr m = mesh({2, 4}, {7, 6, 5, 4, 3, 2, 1, 0});
  EXPECT_EQ(*mesh::processCoord(m, 6), (Vec{0, 1}));
  EXPECT_EQ(*mesh::processCoord(m, 0), (Vec{1, 3}));
  EXPECT_EQ(*mesh::processCoord(m, 3), (Vec{1, 0}));
}

TEST_F(MeshUtilsTest, CoordOnSparseIds) {
  MeshAttr m = mesh({2, 2}, {10, 20, 30, 40});
  EXPECT_EQ(*mesh::processCoord(m, 30), (Vec{1, 0}));
  EXPECT_FALSE(mesh::processCoord(m, 2).has_value());
}

TEST_F(MeshUtilsTest, GroupAlongOneAxis) {
  MeshAttr m = mesh({2, 4});
  // Model-parallel group (axis 1) of rank 6: the second row.
  EXPECT_EQ(mesh::processGroup(m, 6, {1}), (Vec{4, 5, 6, 7}));
  // Data-parallel group (axis 0) of rank 6: the third column.
  EXPECT_EQ(mesh::processGroup(m, 6, {0}), (Vec{2, 6}));
}

TEST_F(MeshUtilsTest, GroupOnPermutedMesh) {
  MeshAttr m = mesh({2, 4}, {7, 6, 5, 4, 3, 2, 1, 0});
  EXPECT_EQ(mesh::processGroup(m, 6, {1}), (Vec{7, 6, 5, 4}));
  EXPECT_EQ(mesh::processGroup(m, 6, {0}), (Vec{6, 2}));
  EXPECT_EQ(mesh::processGroup(m, 0, {0}), (Vec{4, 0}));
}

TEST_F(MeshUtilsTest, GroupAlongSeveralAxes) {
  MeshAttr m = mesh({2, 2, 2});
  // Rank 5 is at (1, 0, 1); axis 1 stays at 0.
  EXPECT_EQ(mesh::processGroup(m, 5, {0, 2}), (Vec{0, 1, 4, 5}));
  EXPECT_EQ(mesh::processGroup(m, 5, {2, 0}), (Vec{0, 4, 1, 5}));
  EXPECT_EQ(mesh::processGroup(m, 5, {0, 1, 2}), (Vec{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(mesh::processGroup(m, 9, {0}).empty());
}

TEST_F(MeshUtilsTest, AllGroupsPartitionTheMesh) {
  MeshAttr m = mesh({2, 4});
  auto groups = mesh::allProcessGroups(m.getShape(), m.getProcessIds(), {0});
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0], (Vec{0, 4}));
  EXPECT_EQ(groups[3], (Vec{3, 7}));
  auto rows = mesh::allProcessGroups(m.getShape(), m.getProcessIds(), {1});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1], (Vec{4, 5, 6, 7}));
}

TEST_F(MeshUtilsTest, AxisAndGroupSizes) {
  MeshAttr m = mesh({2, 4});
  EXPECT_EQ(m.getAxisSize(0), 2);
  EXPECT_EQ(m.getAxisSize(1), 4);
  EXPECT_EQ(mesh::groupSize(m, {0, 1}), 8);
  EXPECT_EQ(mesh::groupSize(m, {}), 1);
  EXPECT_EQ(m.getNumProcesses(), 8);
}

TEST_F(MeshUtilsTest, GlobalAndLocalShapes) {
  MeshAttr m = mesh({2, 4});
  auto rowSplit = TensorDistAttr::get(m, {1, -1});
  EXPECT_EQ(mesh::globalShape({8000, 1024}, rowSplit), (Vec{32000, 1024}));
  EXPECT_EQ(*mesh::localShape({32000, 1024}, rowSplit), (Vec{8000, 1024}));
  EXPECT_FALSE(mesh::localShape({32001, 1024}, rowSplit).has_value());
  auto both = TensorDistAttr::get(m, {0, 1});
  EXPECT_EQ(mesh::globalShape({3, 5}, both), (Vec{6, 20}));
  // Dynamic dims stay dynamic; no encoding means replicated.
  EXPECT_EQ(mesh::globalShape({ShapedType::kDynamic, 5}, both),
            (Vec{ShapedType::kDynamic, 20}));
  EXPECT_EQ(mesh::globalShape({3, 5}, TensorDistAttr()), (Vec{3, 5}));
}

TEST_F(MeshUtilsTest, PartialHelpers) {
  MeshAttr m = mesh({2, 4});
  auto dist = TensorDistAttr::get(m, {0, -1}, {{1, ReductionKind::Sum}});
  EXPECT_EQ(dist.getPartialKind(1), ReductionKind::Sum);
  EXPECT_FALSE(dist.getPartialKind(0).has_value());
  EXPECT_EQ(dist.dropPartial({1}), TensorDistAttr::get(m, {0, -1}));
  EXPECT_EQ(TensorDistAttr::get(m, {0, -1}).addPartial({1}, ReductionKind::Sum),
            dist);
  EXPECT_EQ(dist.getDimOfMeshAxis(0), 0);
  EXPECT_FALSE(dist.getDimOfMeshAxis(1).has_value());
}

// isDropPartialOf answers what comparing with dropPartial would, for every
// subset of the reduced axes.
TEST_F(MeshUtilsTest, IsDropPartialOfAgreesWithDropPartial) {
  MeshAttr m = mesh({2, 2, 2});
  auto in = TensorDistAttr::get(
      m, {-1}, {{0, ReductionKind::Sum}, {2, ReductionKind::Max}});
  SmallVector<TensorDistAttr> candidates = {
      TensorDistAttr::get(m, {-1}),
      TensorDistAttr::get(m, {-1}, {{0, ReductionKind::Sum}}),
      TensorDistAttr::get(m, {-1}, {{2, ReductionKind::Max}}),
      TensorDistAttr::get(m, {-1}, {{2, ReductionKind::Sum}}),
      in,
      TensorDistAttr::get(m, {0}),
      TensorDistAttr::get(mesh({8}), {-1})};
  const SmallVector<int64_t> axisSets[] = {{}, {0}, {2}, {0, 2}, {1}};
  for (ArrayRef<int64_t> axes : axisSets)
    for (TensorDistAttr out : candidates)
      EXPECT_EQ(out.isDropPartialOf(in, axes), out == in.dropPartial(axes))
          << "candidate with " << out.getPartialAxes().size()
          << " partial axes, " << axes.size() << " reduced axes";
}

// Two invariants that the parser cannot produce but C++ builders can.
TEST_F(MeshUtilsTest, VerifierRejectsMalformedBuilds) {
  std::string message;
  context.getDiagEngine().registerHandler([&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  auto emitLambda = [&] { return mlir::emitError(UnknownLoc::get(&context)); };
  function_ref<InFlightDiagnostic()> emitErr = emitLambda;
  MeshAttr m = mesh({2, 4});
  int64_t minusOne = -1, one = 1;
  ArrayRef<int64_t> dims(minusOne), axes(one);
  EXPECT_FALSE(TensorDistAttr::getChecked(emitErr, &context, MeshAttr(), dims,
                                          ArrayRef<int64_t>(),
                                          ArrayRef<ReductionKind>()));
  EXPECT_EQ(message, "expected a #dist.mesh");
  EXPECT_FALSE(TensorDistAttr::getChecked(emitErr, &context, m, dims, axes,
                                          ArrayRef<ReductionKind>()));
  EXPECT_EQ(message, "expected one reduction kind per partial axis");
}

} // namespace
