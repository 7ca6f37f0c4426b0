//===- TypeConversion.cpp - types of lowered dist programs ----------------===//

#include "dist/Conversion/TypeConversion.h"
#include "dist/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::dist;

Type mlir::dist::dropDistEncoding(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !isa_and_nonnull<TensorDistAttr>(tensor.getEncoding()))
    return type;
  return RankedTensorType::get(tensor.getShape(), tensor.getElementType());
}

Type mlir::dist::getReductionElementType(Type elementType) {
  MLIRContext *ctx = elementType.getContext();
  if (elementType.isF16() || elementType.isBF16() || elementType.isF32())
    return Float32Type::get(ctx);
  if (elementType.isF64())
    return elementType;
  if (auto integer = dyn_cast<IntegerType>(elementType)) {
    if (integer.getWidth() <= 32)
      return IntegerType::get(ctx, 32);
    if (integer.getWidth() == 64)
      return IntegerType::get(ctx, 64);
  }
  return Type();
}

/// A cast between tensors that differ at most in their encoding.
static Value castTensor(OpBuilder &b, Type resultType, ValueRange inputs,
                        Location loc) {
  if (inputs.size() != 1)
    return Value();
  auto from = dyn_cast<RankedTensorType>(inputs[0].getType());
  auto to = dyn_cast<RankedTensorType>(resultType);
  if (!from || !to || from.getShape() != to.getShape() ||
      from.getElementType() != to.getElementType())
    return Value();
  return tensor::CastOp::create(b, loc, to, inputs[0]);
}

LogicalResult dist::checkLowerableMemorySpaces(Operation *root) {
  // The first memref type in `type` whose memory space is neither absent nor
  // an integer.
  auto unlowerable = [](Type type) {
    BaseMemRefType found;
    type.walk([&](BaseMemRefType memref) {
      Attribute space = memref.getMemorySpace();
      if (!found && space && !isa<IntegerAttr>(space))
        found = memref;
    });
    return found;
  };
  auto report = [](Operation *op, BaseMemRefType type, const Twine &what) {
    InFlightDiagnostic diag = op->emitOpError();
    diag << what << " has the type " << type << ", whose memory space "
         << type.getMemorySpace() << " has no LLVM address space (an integer)";
    if (isa<DistDialect>(type.getMemorySpace().getDialect()))
      diag << ": a dist distribution describes a tensor, not a memref";
  };
  auto check = [&](Operation *op) {
    for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
      if (BaseMemRefType bad = unlowerable(type)) {
        report(op, bad, "result #" + Twine(i));
        return failure();
      }
    if (auto f = dyn_cast<FunctionOpInterface>(op))
      if (BaseMemRefType bad = unlowerable(f.getFunctionType())) {
        report(op, bad, "its signature");
        return failure();
      }
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (BaseMemRefType bad = unlowerable(arg.getType())) {
            report(op, bad, "block argument #" + Twine(arg.getArgNumber()));
            return failure();
          }
    return success();
  };
  return failure(root->walk([&](Operation *op) {
                       return failed(check(op)) ? WalkResult::interrupt()
                                                : WalkResult::advance();
                     })
                     .wasInterrupted());
}

DistTypeConverter::DistTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](RankedTensorType type) { return dropDistEncoding(type); });
  addConversion(
      [](FutureType type,
         SmallVectorImpl<Type> &results) -> std::optional<LogicalResult> {
        RankedTensorType value = type.getValueType();
        Type element = getReductionElementType(value.getElementType());
        if (!element || !value.hasStaticShape())
          return failure();
        results.push_back(MemRefType::get({value.getNumElements()}, element));
        results.push_back(IntegerType::get(type.getContext(), 64));
        return success();
      });
  addSourceMaterialization(castTensor);
  addTargetMaterialization(castTensor);
}

namespace {
/// Rebuilds an op with the converted operands, result types, attributes and
/// region argument types. Ops are opaque to it: it relies only on what every
/// op has.
struct DropEncodings : public ConversionPattern {
  DropEncodings(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (isa<DistDialect>(op->getDialect()) || isa<FunctionOpInterface>(op))
      return rewriter.notifyMatchFailure(op, "has its own lowering");
    const TypeConverter &converter = *getTypeConverter();
    SmallVector<Type> resultTypes;
    if (failed(converter.convertTypes(op->getResultTypes(), resultTypes)))
      return rewriter.notifyMatchFailure(op, "unconvertible result type");

    // Encodings only ever differed: the cast is the identity now.
    if (isa<tensor::CastOp>(op) && operands[0].getType() == resultTypes[0]) {
      rewriter.replaceOp(op, operands[0]);
      return success();
    }

    // Typed attributes (a dense constant of an encoded tensor type) carry
    // the encoding too.
    AttrTypeReplacer replacer;
    replacer.addReplacement([](RankedTensorType type) -> std::optional<Type> {
      return dropDistEncoding(type);
    });
    // Dense elements do not expose their type to the replacer.
    replacer.addReplacement(
        [](DenseElementsAttr attr) -> std::optional<Attribute> {
          auto type = cast<ShapedType>(dropDistEncoding(attr.getType()));
          if (type == attr.getType())
            return std::nullopt;
          return attr.reshape(type);
        });
    auto attrs =
        cast<DictionaryAttr>(replacer.replace(op->getAttrDictionary()));

    OperationState state(op->getLoc(), op->getName(), operands, resultTypes,
                         attrs.getValue(), op->getSuccessors());
    for (Region &region : op->getRegions()) {
      Region *moved = state.addRegion();
      rewriter.inlineRegionBefore(region, *moved, moved->begin());
      if (failed(rewriter.convertRegionTypes(moved, converter)))
        return rewriter.notifyMatchFailure(op, "unconvertible region type");
    }
    Operation *rebuilt = rewriter.create(state);
    rewriter.replaceOp(op, rebuilt->getResults());
    return success();
  }
};
} // namespace

void mlir::dist::populateDistEncodingDropPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<DropEncodings>(converter, patterns.getContext());
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                 converter);
}

void mlir::dist::configureDistConversionTarget(ConversionTarget &target,
                                               const TypeConverter &converter) {
  target.addLegalDialect<DistDialect>();
  target.markUnknownOpDynamicallyLegal([&converter](Operation *op) {
    if (auto func = dyn_cast<FunctionOpInterface>(op))
      return converter.isLegal(func.getArgumentTypes()) &&
             converter.isLegal(func.getResultTypes()) &&
             converter.isLegal(&func.getFunctionBody());
    return converter.isLegal(op) &&
           llvm::all_of(op->getRegions(), [&](Region &region) {
             return converter.isLegal(&region);
           });
  });
}
