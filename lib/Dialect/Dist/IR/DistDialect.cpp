//===- DistDialect.cpp - dist dialect -------------------------------------===//

#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/SignatureCache.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <array>
#include <optional>

using namespace mlir;
using namespace mlir::dist;

#include "dist/Dialect/Dist/IR/DistDialect.cpp.inc"

namespace {
/// Prints meshes once at the top of the module as `#mesh`, `#mesh1`, ...:
/// every tensor type repeats its mesh, and the full form would drown the IR.
struct DistOpAsmDialectInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<MeshAttr>(attr)) {
      os << "mesh";
      return AliasResult::OverridableAlias;
    }
    return AliasResult::NoAlias;
  }
};
} // namespace

void DistDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "dist/Dialect/Dist/IR/DistOps.cpp.inc"
      >();
  addInterfaces<DistOpAsmDialectInterface>();
  signatureCache = std::make_unique<SignatureCache>();
  promiseDistributionRules(getContext());
}

Operation *DistDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  if (auto typed = dyn_cast<TypedAttr>(value);
      typed && arith::ConstantOp::isBuildableWith(typed, type))
    return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}

//===----------------------------------------------------------------------===//
// The marker attributes
//===----------------------------------------------------------------------===//

namespace {
/// Where a marker may be attached.
enum class MarkerPlace { Operation, Argument, Result };

StringRef describe(MarkerPlace place) {
  switch (place) {
  case MarkerPlace::Operation:
    return "an operation";
  case MarkerPlace::Argument:
    return "a function argument";
  case MarkerPlace::Result:
    return "a function result";
  }
  llvm_unreachable("unknown marker place");
}
} // namespace

/// Checks that `attr` is `expected` (a unit or a non-empty string) and
/// allowed at `place`; `emit` reports at the right place.
static LogicalResult
verifyMarker(NamedAttribute attr, MarkerPlace place,
             llvm::function_ref<InFlightDiagnostic()> emit) {
  StringRef name = attr.getName().getValue();
  enum Kind { Unit, String, Count };
  struct Rule {
    StringRef name;
    Kind kind;
    std::array<std::optional<MarkerPlace>, 2> places;
  };
  // Built once: the verifier asks for every marker of every function.
  static const Rule rules[] = {
      {DistDialect::kParamAttrName,
       String,
       {MarkerPlace::Argument, MarkerPlace::Result}},
      {DistDialect::kStartupAttrName, Unit, {MarkerPlace::Operation}},
      {DistDialect::kCompleteAttrName, Unit, {MarkerPlace::Operation}},
      {DistDialect::kRecomputeAttrName, Unit, {MarkerPlace::Operation}},
      {DistDialect::kGradAttrName, String, {MarkerPlace::Result}},
      {DistDialect::kStateAttrName,
       String,
       {MarkerPlace::Argument, MarkerPlace::Result}},
      {DistDialect::kLossScaleAttrName, Unit, {MarkerPlace::Argument}},
      {DistDialect::kFoundInfAttrName, Unit, {MarkerPlace::Result}},
      {DistDialect::kLossAttrName, Unit, {MarkerPlace::Result}},
      {DistDialect::kStageAttrName, Count, {MarkerPlace::Operation}},
  };
  const Rule *rule =
      llvm::find_if(rules, [&](const Rule &r) { return r.name == name; });
  if (rule == std::end(rules))
    return emit() << "unknown dist attribute '" << name << "'";
  if (!llvm::is_contained(rule->places, place)) {
    InFlightDiagnostic diag = emit() << "'" << name << "' marks ";
    SmallVector<MarkerPlace, 2> places;
    for (std::optional<MarkerPlace> p : rule->places)
      if (p)
        places.push_back(*p);
    llvm::interleave(
        places, diag, [&](MarkerPlace p) { diag << describe(p); }, " or ");
    return diag << ", not " << describe(place);
  }
  if (rule->kind == String) {
    auto value = dyn_cast<StringAttr>(attr.getValue());
    if (!value || value.getValue().empty())
      return emit() << "'" << name
                    << "' must be a non-empty string naming a parameter, got "
                    << attr.getValue();
  } else if (rule->kind == Count) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || !value.getType().isInteger() || value.getValue().isNegative())
      return emit() << "'" << name << "' must be a non-negative integer, got "
                    << attr.getValue();
  } else if (!isa<UnitAttr>(attr.getValue())) {
    return emit() << "'" << name << "' is a unit attribute, got "
                  << attr.getValue();
  }
  return success();
}

LogicalResult DistDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  auto emit = [&] { return op->emitOpError(); };
  if (failed(verifyMarker(attr, MarkerPlace::Operation, emit)))
    return failure();
  if (attr.getName() == kStartupAttrName && !isa<FunctionOpInterface>(op))
    return emit() << "'" << kStartupAttrName << "' marks a function";
  if (attr.getName() == kCompleteAttrName && !isa<FunctionOpInterface>(op))
    return emit() << "'" << kCompleteAttrName << "' marks a function";
  return success();
}

/// Passes match parameters by name: two arguments of `func` may not share
/// one. The check runs once per function, from its last parameter (each call
/// looks ahead only to the next parameter), so a function with many
/// parameters verifies in linear time.
static LogicalResult verifyUniqueParams(FunctionOpInterface func,
                                        unsigned argIndex) {
  ArrayAttr all = func.getAllArgAttrs();
  auto paramOf = [&](unsigned i) -> Attribute {
    auto dict = dyn_cast_or_null<DictionaryAttr>(all[i]);
    return dict ? dict.get(DistDialect::kParamAttrName) : Attribute();
  };
  for (unsigned j = argIndex + 1, e = all.size(); j < e; ++j)
    if (paramOf(j))
      return success();
  llvm::DenseMap<Attribute, unsigned> first;
  for (unsigned i = 0; i <= argIndex; ++i)
    if (Attribute name = paramOf(i)) {
      auto [it, inserted] = first.try_emplace(name, i);
      if (!inserted)
        return func->emitOpError()
               << "argument #" << i << ": parameter " << name
               << " is already named by argument #" << it->second;
    }
  return success();
}

/// Checks the marker `attr` on argument or result (`place`) #`index` of
/// `op`, which must be a function.
static LogicalResult verifyFunctionMarker(Operation *op, NamedAttribute attr,
                                          MarkerPlace place, unsigned index) {
  bool onArgument = place == MarkerPlace::Argument;
  auto emit = [&] {
    return op->emitOpError()
           << (onArgument ? "argument #" : "result #") << index << ": ";
  };
  if (failed(verifyMarker(attr, place, emit)))
    return failure();
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return emit() << "'" << attr.getName().getValue() << "' marks "
                  << (onArgument ? "arguments" : "results")
                  << " of functions only";
  if (attr.getName() != DistDialect::kParamAttrName)
    return success();
  if (onArgument)
    return verifyUniqueParams(func, index);
  if (!func->hasAttr(DistDialect::kStartupAttrName))
    return emit() << "'" << DistDialect::kParamAttrName
                  << "' marks a result only in the '"
                  << DistDialect::kStartupAttrName << "' function";
  return success();
}

LogicalResult DistDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  return verifyFunctionMarker(op, attr, MarkerPlace::Argument, argIndex);
}

LogicalResult DistDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  return verifyFunctionMarker(op, attr, MarkerPlace::Result, resultIndex);
}
