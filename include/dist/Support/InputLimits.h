//===- InputLimits.h - input that would crash the tools ---------*- C++ -*-===//
//
// MLIR's text parser recurses once per nested region, attribute or type, so
// a few thousand levels of nesting overflow the stack (upstream mlir-opt
// crashes too). The bytecode reader does not recurse, but everything after
// it does (the verifier of attributes, the printer, the bytecode writer,
// walks, destruction), so bytecode is checked once it is read. dist's
// drivers refuse deeper input with a diagnostic either way.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_SUPPORT_INPUTLIMITS_H
#define DIST_SUPPORT_INPUTLIMITS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class MLIRContext;
class Operation;
class Pass;

namespace dist {

/// The deepest nesting dist's drivers accept: far beyond real programs,
/// far below what overflows an 8 MiB stack.
constexpr unsigned kMaxInputNesting = 1000;

/// Whether `buffer` is MLIR bytecode rather than text.
bool isBytecodeInput(llvm::StringRef buffer);

/// Why the text `buffer` nests (), [], {} or <> deeper than `limit`
/// (outside strings and comments); nothing when it does not, or when
/// `buffer` is bytecode (which checkParsedNesting checks once it is read).
/// `offset`, when given, is set to where the first bracket too deep is.
std::optional<std::string> checkNestingDepth(llvm::StringRef buffer,
                                             unsigned limit = kMaxInputNesting,
                                             size_t *offset = nullptr);

/// checkNestingDepth as a tool prints it: "NAME:LINE:COL: error: ...".
std::optional<std::string> checkNestingDepthOf(llvm::StringRef name,
                                               llvm::StringRef buffer);

/// The 1-based line and column of `offset` in `buffer`.
std::pair<unsigned, unsigned> lineAndColumn(llvm::StringRef buffer,
                                            size_t offset);

/// Checks, without recursing, that the regions under `root` and the
/// attributes and types its ops carry (locations included) nest at most
/// `limit` deep. On failure it reports where, at the deepest op's location,
/// and empties `root`'s regions without recursing, so that the caller can
/// destroy `root`.
LogicalResult checkParsedNesting(Operation *root,
                                 unsigned limit = kMaxInputNesting);

/// Reports what upstream's verifiers would crash on rather than diagnose.
/// MLIR 22's tensor and memref expand_shape and collapse_shape verifiers
/// read the first dim of every reassociation group, so an empty group is
/// refused here, at the op.
LogicalResult checkUpstreamVerifierCrashes(Operation *root);

/// checkUpstreamVerifierCrashes, then the verifier on `root`.
LogicalResult verifyInput(Operation *root);

/// Parses the module in `sourceMgr` as dist's tools take input: without the
/// parser's verification, then the nesting check (bytecode: text is checked
/// before parsing, with checkNestingDepth) and verifyInput. Null, with the
/// diagnostics emitted, when any of them fails.
OwningOpRef<ModuleOp> parseInput(llvm::SourceMgr &sourceMgr,
                                 MLIRContext *context);

/// The first pass of a pipeline over input parsed without verification:
/// checkParsedNesting when `bytecode`, then verifyInput when `verify`.
std::unique_ptr<Pass> createCheckInputPass(bool bytecode, bool verify);

} // namespace dist
} // namespace mlir

#endif // DIST_SUPPORT_INPUTLIMITS_H
