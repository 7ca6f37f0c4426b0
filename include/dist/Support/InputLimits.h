//===- InputLimits.h - input that would overflow the parser -----*- C++ -*-===//
//
// MLIR's parser recurses once per nested region, attribute or type, so a
// few thousand levels of nesting overflow the stack (upstream mlir-opt
// crashes too). dist's drivers look at the nesting depth first and refuse
// deeper input with a diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_SUPPORT_INPUTLIMITS_H
#define DIST_SUPPORT_INPUTLIMITS_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir {
namespace dist {

/// The deepest nesting dist's drivers accept: far beyond real programs,
/// far below what overflows an 8 MiB stack.
constexpr unsigned kMaxInputNesting = 1000;

/// Why `text` nests (), [], {} or <> deeper than `limit` (outside strings
/// and comments), naming the line; nothing when it does not.
std::optional<std::string> checkNestingDepth(llvm::StringRef text,
                                             unsigned limit = kMaxInputNesting);

} // namespace dist
} // namespace mlir

#endif // DIST_SUPPORT_INPUTLIMITS_H
