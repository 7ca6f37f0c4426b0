//===- dist-reduce.cpp - test-case reducer for dist programs --------------===//
//
// Cuts a dist program down while an interestingness script still finds it
// interesting (exits non-zero, mlir-reduce's convention):
//
//   dist-reduce bug.mlir --test=./still-fails.sh [--test-arg=A]... -o
//   small.mlir
//
// A driver of its own, as circt-reduce is, rather than upstream's
// mlir-reduce: MLIR 22's reduction-tree pass crashes when the op that makes
// the test fail is trivially dead (llvm/llvm-project#195997, fixed after
// 22), which is the natural way to write a failing test, and it only knows
// "delete ops" and rewrite patterns. The reductions here, tried greedily
// until none applies, each on a copy that must verify and stay interesting:
//
//   erase-symbol       a function nothing refers to
//   erase-ops          ops, in halving chunks then one by one, a used
//                      result replaced by a new argument of its function
//                      (an op is never erased because it is dead, only
//                      because the test stays interesting without it)
//   drop-results       a result of a function that nobody calls
//   drop-arguments     an unused argument of a function nobody calls
//   forward-operand    an op's result replaced by its operand of the same
//                      type (a dist op's input stands in for its output)
//
// The upstream spelling `-reduction-tree='... test=S test-arg=A'` is still
// read for its test and arguments.
//
//===----------------------------------------------------------------------===//

#include "dist/InitAllDist.h"
#include "dist/Support/InputLimits.h"
#include "dist/Version.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <functional>

using namespace mlir;

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<input file>"),
                                            llvm::cl::Required);
static llvm::cl::opt<std::string>
    outputFile("o", llvm::cl::desc("Output file (default: stdout)"),
               llvm::cl::value_desc("file"), llvm::cl::init("-"));
static llvm::cl::opt<std::string>
    testScript("test",
               llvm::cl::desc("The interestingness test: run with the "
                              "candidate file as its last argument; a "
                              "non-zero exit means interesting"),
               llvm::cl::value_desc("script"));
static llvm::cl::list<std::string>
    testArgs("test-arg",
             llvm::cl::desc("An argument for the test, before the file"));
static llvm::cl::opt<std::string> reductionTree(
    "reduction-tree",
    llvm::cl::desc("mlir-reduce's spelling: its test= and test-arg= are "
                   "read, the rest is ignored"),
    llvm::cl::value_desc("options"));
static llvm::cl::opt<unsigned>
    maxTests("max-tests",
             llvm::cl::desc("Stop after this many runs of the test"),
             llvm::cl::init(100000));

namespace {
/// Runs the interestingness test on candidates written to a temporary file.
class Tester {
public:
  Tester(std::string script, std::vector<std::string> args)
      : script(std::move(script)), args(std::move(args)) {}
  ~Tester() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }

  /// Whether `module` is interesting; failure when the test cannot run.
  FailureOr<bool> isInteresting(ModuleOp module) {
    if (path.empty()) {
      SmallString<128> tmp;
      if (llvm::sys::fs::createTemporaryFile("dist-reduce", "mlir", tmp)) {
        llvm::errs() << "dist-reduce: cannot create a temporary file\n";
        return failure();
      }
      path = std::string(tmp);
    }
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(path, ec);
      if (ec) {
        llvm::errs() << "dist-reduce: cannot write " << path << ": "
                     << ec.message() << "\n";
        return failure();
      }
      module.print(os);
    }
    SmallVector<StringRef> argv{script};
    for (const std::string &a : args)
      argv.push_back(a);
    argv.push_back(path);
    std::string error;
    ++runs;
    int rc = llvm::sys::ExecuteAndWait(script, argv, /*Env=*/std::nullopt,
                                       /*Redirects=*/{}, /*SecondsToWait=*/0,
                                       /*MemoryLimit=*/0, &error);
    if (rc < 0) {
      llvm::errs() << "dist-reduce: cannot run the test '" << script
                   << "': " << error << "\n";
      return failure();
    }
    return rc != 0;
  }

  unsigned runs = 0;

private:
  std::string script;
  std::vector<std::string> args;
  std::string path;
};

/// A change to try: it edits a copy of the module (found again in the copy
/// by position) and says whether it changed anything.
using Change = std::function<bool(ModuleOp)>;

/// Every op under `module` in pre-order, its position the same in a copy.
SmallVector<Operation *> opsInOrder(ModuleOp module) {
  SmallVector<Operation *> ops;
  module->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op != module.getOperation())
      ops.push_back(op);
  });
  return ops;
}

bool isCalled(FunctionOpInterface func, ModuleOp module) {
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(func.getOperation(), module);
  return !uses || !uses->empty();
}

/// The function whose arguments can stand in for `value` at every use: the
/// nearest function above its defining op, with no op isolated from above
/// in between.
FunctionOpInterface argumentScope(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    if (auto func = dyn_cast<FunctionOpInterface>(p))
      return func;
    if (p->hasTrait<OpTrait::IsIsolatedFromAbove>())
      return nullptr;
  }
  return nullptr;
}

/// Erases `ops` (positions in pre-order), later ones first; results that are
/// still used become new arguments of their function.
bool eraseOps(ModuleOp module, ArrayRef<unsigned> positions) {
  SmallVector<Operation *> ops = opsInOrder(module);
  SmallVector<Operation *> doomed;
  for (unsigned p : positions)
    doomed.push_back(ops[p]);
  for (Operation *op : llvm::reverse(doomed)) {
    for (Value result : op->getResults()) {
      if (result.use_empty())
        continue;
      FunctionOpInterface func = argumentScope(op);
      if (!func || func.isExternal())
        return false;
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(index, result.getType(), {},
                                     result.getLoc())))
        return false;
      result.replaceAllUsesWith(func.getArgument(index));
    }
    op->erase();
  }
  return !doomed.empty();
}

/// The reducer: greedy rounds of every reduction until none applies.
class Reducer {
public:
  Reducer(OwningOpRef<ModuleOp> module, Tester &tester)
      : best(std::move(module)), tester(tester) {}

  LogicalResult run() {
    FailureOr<bool> interesting = tester.isInteresting(*best);
    if (failed(interesting))
      return failure();
    if (!*interesting) {
      llvm::errs() << "dist-reduce: the input is not interesting (the test "
                      "exits 0 on it): nothing to reduce\n";
      return failure();
    }
    bool progress = true;
    while (progress && !stopped) {
      progress = false;
      progress |= eraseSymbols();
      progress |= eraseOpChunks();
      progress |= dropResults();
      progress |= dropArguments();
      progress |= forwardOperands();
      if (failed(status))
        return failure();
    }
    return status;
  }

  ModuleOp result() { return *best; }

private:
  /// Applies `change` to a copy; keeps the copy if it changed something,
  /// verifies and is interesting.
  bool attempt(const Change &change) {
    if (failed(status) || stopped)
      return false;
    if (tester.runs >= maxTests) {
      stopped = true;
      llvm::errs() << "dist-reduce: stopped after " << tester.runs
                   << " tests (--max-tests)\n";
      return false;
    }
    OwningOpRef<ModuleOp> candidate(cast<ModuleOp>(best->clone()));
    if (!change(*candidate))
      return false;
    // A change may break the IR (a call whose callee lost a result): such a
    // candidate is not a reduction.
    {
      ScopedDiagnosticHandler quiet(candidate->getContext(),
                                    [](Diagnostic &) { return success(); });
      if (failed(verify(*candidate)))
        return false;
    }
    FailureOr<bool> interesting = tester.isInteresting(*candidate);
    if (failed(interesting)) {
      status = failure();
      return false;
    }
    if (!*interesting)
      return false;
    best = std::move(candidate);
    return true;
  }

  bool eraseSymbols() {
    bool any = false;
    for (unsigned i = 0;; ++i) {
      SmallVector<Operation *> ops;
      for (Operation &op : best->getBody()->getOperations())
        ops.push_back(&op);
      if (i >= ops.size())
        break;
      auto symbol = dyn_cast<SymbolOpInterface>(ops[i]);
      std::optional<SymbolTable::UseRange> uses =
          symbol ? SymbolTable::getSymbolUses(symbol.getOperation(), *best)
                 : std::nullopt;
      if (!symbol || !uses || !uses->empty())
        continue;
      if (attempt([i](ModuleOp m) {
            auto it = m.getBody()->begin();
            std::advance(it, i);
            it->erase();
            return true;
          })) {
        any = true;
        --i;
      }
    }
    return any;
  }

  /// The ops erase-ops may take: not functions, terminators or symbol
  /// tables (their bodies are reduced instead).
  SmallVector<unsigned> erasable() {
    SmallVector<unsigned> out;
    for (auto [i, op] : llvm::enumerate(opsInOrder(*best)))
      if (!isa<FunctionOpInterface>(op) &&
          !op->hasTrait<OpTrait::IsTerminator>() &&
          !op->hasTrait<OpTrait::SymbolTable>())
        out.push_back(i);
    return out;
  }

  /// ddmin's complement step: erase chunks of halving size, then single
  /// ops, the candidates renumbered after each success.
  bool eraseOpChunks() {
    bool any = false;
    size_t chunk = std::max<size_t>(erasable().size() / 2, 1);
    while (true) {
      bool erased = false;
      SmallVector<unsigned> candidates = erasable();
      for (size_t start = candidates.size(); start > 0 && !erased;) {
        size_t begin = start > chunk ? start - chunk : 0;
        SmallVector<unsigned> positions(candidates.begin() + begin,
                                        candidates.begin() + start);
        if (attempt([&](ModuleOp m) { return eraseOps(m, positions); }))
          erased = true;
        start = begin;
      }
      any |= erased;
      if (!erased) {
        if (chunk == 1)
          break;
        chunk = std::max<size_t>(chunk / 2, 1);
      }
    }
    return any;
  }

  /// The functions nobody calls, by position among the module's ops.
  SmallVector<unsigned> uncalledFunctions() {
    SmallVector<unsigned> out;
    for (auto [i, op] : llvm::enumerate(best->getBody()->getOperations()))
      if (auto func = dyn_cast<FunctionOpInterface>(&op))
        if (!func.isExternal() && !isCalled(func, *best))
          out.push_back(i);
    return out;
  }

  static FunctionOpInterface functionAt(ModuleOp m, unsigned i) {
    auto it = m.getBody()->begin();
    std::advance(it, i);
    return cast<FunctionOpInterface>(&*it);
  }

  bool dropResults() {
    bool any = false;
    for (unsigned f : uncalledFunctions())
      for (unsigned r = functionAt(*best, f).getNumResults(); r-- > 0;)
        any |= attempt([f, r](ModuleOp m) {
          FunctionOpInterface func = functionAt(m, f);
          // Every block that returns drops the operand.
          for (Block &block : func.getFunctionBody()) {
            Operation *term = block.getTerminator();
            if (term->hasTrait<OpTrait::ReturnLike>() &&
                term->getNumOperands() == func.getNumResults())
              term->eraseOperand(r);
          }
          return succeeded(func.eraseResult(r));
        });
    return any;
  }

  bool dropArguments() {
    bool any = false;
    for (unsigned f : uncalledFunctions())
      for (unsigned a = functionAt(*best, f).getNumArguments(); a-- > 0;) {
        if (!functionAt(*best, f).getArgument(a).use_empty())
          continue;
        any |= attempt([f, a](ModuleOp m) {
          return succeeded(functionAt(m, f).eraseArgument(a));
        });
      }
    return any;
  }

  bool forwardOperands() {
    bool any = false;
    for (unsigned i : erasable()) {
      Operation *op = opsInOrder(*best)[i];
      if (op->getNumResults() != 1 || op->getResult(0).use_empty())
        continue;
      for (unsigned o = 0; o < op->getNumOperands(); ++o) {
        if (op->getOperand(o).getType() != op->getResult(0).getType())
          continue;
        if (attempt([i, o](ModuleOp m) {
              Operation *target = opsInOrder(m)[i];
              target->getResult(0).replaceAllUsesWith(target->getOperand(o));
              target->erase();
              return true;
            })) {
          any = true;
          break;
        }
      }
    }
    return any;
  }

  OwningOpRef<ModuleOp> best;
  Tester &tester;
  LogicalResult status = success();
  bool stopped = false;
};

/// test= and test-arg= from mlir-reduce's -reduction-tree options.
void readReductionTree(StringRef options) {
  SmallVector<StringRef> parts;
  options.split(parts, ' ', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    auto [key, value] = part.split('=');
    value = value.trim("'\"");
    if (key == "test" && testScript.empty())
      testScript = value.str();
    else if (key == "test-arg")
      testArgs.push_back(value.str());
  }
}

size_t countLines(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return llvm::count(text, '\n');
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "dist version " DIST_VERSION_STRING "\n";
  });
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "dist-reduce: cut a dist program down while a test still finds it "
      "interesting\n");
  if (!reductionTree.empty())
    readReductionTree(reductionTree);
  if (testScript.empty()) {
    llvm::errs() << "dist-reduce: no test given (--test=SCRIPT)\n";
    return EXIT_FAILURE;
  }

  DialectRegistry registry;
  dist::registerAllDistDialects(registry);
  registerAllDialects(registry);
  registerAllExtensions(registry);
  MLIRContext context(registry);
  context.allowUnregisteredDialects(false);

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(inputFile, &error);
  if (!file) {
    llvm::errs() << "dist-reduce: " << error << "\n";
    return EXIT_FAILURE;
  }
  if (std::optional<std::string> tooDeep =
          dist::checkNestingDepthOf(inputFile, file->getBuffer())) {
    llvm::errs() << *tooDeep << "\n";
    return EXIT_FAILURE;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = dist::parseInput(sourceMgr, &context);
  if (!module)
    return EXIT_FAILURE;

  Tester tester(testScript,
                std::vector<std::string>(testArgs.begin(), testArgs.end()));
  size_t opsBefore = opsInOrder(*module).size();
  size_t linesBefore = countLines(*module);
  Reducer reducer(std::move(module), tester);
  if (failed(reducer.run()))
    return EXIT_FAILURE;

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "dist-reduce: " << error << "\n";
    return EXIT_FAILURE;
  }
  reducer.result().print(output->os());
  output->keep();
  llvm::errs() << "dist-reduce: " << opsBefore << " ops (" << linesBefore
               << " lines) -> " << opsInOrder(reducer.result()).size()
               << " ops (" << countLines(reducer.result()) << " lines), "
               << tester.runs << " tests\n";
  return EXIT_SUCCESS;
}
