//===- ParserCrashGuard.cpp - recover from crashes in MLIR's parsers -----===//

#include "dist/Support/ParserCrashGuard.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/SourceMgr.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/lsan_interface.h>
#define DIST_HAS_LSAN 1
#endif
#endif

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

using namespace mlir;

namespace {
/// Crash recovery installs process-wide signal handlers: they are on while
/// at least one guarded parse runs, and the previous ones are back after.
std::mutex guardMutex;
unsigned activeGuards = 0;
bool suspended = false;

/// Whether this thread's allocations are hidden from the leak checker
/// (what a guarded parse allocates).
thread_local bool leakCheckOff = false;

void setLeakCheck(bool on) {
  if (on == !leakCheckOff)
    return;
  leakCheckOff = !on;
#ifdef DIST_HAS_LSAN
  if (on)
    __lsan_enable();
  else
    __lsan_disable();
#endif
}

bool guardEnabled() {
  static const bool enabled = [] {
    const char *value = std::getenv("DIST_PARSER_CRASH_GUARD");
    return !value || std::strcmp(value, "0") != 0;
  }();
  return enabled;
}
} // namespace

bool dist::runParserGuarded(llvm::function_ref<void()> fn) {
  if (!guardEnabled()) {
    fn();
    return true;
  }
  {
    std::lock_guard<std::mutex> lock(guardMutex);
    if (activeGuards++ == 0 || suspended)
      llvm::CrashRecoveryContext::Enable();
    suspended = false;
  }
  // A crash unwinds by longjmp past the parser's pretty-stack-trace entries
  // (objects on the stack that was left): the list is put back as it was.
  const void *prettyStack = llvm::SavePrettyStackState();
  bool finished, threw = false;
  // What a recovered crash leaves is leaked on purpose (the parser's stack
  // objects never run their destructors): under the leak checker, what the
  // parse allocates is not reported. Leaks elsewhere (the passes, after
  // suspendParserGuard) are.
  bool outerLeakCheckOff = leakCheckOff;
  setLeakCheck(false);
  {
    llvm::CrashRecoveryContext crc;
    finished = crc.RunSafely([&] {
      // Some parsers' undefined behaviour surfaces as an exception (a
      // garbage length reaching an allocation: std::bad_alloc) rather than
      // a signal; under Python it would reach the interpreter as a
      // MemoryError with the parse half-done. It counts as a crash, unless
      // the guard was suspended (a pass threw: a crash with its trace).
      try {
        fn();
      } catch (...) {
        {
          std::lock_guard<std::mutex> lock(guardMutex);
          if (!suspended)
            threw = true;
        }
        if (!threw)
          throw;
      }
    });
  }
  setLeakCheck(!outerLeakCheckOff);
  finished = finished && !threw;
  if (!finished)
    llvm::RestorePrettyStackState(prettyStack);
  {
    std::lock_guard<std::mutex> lock(guardMutex);
    if (--activeGuards == 0) {
      llvm::CrashRecoveryContext::Disable();
      suspended = false;
    }
  }
  return finished;
}

void dist::abandonAfterCrash(const void *object) {
#ifdef DIST_HAS_LSAN
  if (object)
    __lsan_ignore_object(object);
#else
  (void)object;
#endif
}

void dist::suspendParserGuard() {
  setLeakCheck(true);
  std::lock_guard<std::mutex> lock(guardMutex);
  if (activeGuards && !suspended) {
    llvm::CrashRecoveryContext::Disable();
    suspended = true;
  }
}

namespace {
/// What parsing a prefix of the input did.
struct Probe {
  bool crashed = false;
  /// The offsets of the names of the ops it finished (only when asked for).
  llvm::DenseSet<size_t> finishedOps;
};

Probe probe(llvm::StringRef text, size_t length,
            const DialectRegistry &registry, bool wantOps) {
  auto context =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  context->getDiagEngine().registerHandler([](Diagnostic &) {});
  llvm::SourceMgr sourceMgr;
  // A NUL-terminated copy: the lexer stops at the NUL.
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      llvm::MemoryBuffer::getMemBufferCopy(text.take_front(length), "prefix");
  const char *start = buffer->getBufferStart();
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  auto block = std::make_unique<Block>();
  auto state = std::make_unique<AsmParserState>();
  Probe result;
  result.crashed = !dist::runParserGuarded([&] {
    (void)parseAsmSourceFile(sourceMgr, block.get(),
                             ParserConfig(context.get(), false),
                             wantOps ? state.get() : nullptr);
  });
  if (wantOps)
    for (const AsmParserState::OperationDefinition &def : state->getOpDefs())
      result.finishedOps.insert(def.loc.Start.getPointer() - start);
  if (result.crashed) {
    // What the crashed parser built is half-made: freeing it would touch
    // what the crash left inconsistent. It is leaked.
    dist::abandonAfterCrash(block.release());
    dist::abandonAfterCrash(state.release());
    dist::abandonAfterCrash(context.release());
  }
  return result;
}

bool isIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '.';
}

/// The op names in `text` (`dialect.op` where an op begins: at the start of
/// a line, after `=` or `{`; or the quoted name of the generic form), with
/// their offsets, in order. Strings and comments are skipped.
SmallVector<std::pair<size_t, std::string>> opNames(llvm::StringRef text) {
  SmallVector<std::pair<size_t, std::string>> names;
  // The last character that is not a space or a tab ('\n' at the start).
  char previous = '\n';
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r')
      continue;
    bool opStart = previous == '\n' || previous == '=' || previous == '{';
    if (c == '/' && i + 1 < e && text[i + 1] == '/') {
      while (i + 1 < e && text[i + 1] != '\n')
        ++i;
      continue;
    }
    if (c == '"') {
      size_t begin = i;
      for (++i; i < e && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      llvm::StringRef name = text.slice(begin + 1, std::min(i, e));
      if (opStart && name.contains('.') && llvm::all_of(name, isIdentifierChar))
        names.push_back({begin, name.str()});
      previous = '"';
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t begin = i;
      while (i + 1 < e && isIdentifierChar(text[i + 1]))
        ++i;
      llvm::StringRef name = text.slice(begin, i + 1);
      if (opStart && name.contains('.') && !name.ends_with("."))
        names.push_back({begin, name.str()});
      previous = 'a';
      continue;
    }
    previous = c;
  }
  return names;
}
} // namespace

std::optional<dist::ParserCrash>
dist::locateParserCrash(llvm::StringRef text, const DialectRegistry &registry) {
  if (isBytecode(llvm::MemoryBufferRef(text, "")) ||
      !probe(text, text.size(), registry, false).crashed)
    return std::nullopt;
  // The parser reads left to right: a prefix that reaches the crash crashes,
  // a shorter one fails with an error (or parses).
  size_t good = 0, bad = text.size();
  while (bad - good > 1) {
    size_t mid = good + (bad - good) / 2;
    (probe(text, mid, registry, false).crashed ? bad : good) = mid;
  }
  ParserCrash crash{bad - 1, ""};
  // The op being parsed: the last one begun before the crash that the
  // parser had not finished.
  Probe last = probe(text, bad, registry, true);
  SmallVector<std::pair<size_t, std::string>> begun =
      opNames(text.take_front(bad));
  for (const auto &[offset, name] : llvm::reverse(begun))
    if (!last.finishedOps.contains(offset)) {
      crash.opName = name;
      break;
    }
  return crash;
}

dist::ParserCrashReport
dist::reportParserCrash(llvm::StringRef text, const DialectRegistry &registry) {
  std::optional<ParserCrash> crash = locateParserCrash(text, registry);
  std::string op = crash && !crash->opName.empty()
                       ? "MLIR's parser of '" + crash->opName + "'"
                       : std::string("MLIR's parser");
  ParserCrashReport report;
  if (crash)
    report.offset = crash->offset;
  report.message =
      op + " crashed " + (crash ? "here" : "on this input") +
      ": the input is malformed, and this is a bug in MLIR 22 itself "
      "(upstream mlir-opt crashes too), not in dist; nothing was read";
  return report;
}
