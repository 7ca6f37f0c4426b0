//===- RuleModelUtils.h - attaching and promising upstream rules -*- C++
//-*-===//
//
// Private to the files that give upstream ops their distribution rules
// (DistRuleModels.cpp, LinalgRuleModel.cpp): op lists, and the promise that
// makes a tool that forgot to register them fail with a message.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_IR_RULEMODELUTILS_H
#define DIST_LIB_DIALECT_DIST_IR_RULEMODELUTILS_H

#include "dist/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/Dialect.h"
#include "mlir/IR/OperationSupport.h"

namespace mlir::dist::rules::detail {

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

#endif // DIST_LIB_DIALECT_DIST_IR_RULEMODELUTILS_H
