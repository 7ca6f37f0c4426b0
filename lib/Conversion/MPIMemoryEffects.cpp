//===- MPIMemoryEffects.cpp - memory effects of upstream mpi ops ----------===//

#include "dist/Conversion/MPIMemoryEffects.h"

#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {
using Effects =
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>;

/// mpi.init and mpi.finalize change MPI's state: a write of the default
/// resource, so that nothing moves or removes them.
template <typename OpTy>
struct StateModel
    : public MemoryEffectOpInterface::ExternalModel<StateModel<OpTy>, OpTy> {
  void getEffects(Operation *, Effects &effects) const {
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

/// A blocking transfer: it reads `read` (may be null) and writes `written`
/// (may be null), and, as communication, changes MPI's state too.
template <typename OpTy>
struct TransferModel
    : public MemoryEffectOpInterface::ExternalModel<TransferModel<OpTy>, OpTy> {
  void getEffects(Operation *op, Effects &effects) const {
    auto transfer = cast<OpTy>(op);
    effects.emplace_back(MemoryEffects::Write::get());
    if (OpOperand *read = readOperand(transfer))
      effects.emplace_back(MemoryEffects::Read::get(), read);
    if (OpOperand *written = writtenOperand(transfer))
      effects.emplace_back(MemoryEffects::Write::get(), written);
  }

  static OpOperand *readOperand(mpi::AllReduceOp op) {
    return &op.getSendbufMutable();
  }
  static OpOperand *writtenOperand(mpi::AllReduceOp op) {
    return &op.getRecvbufMutable();
  }
  static OpOperand *readOperand(mpi::SendOp op) { return &op.getRefMutable(); }
  static OpOperand *writtenOperand(mpi::SendOp) { return nullptr; }
  static OpOperand *readOperand(mpi::RecvOp) { return nullptr; }
  static OpOperand *writtenOperand(mpi::RecvOp op) {
    return &op.getRefMutable();
  }
};
} // namespace

void mlir::dist::registerMPIMemoryEffectModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, mpi::MPIDialect *) {
    mpi::InitOp::attachInterface<StateModel<mpi::InitOp>>(*ctx);
    mpi::FinalizeOp::attachInterface<StateModel<mpi::FinalizeOp>>(*ctx);
    mpi::AllReduceOp::attachInterface<TransferModel<mpi::AllReduceOp>>(*ctx);
    mpi::SendOp::attachInterface<TransferModel<mpi::SendOp>>(*ctx);
    mpi::RecvOp::attachInterface<TransferModel<mpi::RecvOp>>(*ctx);
  });
}
