//===- dist-opt.cpp - the dist optimizer driver ---------------------------===//
//
// mlir-opt for dist programs: the dist dialect, its passes and lowerings,
// plus upstream MLIR.
//
//===----------------------------------------------------------------------===//

#include "dist/InitAllDist.h"
#include "dist/Support/InputLimits.h"
#include "dist/Support/ParserCrashGuard.h"
#include "dist/Version.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <atomic>
#include <chrono>

namespace mlir::dist::test {
void registerTestDistPatterns();
void registerTestDistLowering();
void registerTestDistTranspose();
void registerTestDistPipelineSchedules();
} // namespace mlir::dist::test

static llvm::cl::opt<bool> passWallTime(
    "dist-pass-wall-time",
    llvm::cl::desc("Print the wall time of each top-level pass (a nested "
                   "pipeline counts as one) to stderr. Unlike --mlir-timing "
                   "it times nothing per function, so it measures runs on "
                   "several threads without slowing them down"),
    llvm::cl::init(false));

namespace {
/// Whether an error was reported while a pipeline ran on the current input.
std::atomic<bool> errorReported{false};

/// MlirOptMain on one buffer with MLIR's parser guarded (ParserCrashGuard.h):
/// a crash while parsing becomes a located error; once the input is parsed
/// (the pipeline is set up after the parse) the guard is off, so that a
/// crash in a pass is reported as one, with its stack trace.
mlir::LogicalResult runGuarded(llvm::raw_ostream &os,
                               std::unique_ptr<llvm::MemoryBuffer> buffer,
                               mlir::DialectRegistry &registry,
                               const mlir::MlirOptMainConfig &config) {
  const llvm::MemoryBuffer &input = *buffer;
  mlir::LogicalResult result = mlir::failure();
  errorReported = false;
  if (mlir::dist::runParserGuarded([&] {
        result = mlir::MlirOptMain(
            os,
            llvm::MemoryBuffer::getMemBuffer(input.getMemBufferRef(),
                                             /*RequiresNullTerminator=*/false),
            registry, config);
      }))
    return mlir::failure(mlir::failed(result) || errorReported);
  mlir::dist::ParserCrashReport crash =
      mlir::dist::reportParserCrash(input.getBuffer(), registry);
  if (!crash.offset) {
    llvm::errs() << input.getBufferIdentifier() << ": error: " << crash.message
                 << "\n";
    return mlir::failure();
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(input.getMemBufferRef(), false),
      llvm::SMLoc());
  sourceMgr.PrintMessage(
      llvm::errs(),
      llvm::SMLoc::getFromPointer(input.getBufferStart() + *crash.offset),
      llvm::SourceMgr::DK_Error, crash.message);
  return mlir::failure();
}

/// runGuarded on each chunk of a split input, as MlirOptMain splits it. A
/// chunk is preceded by as many empty lines as the input has before it, so
/// that its diagnostics name the input's lines.
mlir::LogicalResult runSplitGuarded(llvm::raw_ostream &os,
                                    std::unique_ptr<llvm::MemoryBuffer> file,
                                    mlir::DialectRegistry &registry,
                                    const mlir::MlirOptMainConfig &split) {
  std::string inputMarker = split.inputSplitMarker().str();
  std::string outputMarker = split.outputSplitMarker().str();
  mlir::MlirOptMainConfig config = split;
  config.splitInputFile("");
  llvm::StringRef whole = file->getBuffer();
  std::string name = file->getBufferIdentifier().str();
  // Each chunk's offset in the input: splitAndProcessBuffer hands chunks
  // out in order, and each is found after the previous one.
  size_t searchFrom = 0;
  return mlir::splitAndProcessBuffer(
      std::move(file),
      [&](std::unique_ptr<llvm::MemoryBuffer> chunk,
          llvm::raw_ostream &chunkOs) {
        llvm::StringRef text = chunk->getBuffer();
        size_t at = whole.find(text, searchFrom);
        std::string padded;
        if (at != llvm::StringRef::npos) {
          padded.assign(whole.take_front(at).count('\n'), '\n');
          searchFrom = at + text.size();
        }
        padded += text;
        return runGuarded(chunkOs,
                          llvm::MemoryBuffer::getMemBufferCopy(padded, name),
                          registry, config);
      },
      os, inputMarker, outputMarker);
}

/// Times the passes that run on the root operation. Nested pipelines run
/// inside their adaptor pass, so they are timed whole, threads included.
class PassWallTime : public mlir::PassInstrumentation {
public:
  ~PassWallTime() override {
    double total = 0;
    for (const auto &[name, seconds] : times) {
      llvm::errs() << llvm::format("dist-pass-wall-time: %.4f s  ", seconds)
                   << name << "\n";
      total += seconds;
    }
    llvm::errs() << llvm::format("dist-pass-wall-time: %.4f s  total\n", total);
  }

  void runBeforePass(mlir::Pass *, mlir::Operation *op) override {
    if (!op->getParentOp())
      start = Clock::now();
  }
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override {
    record(pass, op);
  }
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *op) override {
    record(pass, op);
  }

private:
  using Clock = std::chrono::steady_clock;

  void record(mlir::Pass *pass, mlir::Operation *op) {
    if (op->getParentOp())
      return;
    std::string text;
    llvm::raw_string_ostream os(text);
    pass->printAsTextualPipeline(os);
    // Pass options make the lines unreadable: keep the pass names only.
    std::string name;
    int depth = 0;
    for (char c : text) {
      depth += c == '{';
      if (!depth)
        name += c;
      depth -= c == '}';
    }
    times.emplace_back(
        std::move(name),
        std::chrono::duration<double>(Clock::now() - start).count());
  }

  Clock::time_point start;
  std::vector<std::pair<std::string, double>> times;
};
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  // Every upstream dialect, extension and pass, so that the whole way from
  // dist to the LLVM dialect (--dist-to-llvm) runs in one tool. With
  // libMLIR.so this costs no link time.
  mlir::DialectRegistry registry;
  mlir::dist::registerAllDistDialects(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllPasses();
  mlir::dist::registerAllDistPasses();
  mlir::dist::test::registerTestDistPatterns();
  mlir::dist::test::registerTestDistLowering();
  mlir::dist::test::registerTestDistTranspose();
  mlir::dist::test::registerTestDistPipelineSchedules();

  // --version says which dist this is, before LLVM's own version.
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "dist version " DIST_VERSION_STRING "\n";
  });

  // MlirOptMain(argc, argv, ...) as upstream has it, except that the pass
  // manager it builds may get the wall-time instrumentation.
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "dist optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file =
      mlir::openInputFile(inputFilename, &errorMessage);
  if (!file) {
    llvm::errs() << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  // Text is checked before it is parsed; bytecode, which is read without
  // recursion, right after (the first pass), before anything that recurses.
  // The parser does not verify: the first pass does, after refusing what
  // upstream verifiers would crash on (mlir::dist::verifyInput).
  bool bytecode = mlir::dist::isBytecodeInput(file->getBuffer());
  bool verify = config.shouldVerifyOnParsing();
  config.verifyOnParsing(false);
  mlir::MlirOptMainConfig fromCommandLine = config;
  bool verifyDiagnostics = config.shouldVerifyDiagnostics();
  config.setPassPipelineSetupFn([fromCommandLine, bytecode, verify,
                                 verifyDiagnostics](mlir::PassManager &pm) {
    mlir::dist::suspendParserGuard();
    // An error is a failure even where the pass that reported it went
    // on (upstream's LLVM type conversion reports an unconvertible type
    // and leaves the op as it was): dist-opt never exits 0 after one.
    // Under -verify-diagnostics, the expected errors are the point.
    if (!verifyDiagnostics)
      pm.getContext()->getDiagEngine().registerHandler(
          [](mlir::Diagnostic &diag) {
            if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
              errorReported = true;
            return mlir::failure(); // Printed by the next handler.
          });
    pm.addPass(mlir::dist::createCheckInputPass(bytecode, verify));
    if (mlir::failed(fromCommandLine.setupPassPipeline(pm)))
      return mlir::failure();
    if (passWallTime)
      pm.addInstrumentation(std::make_unique<PassWallTime>());
    return mlir::success();
  });
  if (std::optional<std::string> tooDeep = mlir::dist::checkNestingDepthOf(
          file->getBufferIdentifier(), file->getBuffer())) {
    llvm::errs() << *tooDeep << "\n";
    return EXIT_FAILURE;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  if (mlir::failed(
          config.inputSplitMarker().empty()
              ? runGuarded(output->os(), std::move(file), registry, config)
              : runSplitGuarded(output->os(), std::move(file), registry,
                                config)))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
