//===- MPIMemoryEffects.h - memory effects of upstream mpi ops --*- C++ -*-===//
//
// MLIR 22 declares no memory effects for mpi.init, mpi.finalize,
// mpi.allreduce, mpi.send and mpi.recv, and ownership-based buffer
// deallocation refuses a function holding an op with unknown effects: a
// program lowered to MPI could not free its buffers. These external models
// say what the ops do, as MPI defines it. The non-blocking mpi.isend and
// mpi.irecv get none: their buffers are in use until a wait the ops do not
// name, so deallocation must refuse them rather than free a buffer MPI
// still reads or writes.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_CONVERSION_MPIMEMORYEFFECTS_H
#define DIST_CONVERSION_MPIMEMORYEFFECTS_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace dist {

void registerMPIMemoryEffectModels(DialectRegistry &registry);

} // namespace dist
} // namespace mlir

#endif // DIST_CONVERSION_MPIMEMORYEFFECTS_H
