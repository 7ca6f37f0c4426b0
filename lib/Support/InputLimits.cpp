//===- InputLimits.cpp - input that would exhaust the parser's stack ------===//

#include "dist/Support/InputLimits.h"

using namespace mlir;

std::optional<std::string> dist::checkNestingDepth(llvm::StringRef text,
                                                   unsigned limit) {
  unsigned depth = 0, line = 1;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (c) {
    case '\n':
      ++line;
      break;
    case '"':
      // Skip the string, escapes included.
      for (++i; i < e && text[i] != '"'; ++i) {
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '\n')
          ++line;
      }
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
      if (++depth > limit)
        return "line " + std::to_string(line) + " nests more than " +
               std::to_string(limit) +
               " levels deep (regions, attributes or types), which the "
               "parser would recurse through until the stack overflows";
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
