//===- RuleModelUtils.h - writing and promising upstream rules --*- C++ -*-===//
//
// Private to the files that give upstream ops their distribution rules
// (DistRuleModels.cpp, TensorRuleModels.cpp, LinalgRuleModel.cpp): the base
// of a rule on one mesh, op lists, and the promise that makes a tool that
// forgot to register them fail with a message.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_RULES_RULEMODELUTILS_H
#define DIST_LIB_DIALECT_DIST_RULES_RULEMODELUTILS_H

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"

#include "mlir/IR/Dialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"

namespace mlir::dist::rules::detail {

/// A small number as a word of a key (no attribute or name is stored at
/// such an address).
inline const void *keyWord(uintptr_t n) {
  return reinterpret_cast<const void *>(n);
}

/// The key word of what a rule reads of `value` through m_Constant: the
/// constant (uniqued, so equal words are equal constants), or a word of its
/// own when `value` is not a constant.
inline const void *constantKeyWord(Value value) {
  Attribute constant;
  if (value && matchPattern(value, m_Constant(&constant)))
    return constant.getAsOpaquePointer();
  return keyWord(1);
}

/// The types a rule is given: one per operand and one per result.
struct GivenTypes {
  TypeRange operands, results;
  Type of(OpOperand &use) const { return given(operands, use); }
};

/// The rule of an op whose tensors must all be on one mesh: `Model` defines
///   FailureOr<SmallVector<Dist>> infer(OpTy, GivenTypes, MeshAttr,
///                                      raw_ostream &) const
/// and sees only types that passed that check.
template <typename Model, typename OpTy>
struct MeshRuleModel
    : public DistributionRuleInterface::ExternalModel<Model, OpTy> {
  FailureOr<SmallVector<Dist>>
  inferResultDistributions(Operation *op, TypeRange operandTypes,
                           TypeRange resultTypes, raw_ostream &whyNot) const {
    FailureOr<MeshAttr> mesh = commonMesh(operandTypes, resultTypes, whyNot);
    if (failed(mesh))
      return failure();
    return static_cast<const Model *>(this)->infer(
        cast<OpTy>(op), GivenTypes{operandTypes, resultTypes}, *mesh, whyNot);
  }
};

template <typename... Ops> struct OpList {};

/// Promises the rules of `Ops` on their dialect unless they are attached
/// already (the extension ran when the dialect was loaded, before dist).
template <typename... Ops> void promise(MLIRContext *ctx, OpList<Ops...>) {
  auto one = [&](auto op) {
    using Op = decltype(op);
    std::optional<RegisteredOperationName> name =
        RegisteredOperationName::lookup(TypeID::get<Op>(), ctx);
    if (!name || name->hasInterface<DistributionRuleInterface>())
      return;
    name->getDialect()
        .declarePromisedInterface<DistributionRuleInterface, Op>();
  };
  (one(Ops(nullptr)), ...);
}

} // namespace mlir::dist::rules::detail

#endif // DIST_LIB_DIALECT_DIST_RULES_RULEMODELUTILS_H
