//===- ReshardPlanTest.cpp - the bytes each reshard plan moves ------------===//
//
// Every plan between the distributions of a 8 x 16 f32 tensor on a [2, 4]
// mesh, held to what its steps move by the ring algorithms' definitions,
// computed here from each step's local blocks: an allreduce of L bytes in a
// group of g moves 2(g-1)/g L through each process's link, an all-gather
// (g-1)/g of its gathered result, a reduce-scatter and an all-to-all
// (g-1)/g of their operand, a slice or a partial view nothing. A plan's
// total is the sum of its steps; its peak is the largest block on the way;
// and no plan moves less than a process must receive of its result block
// that its operand block does not hold.
//
//===----------------------------------------------------------------------===//

#include "dist/Analysis/ReshardPlan.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include <string>

using namespace mlir;
using namespace mlir::dist;

namespace {

constexpr int64_t kRows = 8, kCols = 16, kElementBytes = 4;

class ReshardPlanTest : public ::testing::Test {
protected:
  ReshardPlanTest() { context.loadDialect<DistDialect>(); }

  /// Every distribution of a rank-2 tensor on `mesh`: a dims mapping (no
  /// axis twice) and, on each axis it leaves free, replicated or a partial
  /// sum.
  SmallVector<TensorDistAttr> distributions(MeshAttr mesh) {
    SmallVector<TensorDistAttr> out;
    int64_t rank = mesh.getShape().size();
    for (int64_t d0 = -1; d0 < rank; ++d0)
      for (int64_t d1 = -1; d1 < rank; ++d1) {
        if (d0 >= 0 && d0 == d1)
          continue;
        SmallVector<int64_t> free;
        for (int64_t a = 0; a < rank; ++a)
          if (a != d0 && a != d1)
            free.push_back(a);
        for (unsigned bits = 0; bits < (1u << free.size()); ++bits) {
          SmallVector<std::pair<int64_t, ReductionKind>> partial;
          for (auto [i, a] : llvm::enumerate(free))
            if (bits & (1u << i))
              partial.push_back({a, ReductionKind::Sum});
          out.push_back(TensorDistAttr::get(mesh, {d0, d1}, partial));
        }
      }
    return out;
  }

  MLIRContext context;
};

/// The [begin, end) rows and columns that process `coord` holds under `d`.
struct Block {
  int64_t begin[2], end[2];
  int64_t elements() const { return (end[0] - begin[0]) * (end[1] - begin[1]); }
};

Block blockOf(TensorDistAttr d, ArrayRef<int64_t> coord) {
  ArrayRef<int64_t> shape = d.getMesh().getShape();
  int64_t global[2] = {kRows, kCols};
  Block b;
  for (int dim = 0; dim < 2; ++dim) {
    int64_t axis = d.getDimsMapping()[dim];
    int64_t n = axis >= 0 ? shape[axis] : 1;
    int64_t c = axis >= 0 ? coord[axis] : 0;
    b.begin[dim] = global[dim] / n * c;
    b.end[dim] = global[dim] / n * (c + 1);
  }
  return b;
}

int64_t localBytes(TensorDistAttr d) {
  SmallVector<int64_t> origin(d.getMesh().getShape().size(), 0);
  return blockOf(d, origin).elements() * kElementBytes;
}

bool isPartial(TensorDistAttr d) {
  for (int64_t a = 0, e = d.getMesh().getShape().size(); a < e; ++a)
    if (d.getPartialKind(a))
      return true;
  return false;
}

std::string str(Attribute a) {
  std::string s;
  llvm::raw_string_ostream os(s);
  a.print(os);
  return s;
}

TEST_F(ReshardPlanTest, EveryPlanMovesWhatItsStepsDefine) {
  MeshAttr mesh = MeshAttr::get(&context, {2, 4});
  CostModel model;
  Type f32 = Float32Type::get(&context);
  SmallVector<TensorDistAttr> all = distributions(mesh);
  int64_t pairs = 0, collectives = 0;
  for (TensorDistAttr from : all)
    for (TensorDistAttr to : all) {
      std::string whyNot;
      FailureOr<ReshardPlan> plan =
          planReshard({kRows, kCols}, f32, from, to, model, whyNot);
      SCOPED_TRACE(str(from) + " -> " + str(to));
      ASSERT_TRUE(succeeded(plan)) << whyNot;
      ++pairs;
      TensorDistAttr at = from;
      int64_t total = 0, peak = localBytes(from);
      for (const ReshardStep &step : plan->steps) {
        int64_t group = 1;
        for (int64_t axis : step.axes)
          group *= mesh.getShape()[axis];
        int64_t before = localBytes(at), after = localBytes(step.to);
        int64_t expected = 0;
        switch (step.kind) {
        case ReshardStep::Kind::AllReduce:
          expected = 2 * (group - 1) * before / group;
          EXPECT_EQ(after, before);
          break;
        case ReshardStep::Kind::AllGather:
          expected = (group - 1) * after / group;
          EXPECT_EQ(after, before * group);
          break;
        case ReshardStep::Kind::ReduceScatter:
          expected = (group - 1) * before / group;
          EXPECT_EQ(before, after * group);
          break;
        case ReshardStep::Kind::AllToAll:
          expected = (group - 1) * before / group;
          EXPECT_EQ(after, before);
          break;
        case ReshardStep::Kind::AllSlice:
        case ReshardStep::Kind::MakePartial:
          break;
        case ReshardStep::Kind::Broadcast:
          ADD_FAILURE() << "a plan has a broadcast step";
          break;
        }
        EXPECT_EQ(step.bytes, expected)
            << getRedistributionOpName(step.kind).str() << " over "
            << step.axes.size() << " axes to " << str(step.to);
        collectives += step.isCollective();
        total += step.bytes;
        peak = std::max({peak, before, after});
        at = step.to;
      }
      EXPECT_EQ(at, to);
      EXPECT_EQ(plan->bytes, total);
      EXPECT_EQ(plan->peakLocalBytes, peak);
      // What a process lacks of its result block, it must receive.
      if (isPartial(from) || isPartial(to))
        continue;
      int64_t lower = 0;
      for (int64_t p = 0; p < 8; ++p) {
        SmallVector<int64_t> coord = {p / 4, p % 4};
        Block a = blockOf(from, coord), b = blockOf(to, coord);
        int64_t shared = 1;
        for (int dim = 0; dim < 2; ++dim)
          shared *=
              std::max<int64_t>(0, std::min(a.end[dim], b.end[dim]) -
                                       std::max(a.begin[dim], b.begin[dim]));
        lower = std::max(lower, (b.elements() - shared) * kElementBytes);
      }
      EXPECT_GE(plan->bytes, lower);
    }
  // 7 dims mappings, with a choice on each free axis: 14 distributions,
  // every ordered pair planned.
  EXPECT_EQ(pairs, 14 * 14);
  EXPECT_EQ(collectives, 173);
}

} // namespace
