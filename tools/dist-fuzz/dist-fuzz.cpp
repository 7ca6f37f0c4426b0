//===- dist-fuzz.cpp - libFuzzer targets for the parser, passes, lowering -===//
//
// One libFuzzer binary, several targets, chosen by the name it is run under
// (the build makes a link per target):
//
//   dist-fuzz-parse           parse + verify, as dist-opt does first;
//   dist-fuzz-pass-<flag>     parse + verify, then the dist pass or pipeline
//                             --<flag> (with the verifier after it);
//   dist-fuzz-lower           parse + verify, then --dist-to-llvm.
//
// An input either fails with diagnostics (which are dropped) or succeeds;
// a crash, a sanitizer report, a timeout or a leak is a finding. Inputs
// nested deeper than the drivers accept are skipped, as dist-opt refuses
// them before parsing.
//
//===----------------------------------------------------------------------===//

#include "dist/InitAllDist.h"
#include "dist/Support/InputLimits.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

using namespace mlir;

namespace {
/// What the running target does after parsing: nothing (parse), or this
/// textual pipeline.
std::string pipeline;
bool parseOnly = true;

/// A context is reused across inputs (creating one per input would cost
/// more than the input), and replaced now and then so that what it uniques
/// does not grow without bound.
constexpr unsigned kInputsPerContext = 2000;
std::unique_ptr<MLIRContext> context;
unsigned inputsInContext = 0;
DialectRegistry *registry = nullptr;

MLIRContext &getContext() {
  if (!context || ++inputsInContext > kInputsPerContext) {
    context = std::make_unique<MLIRContext>(*registry,
                                            MLIRContext::Threading::DISABLED);
    // Diagnostics are expected (most mutated inputs are invalid): drop them.
    context->getDiagEngine().registerHandler([](Diagnostic &) {});
    inputsInContext = 0;
  }
  return *context;
}

[[noreturn]] void usage(llvm::StringRef name) {
  llvm::errs() << "dist-fuzz: run as dist-fuzz-parse, dist-fuzz-lower or "
                  "dist-fuzz-pass-<pass flag>, not as '"
               << name << "'\n";
  std::exit(2);
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  registry = new DialectRegistry();
  dist::registerAllDistDialects(*registry);
  registerAllDialects(*registry);
  registerAllExtensions(*registry);
  registerAllPasses();
  dist::registerAllDistPasses();

  llvm::StringRef name = llvm::sys::path::filename((*argv)[0]);
  if (name == "dist-fuzz-parse")
    return 0;
  parseOnly = false;
  if (name == "dist-fuzz-lower")
    pipeline = "dist-to-llvm";
  else if (name.consume_front("dist-fuzz-pass-") && !name.empty())
    pipeline = name.str();
  else
    usage(name);
  // Check the pipeline once, so that a bad link name is an error up front
  // instead of every input failing quietly.
  OpPassManager pm(ModuleOp::getOperationName());
  std::string error;
  llvm::raw_string_ostream os(error);
  // A pass that runs on functions is nested, as dist-opt does implicitly.
  if (failed(parsePassPipeline(pipeline, pm, llvm::nulls())))
    pipeline = "func.func(" + pipeline + ")";
  if (failed(parsePassPipeline(pipeline, pm, os))) {
    llvm::errs() << "dist-fuzz: '" << pipeline << "' is not a pass: " << error
                 << "\n";
    std::exit(2);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // MLIR's lexer reads up to a terminating NUL, as every file buffer has:
  // the input is given one.
  std::string text(reinterpret_cast<const char *>(data), size);
  if (dist::checkNestingDepth(text))
    return 0;
  MLIRContext &ctx = getContext();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(text, "input"),
                               llvm::SMLoc());
  OwningOpRef<ModuleOp> module = dist::parseInput(sourceMgr, &ctx);
  if (!module || parseOnly)
    return 0;
  PassManager pm(&ctx, ModuleOp::getOperationName());
  if (failed(parsePassPipeline(pipeline, pm)))
    return 0;
  (void)pm.run(*module);
  return 0;
}
