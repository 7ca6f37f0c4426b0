//===- InputLimits.cpp - input that would exhaust the stack ---------------===//

#include "dist/Support/InputLimits.h"
#include "dist/Support/ParserCrashGuard.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MemoryBufferRef.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

bool dist::isBytecodeInput(llvm::StringRef buffer) {
  return isBytecode(llvm::MemoryBufferRef(buffer, ""));
}

std::pair<unsigned, unsigned> dist::lineAndColumn(llvm::StringRef buffer,
                                                  size_t offset) {
  llvm::StringRef before = buffer.take_front(offset);
  size_t lineStart = before.rfind('\n');
  lineStart = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
  return {static_cast<unsigned>(before.count('\n')) + 1,
          static_cast<unsigned>(offset - lineStart) + 1};
}

std::optional<std::string>
dist::checkNestingDepth(llvm::StringRef text, unsigned limit, size_t *offset) {
  if (isBytecodeInput(text))
    return std::nullopt;
  unsigned depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (c) {
    case '"':
      // Skip the string, escapes included.
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (i + 1 < e && text[i + 1] == '/')
        while (i + 1 < e && text[i + 1] != '\n')
          ++i;
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > limit) {
        if (offset)
          *offset = i;
        return "the input nests more than " + std::to_string(limit) +
               " levels deep here (regions, attributes or types), which the "
               "parser would recurse through until the stack overflows";
      }
      break;
    case '-':
      // "->" is an arrow, not a bracket.
      if (i + 1 < e && text[i + 1] == '>')
        ++i;
      break;
    case ')':
    case ']':
    case '}':
    case '>':
      if (depth)
        --depth;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

std::optional<std::string> dist::checkNestingDepthOf(llvm::StringRef name,
                                                     llvm::StringRef buffer) {
  size_t offset = 0;
  std::optional<std::string> tooDeep =
      checkNestingDepth(buffer, kMaxInputNesting, &offset);
  if (!tooDeep)
    return std::nullopt;
  auto [line, column] = lineAndColumn(buffer, offset);
  return (name + ":" + llvm::Twine(line) + ":" + llvm::Twine(column) +
          ": error: " + *tooDeep)
      .str();
}

namespace {
/// The nesting depth of attributes and types, each computed once (they are
/// uniqued, and a module shares most of them), without recursion.
class AttrTypeDepth {
public:
  unsigned of(Attribute attr) {
    // Most ops have a location of their own, a file position or a shallow
    // wrapping of one (a rewrite's name, a fusion): measured on the spot,
    // not remembered.
    if (auto loc = dyn_cast_or_null<LocationAttr>(attr))
      if (std::optional<unsigned> depth = shallowLocationDepth(loc, 8))
        return *depth;
    return of(attr.getAsOpaquePointer(), false);
  }
  unsigned of(Type type) { return of(type.getAsOpaquePointer(), true); }

private:
  /// The depth of `loc` when it is at most `budget` deep and made of
  /// locations only (whose sub-elements are names and locations).
  static std::optional<unsigned> shallowLocationDepth(LocationAttr loc,
                                                      unsigned budget) {
    if (isa<FileLineColLoc, UnknownLoc>(loc))
      return 1;
    if (budget == 0 || !isa<NameLoc, FusedLoc, CallSiteLoc>(loc))
      return std::nullopt;
    unsigned deepest = 0;
    bool shallow = true;
    loc.walkImmediateSubElements(
        [&](Attribute sub) {
          if (!shallow)
            return;
          if (isa<StringAttr>(sub)) {
            deepest = std::max(deepest, 1u);
            return;
          }
          auto inner = dyn_cast<LocationAttr>(sub);
          std::optional<unsigned> d =
              inner ? shallowLocationDepth(inner, budget - 1) : std::nullopt;
          if (!d)
            shallow = false;
          else
            deepest = std::max(deepest, *d);
        },
        [&](Type) { shallow = false; });
    if (!shallow)
      return std::nullopt;
    return deepest + 1;
  }

  /// An attribute or a type, by its storage.
  struct Node {
    const void *ptr;
    bool isType;
  };

  template <typename F> static void forEachChild(Node n, F &&f) {
    auto onAttr = [&](Attribute a) { f(Node{a.getAsOpaquePointer(), false}); };
    auto onType = [&](Type t) { f(Node{t.getAsOpaquePointer(), true}); };
    if (n.isType)
      Type::getFromOpaquePointer(n.ptr).walkImmediateSubElements(onAttr,
                                                                 onType);
    else
      Attribute::getFromOpaquePointer(n.ptr).walkImmediateSubElements(onAttr,
                                                                      onType);
  }

  unsigned of(const void *ptr, bool isType) {
    if (!ptr)
      return 0;
    // A program repeats a few types and attributes: a direct-mapped cache
    // in front of the map.
    auto &recent = recentEntries[(reinterpret_cast<uintptr_t>(ptr) >> 4) %
                                 std::size(recentEntries)];
    if (recent.first == ptr)
      return recent.second;
    if (auto it = depth.find(ptr); it != depth.end()) {
      recent = {ptr, it->second};
      return it->second;
    }
    // Post-order over the not yet measured sub-elements. A node on the
    // stack has depth 0 in the map, so a cycle (a mutable type that names
    // itself) ends there.
    SmallVector<std::pair<Node, bool>> stack{{Node{ptr, isType}, false}};
    depth[ptr] = 0;
    while (!stack.empty()) {
      auto &[node, expanded] = stack.back();
      if (!expanded) {
        expanded = true;
        Node parent = node;
        forEachChild(parent, [&](Node child) {
          if (child.ptr && depth.try_emplace(child.ptr, 0).second)
            stack.push_back({child, false});
        });
        continue;
      }
      unsigned d = 0;
      forEachChild(node, [&](Node child) {
        if (child.ptr)
          d = std::max(d, depth.lookup(child.ptr));
      });
      depth[node.ptr] = d + 1;
      stack.pop_back();
    }
    return depth[ptr];
  }

  llvm::DenseMap<const void *, unsigned> depth;
  std::pair<const void *, unsigned> recentEntries[256] = {};
};
} // namespace

/// Erases everything under `root`, innermost ops first, so that no
/// destructor recurses.
static void dismantle(Operation *root) {
  SmallVector<Operation *> preorder;
  SmallVector<Operation *> stack{root};
  while (!stack.empty()) {
    Operation *op = stack.pop_back_val();
    preorder.push_back(op);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Operation &child : block)
          stack.push_back(&child);
  }
  for (Operation *op : preorder) {
    for (OpOperand &operand : op->getOpOperands())
      operand.drop();
    for (BlockOperand &successor : op->getBlockOperands())
      successor.drop();
  }
  for (Operation *op : llvm::reverse(ArrayRef(preorder).drop_front()))
    op->erase();
}

LogicalResult dist::checkParsedNesting(Operation *root, unsigned limit) {
  AttrTypeDepth attrDepth;
  NamedAttrList inherent;
  Location where = root->getLoc();
  std::string what;
  SmallVector<std::pair<Operation *, unsigned>> stack{{root, 0}};
  while (!stack.empty()) {
    auto [op, level] = stack.pop_back_val();
    if (level > limit) {
      what = "regions";
      if (attrDepth.of(op->getLoc()) <= limit)
        where = op->getLoc();
      break;
    }
    // A location is an attribute too (call sites and fusions nest).
    unsigned deepest = attrDepth.of(op->getLoc());
    deepest = std::max(deepest, attrDepth.of(op->getRawDictionaryAttrs()));
    inherent.clear();
    op->getName().populateInherentAttrs(op, inherent);
    for (NamedAttribute attr : inherent)
      deepest = std::max(deepest, attrDepth.of(attr.getValue()));
    for (Type type : op->getResultTypes())
      deepest = std::max(deepest, attrDepth.of(type));
    for (Region &region : op->getRegions())
      for (Block &block : region) {
        for (BlockArgument arg : block.getArguments())
          deepest = std::max({deepest, attrDepth.of(arg.getType()),
                              attrDepth.of(arg.getLoc())});
        for (Operation &child : block)
          stack.push_back({&child, level + 1});
      }
    if (deepest > limit) {
      what = "attributes or types";
      // Its location may be what is too deep to print.
      if (attrDepth.of(op->getLoc()) <= limit)
        where = op->getLoc();
      break;
    }
  }
  if (what.empty())
    return success();
  // emitError on the location, not the op: the op itself would be printed
  // into a note, which is what overflows.
  emitError(where) << "the input nests more than " << limit << " levels deep ("
                   << what
                   << "), which printing and rewriting it would recurse "
                      "through until the stack overflows";
  dismantle(root);
  return failure();
}

LogicalResult dist::checkUpstreamVerifierCrashes(Operation *root) {
  bool ok = true;
  root->walk([&](Operation *op) {
    auto groups = op->getAttrOfType<ArrayAttr>("reassociation");
    if (!groups)
      return WalkResult::advance();
    for (auto [i, group] : llvm::enumerate(groups)) {
      auto dims = dyn_cast<ArrayAttr>(group);
      if (dims && !dims.empty())
        continue;
      op->emitOpError("reassociation group #")
          << i << " is empty: every group must name at least one dim";
      ok = false;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return success(ok);
}

LogicalResult dist::verifyInput(Operation *root) {
  if (failed(checkUpstreamVerifierCrashes(root)))
    return failure();
  return verify(root);
}

OwningOpRef<ModuleOp> dist::parseInput(llvm::SourceMgr &sourceMgr,
                                       MLIRContext *context) {
  OwningOpRef<ModuleOp> module;
  const llvm::MemoryBuffer *main =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  llvm::StringRef buffer = main->getBuffer();
  if (!runParserGuarded([&] {
        module = parseSourceFile<ModuleOp>(
            sourceMgr, ParserConfig(context, /*verifyAfterParse=*/false));
      })) {
    ParserCrashReport crash =
        reportParserCrash(buffer, context->getDialectRegistry());
    Location loc = FileLineColLoc::get(context, main->getBufferIdentifier(),
                                       /*line=*/0, /*column=*/0);
    if (crash.offset) {
      auto [line, column] = sourceMgr.getLineAndColumn(
          llvm::SMLoc::getFromPointer(buffer.data() + *crash.offset));
      loc = FileLineColLoc::get(context, main->getBufferIdentifier(), line,
                                column);
    }
    emitError(loc) << crash.message;
    return nullptr;
  }
  if (!module)
    return nullptr;
  if ((isBytecodeInput(buffer) && failed(checkParsedNesting(*module))) ||
      failed(verifyInput(*module)))
    return nullptr;
  return module;
}

namespace {
struct CheckInputPass : public PassWrapper<CheckInputPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckInputPass)

  CheckInputPass(bool bytecode, bool verify)
      : bytecode(bytecode), verify(verify) {}

  StringRef getArgument() const override { return "dist-check-input"; }
  StringRef getDescription() const override {
    return "Reject input that nests deeper than dist's tools accept or that "
           "upstream verifiers would crash on, then verify it";
  }
  void runOnOperation() override {
    if ((bytecode && failed(dist::checkParsedNesting(getOperation()))) ||
        (verify && failed(dist::verifyInput(getOperation()))))
      signalPassFailure();
    markAllAnalysesPreserved();
  }

  bool bytecode, verify;
};
} // namespace

std::unique_ptr<Pass> dist::createCheckInputPass(bool bytecode, bool verify) {
  return std::make_unique<CheckInputPass>(bytecode, verify);
}
