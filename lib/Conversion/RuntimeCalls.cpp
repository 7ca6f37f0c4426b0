//===- RuntimeCalls.cpp - calls from lowered code into libdist_runtime ----===//

#include "dist/Conversion/RuntimeCalls.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;
using namespace mlir::dist;

static ModuleOp enclosingModule(Operation *anchor) {
  if (auto module = dyn_cast<ModuleOp>(anchor))
    return module;
  return anchor->getParentOfType<ModuleOp>();
}

func::FuncOp mlir::dist::getOrDeclareRuntimeFunction(OpBuilder &b,
                                                     Operation *anchor,
                                                     StringRef name,
                                                     FunctionType type,
                                                     bool cInterface) {
  ModuleOp module = enclosingModule(anchor);
  if (!module) {
    anchor->emitError("cannot call the dist runtime from outside a module");
    return nullptr;
  }
  if (Operation *existing = SymbolTable::lookupSymbolIn(module, name)) {
    auto func = dyn_cast<func::FuncOp>(existing);
    if (func && func.getFunctionType() == type)
      return func;
    anchor->emitError("the module defines '")
        << name << "', a name the dist runtime reserves, as something else";
    return nullptr;
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto decl = func::FuncOp::create(b, module.getLoc(), name, type);
  decl.setPrivate();
  if (cInterface)
    decl->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return decl;
}

Value mlir::dist::buildRuntimeString(OpBuilder &b, Location loc,
                                     Operation *anchor, StringRef text) {
  ModuleOp module = enclosingModule(anchor);
  auto i8 = b.getI8Type();
  auto type = MemRefType::get({int64_t(text.size())}, i8);
  // Named after the text's hash, so that equal texts find one global without
  // a table; a clash with another symbol moves on to the next name.
  uint64_t hash = llvm::xxh3_64bits(text);
  std::string name;
  for (unsigned attempt = 0;; ++attempt) {
    name = "__dist_str_" + llvm::utohexstr(hash);
    if (attempt)
      name += "_" + std::to_string(attempt);
    Operation *existing = SymbolTable::lookupSymbolIn(module, name);
    if (!existing)
      break;
    auto global = dyn_cast<memref::GlobalOp>(existing);
    if (!global || global.getType() != type || !global.getInitialValue())
      continue;
    auto value = dyn_cast<DenseElementsAttr>(*global.getInitialValue());
    if (value && value.getRawData() == ArrayRef<char>(text.data(), text.size()))
      return memref::CastOp::create(
          b, loc, MemRefType::get({ShapedType::kDynamic}, i8),
          memref::GetGlobalOp::create(b, loc, type, name));
  }
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto tensorType = RankedTensorType::get({int64_t(text.size())}, i8);
    auto value = DenseElementsAttr::getFromRawBuffer(
        tensorType, ArrayRef<char>(text.data(), text.size()));
    memref::GlobalOp::create(b, module.getLoc(), name,
                             b.getStringAttr("private"), type, value,
                             /*constant=*/true, /*alignment=*/nullptr);
  }
  Value global = memref::GetGlobalOp::create(b, loc, type, name);
  return memref::CastOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, i8), global);
}

std::string mlir::dist::describeForRuntime(Operation *op) {
  std::string description;
  if (auto file = op->getLoc()->findInstanceOf<FileLineColLoc>())
    description =
        (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
         Twine(file.getLine()) + ":" + Twine(file.getColumn()) + ": ")
            .str();
  return description + op->getName().getStringRef().str();
}

/// The function (or other symbol) that numbers `op`'s sites, or the
/// outermost op when none encloses it.
static Operation *siteScope(Operation *op) {
  Operation *scope = op;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    scope = p;
    if (isa<SymbolOpInterface>(p) && !isa<ModuleOp>(p))
      break;
  }
  return scope;
}

int64_t RuntimeSiteIds::get(Operation *op) {
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = ids.find(op); it != ids.end())
    return it->second;
  Operation *scope = siteScope(op);
  OperationName name = op->getName();
  auto key = [&](Operation *site, unsigned ordinal) {
    std::string text;
    if (auto symbol = dyn_cast<SymbolOpInterface>(scope))
      text = ("@" + symbol.getName() + "/").str();
    text += name.getStringRef().str() + "#" + std::to_string(ordinal);
    if (auto id = site->getAttrOfType<StringAttr>("id"))
      text += "/id:" + id.getValue().str();
    return static_cast<int64_t>(llvm::xxh3_64bits(text));
  };
  // Not a structured binding: a lambda may not capture one in C++17.
  auto inserted = next.try_emplace({scope, name}, 0);
  auto &count = inserted.first->second;
  if (inserted.second)
    scope->walk<WalkOrder::PreOrder>([&](Operation *nested) {
      if (nested->getName() == name && siteScope(nested) == scope)
        ids[nested] = key(nested, count++);
    });
  // An op made after its function was numbered continues the count.
  if (auto it = ids.find(op); it != ids.end())
    return it->second;
  return ids[op] = key(op, count++);
}
