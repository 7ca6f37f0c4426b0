//===- StripDLTI.cpp - drop the MPI target entry after lowering -----------===//
//
// Implements --dist-strip-dlti.
//
//===----------------------------------------------------------------------===//

#include "dist/Conversion/Passes.h"

#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/MPI/IR/MPI.h"

namespace mlir {
namespace dist {
#define GEN_PASS_DEF_DISTSTRIPDLTI
#include "dist/Conversion/Passes.h.inc"
} // namespace dist
} // namespace mlir

using namespace mlir;

namespace {
struct DistStripDLTIPass
    : public dist::impl::DistStripDLTIBase<DistStripDLTIPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult leftover = module.walk([](Operation *op) {
      if (isa<mpi::MPIDialect>(op->getDialect())) {
        op->emitError("the MPI target entry is still needed: lower the mpi "
                      "ops (--convert-to-llvm) first");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (leftover.wasInterrupted())
      return signalPassFailure();
    auto map = module->getAttrOfType<MapAttr>(DLTIDialect::kMapAttrName);
    if (!map)
      return;
    SmallVector<DataLayoutEntryInterface> kept;
    for (DataLayoutEntryInterface entry : map.getEntries())
      if (entry.getKey() != DataLayoutEntryKey(StringAttr::get(
                                &getContext(), "MPI:Implementation")))
        kept.push_back(entry);
    if (kept.empty())
      module->removeAttr(DLTIDialect::kMapAttrName);
    else
      module->setAttr(DLTIDialect::kMapAttrName,
                      MapAttr::get(&getContext(), kept));
  }
};
} // namespace
