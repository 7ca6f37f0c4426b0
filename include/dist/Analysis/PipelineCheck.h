//===- PipelineCheck.h - transfers between stages cannot deadlock -*- C++
//-*-===//
//
// A pipeline stage's program is a case of an `scf.index_switch` on
// `dist.process_coord` of the pipeline axis: the processes at coordinate s
// run case s. Its `dist.send`s and `dist.recv`s talk to other cases of the
// same switch. The check proves, before anything runs, that every transfer
// is matched and that no order of them can deadlock when every send blocks
// until its receive is posted (rendezvous, MPI_Ssend): a program that only
// works because MPI buffers small messages is rejected.
//
// The proof is an exact replay: every stage advances through its transfers
// in program order; a send completes once the peer has posted the receive
// with its tag (a blocking receive is posted when it is reached, a future
// one when it is issued), a blocking receive or a wait once the peer's send
// has happened. Tags are unique per ordered pair of stages, so which
// receive takes which send is never a matter of timing. The replay either
// finishes every stage, or stops where each unfinished stage blocks: that
// set is a deadlock, reported at the first blocked transfer with a note
// where each other stage waits.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_ANALYSIS_PIPELINECHECK_H
#define DIST_ANALYSIS_PIPELINECHECK_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace dist {

/// Checks every `dist.send` and `dist.recv` under `root`: each is directly
/// in a case of an `scf.index_switch` on `dist.process_coord` of its mesh
/// axis, names another stage of it, has a unique tag and a partner of the
/// same type in the peer's case, and the switch's transfers cannot
/// deadlock. Emits a located error and fails on the first violation.
LogicalResult verifyPipelineTransfers(Operation *root);

} // namespace dist
} // namespace mlir

#endif // DIST_ANALYSIS_PIPELINECHECK_H
