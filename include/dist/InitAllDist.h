//===- InitAllDist.h - register everything dist provides --------*- C++ -*-===//
//
// The one place that says what a tool must register to read, check and
// rewrite dist programs (as CIRCT's InitAllDialects.h / InitAllPasses.h do).
// Every dist tool calls these two functions; so should a tool that embeds
// dist.
//
//   mlir::DialectRegistry registry;
//   mlir::dist::registerAllDistDialects(registry);
//   mlir::dist::registerAllDistPasses();
//
// Inserting `dist::DistDialect` alone is not enough: the distribution rules
// of the upstream ops dist programs use (arith, tensor) are external models.
// A tool that misses them gets an error naming this header when a rule is
// needed (the rules are promised interfaces), not a wrong verdict.
//
// Link: Dist::MLIRDist, Dist::MLIRDistTransforms, Dist::MLIRDistConversion.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_INITALLDIST_H
#define DIST_INITALLDIST_H

#include "dist/Conversion/MPIMemoryEffects.h"
#include "dist/Conversion/Passes.h"
#include "dist/Conversion/Pipelines.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"
#include "dist/Dialect/Dist/Transforms/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace dist {

/// The dist dialect with the distribution rules of upstream ops (external
/// models of DistributionRuleInterface), and the memory effects of the mpi
/// ops that buffer deallocation needs (MPIMemoryEffects.h). It does not add
/// the upstream dialects a program uses (func, scf, ...): register those as
/// usual.
inline void registerAllDistDialects(DialectRegistry &registry) {
  registerDistDialect(registry);
  registerMPIMemoryEffectModels(registry);
}

/// Every dist pass, pass pipeline (--dist-auto-parallel, --dist-to-llvm)
/// and conversion, for command lines and pass-pipeline strings.
inline void registerAllDistPasses() {
  registerDistPasses();
  registerDistPipelines();
  registerDistConversionPasses();
  registerDistConversionPipelines();
}

} // namespace dist
} // namespace mlir

#endif // DIST_INITALLDIST_H
