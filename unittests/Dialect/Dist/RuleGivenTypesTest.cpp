//===- RuleGivenTypesTest.cpp - rules answer for the types they are given -===//
//
// DistributionRuleInterface::inferResultDistributions answers for operand
// and result types it is given, not for the op's own: completion asks it
// "what if" without touching the IR. For a dist op, a linalg model, an
// elementwise model and a tensor model: the answer for given types is the
// answer for an op written with them, and asking changes nothing.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

#include <optional>
#include <string>

using namespace mlir;
using namespace mlir::dist;

namespace {

constexpr const char *kProgram = R"mlir(
#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @f(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>, %init: tensor<4x4xf32>,
             %xs: tensor<4x4xf32, #dist.tensor<#mesh, [-1, 0]>>,
             %ys: tensor<4x4xf32, #dist.tensor<#mesh, [0, -1]>>) {
  %0 = dist.matmul %x, %y : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
  %1 = linalg.matmul ins(%x, %y : tensor<4x8xf32>, tensor<8x4xf32>)
                     outs(%init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = arith.addf %0, %init : tensor<4x4xf32>
  %3 = tensor.extract_slice %x[0, 0] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
  return
}
)mlir";

class RuleGivenTypesTest : public ::testing::Test {
protected:
  RuleGivenTypesTest() {
    DialectRegistry registry;
    registry.insert<DistDialect, func::FuncDialect, arith::ArithDialect,
                    linalg::LinalgDialect, tensor::TensorDialect>();
    registerDistributionRuleModels(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(kProgram, &context);
  }

  /// The `n`th op of @f's body.
  Operation *op(unsigned n) {
    auto &ops = module->getBody()->front().getRegion(0).front().getOperations();
    return &*std::next(ops.begin(), n);
  }
  /// The type of @f's argument `n`.
  Type arg(unsigned n) {
    return module->getBody()->front().getRegion(0).getArgument(n).getType();
  }

  /// What the rule of `o` says for `operands` (the op's own result types),
  /// as "error: ..." or the result encodings.
  std::string ask(Operation *o, SmallVector<Type> operands,
                  std::optional<SmallVector<Type>> results = std::nullopt) {
    std::string out;
    llvm::raw_string_ostream os(out);
    FailureOr<SmallVector<rules::Dist>> r =
        cast<DistributionRuleInterface>(o).inferResultDistributions(
            operands,
            results ? TypeRange(*results) : TypeRange(o->getResultTypes()), os);
    if (failed(r))
      return "error: " + out;
    for (const rules::Dist &d : *r)
      os << (d.mesh ? d.toAttr() : TensorDistAttr()) << ";";
    return out;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(RuleGivenTypesTest, AnswersForGivenTypesAndChangesNothing) {
  ASSERT_TRUE(module);
  std::string before;
  llvm::raw_string_ostream printed(before);
  module->print(printed);

  // A contraction over the split k: a partial sum on the axis.
  const char *partial = "#dist.tensor<#dist.mesh<shape = [2], names = "
                        "[\"mp\"]>, [-1, -1], partial = [0 : sum]>;";
  Type xs = arg(3), ys = arg(4), init = arg(2);
  EXPECT_EQ(ask(op(0), {xs, ys}), partial);
  // The linalg model reads its init from the given types too: a
  // replicated one would be counted once per process.
  EXPECT_NE(ask(op(1), {xs, ys, init}).find("neither partial nor the identity"),
            std::string::npos);
  // Asked for its own types, nothing is distributed.
  EXPECT_EQ(ask(op(0), {arg(0), arg(1)}), "<<NULL ATTRIBUTE>>;");
  // Split one way and the other: the rule says why not.
  EXPECT_EQ(ask(op(0), {xs, arg(1)}).rfind("error: ", 0), 0u);
  // Elementwise: the split of the given operand, whatever the op's own.
  EXPECT_EQ(ask(op(2), {ys, ys}), "#dist.tensor<#dist.mesh<shape = [2], "
                                  "names = [\"mp\"]>, [0, -1]>;");
  EXPECT_NE(ask(op(2), {ys, init}).find("replicated in operand #1"),
            std::string::npos);
  // A slice keeps the source's split where it takes a dim whole: an
  // undecided result gets it, a result declared replicated is refused.
  EXPECT_EQ(ask(op(3), {arg(3)}), "#dist.tensor<#dist.mesh<shape = [2], "
                                  "names = [\"mp\"]>, [-1, 0]>;");
  SmallVector<Type> replicated{RankedTensorType::get(
      {4, 4}, Float32Type::get(&context),
      TensorDistAttr::getReplicated(getTensorDist(arg(3)).getMesh(), 2))};
  EXPECT_EQ(ask(op(3), {arg(3)}, replicated).rfind("error: ", 0), 0u);

  std::string after;
  llvm::raw_string_ostream printedAfter(after);
  module->print(printedAfter);
  EXPECT_EQ(before, after);
}

} // namespace
