//===- ParserCrashGuard.h - recover from crashes in MLIR's parsers -*- C++
//-*-===//
//
// Some of MLIR 22's own op parsers crash on malformed input instead of
// diagnosing it (linalg.generic with an integer where an iterator type
// belongs, linalg.reduce/transpose/broadcast with a malformed dimension
// list: a null attribute handed on, in libMLIR itself). dist cannot fix
// them, and a pre-check per op would only cover the classes found so far.
// So dist's drivers parse inside an llvm::CrashRecoveryContext: a crash in
// the parser is recovered, located (the shortest prefix of the input on which
// the parser still crashes, and the op it had begun there) and reported as a
// located error naming the upstream op, with a failure status.
//
// What a recovered crash leaves behind is leaked, never freed: the half-built
// IR and whatever the crashed parser held (in the sanitizer build, what a
// guarded parse allocates is hidden from the leak checker for that reason).
// The guard is for the parse only;
// the passes run unguarded, so that a crash in dist's own code keeps its
// stack trace.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_SUPPORT_PARSERCRASHGUARD_H
#define DIST_SUPPORT_PARSERCRASHGUARD_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir {
class DialectRegistry;

namespace dist {

/// Runs `fn`, a parse, recovering from a crash inside it. Returns false when
/// it crashed. Crash recovery (signal handlers) is on only while a guarded
/// call runs, in any thread; without DIST_PARSER_CRASH_GUARD=0 in the
/// environment (which runs `fn` unguarded, for debugging the crash).
bool runParserGuarded(llvm::function_ref<void()> fn);

/// Gives up `object`, which a crashed parse may have left inconsistent: it
/// is never freed, and the leak checker of the sanitizer build is told so
/// (what it holds counts as reachable).
void abandonAfterCrash(const void *object);

/// Turns crash recovery off until the guarded calls that run end: for a
/// tool whose guarded call goes on past the parse (dist-opt guards
/// MlirOptMain and calls this once the input is parsed), so that a later
/// crash is a crash, with its stack trace.
void suspendParserGuard();

/// Where MLIR's parser crashes on `text` with `registry`'s dialects.
struct ParserCrash {
  /// The offset in `text` of the last character the parser needed to crash.
  size_t offset;
  /// The op it was parsing there, when one could be told ("" otherwise).
  std::string opName;
};

/// Finds where the parser crashes on `text` by parsing prefixes (a binary
/// search: log2(size) parses, each guarded). Nothing when it does not crash
/// on `text` again.
std::optional<ParserCrash> locateParserCrash(llvm::StringRef text,
                                             const DialectRegistry &registry);

/// The error for a parse of `text` that crashed: where (nothing when the
/// crash could not be found again) and what, naming the op. Every tool
/// reports a recovered crash with it.
struct ParserCrashReport {
  std::optional<size_t> offset;
  std::string message;
};
ParserCrashReport reportParserCrash(llvm::StringRef text,
                                    const DialectRegistry &registry);

} // namespace dist
} // namespace mlir

#endif // DIST_SUPPORT_PARSERCRASHGUARD_H
