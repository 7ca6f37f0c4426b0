//===- MatmulGeometry.h - which dims of a dist matmul do what ---*- C++ -*-===//
//
// dist.matmul and dist.matmul_grad compute `op(x) * op(y)` as Paddle's
// matmul_v2 does: op transposes the last two dims when asked, those are the
// rows and columns of each operand (x: m by k, y: k by n), and the leading
// dims are batch dims, aligned from the right and broadcast as numpy does.
// The one statement of that geometry: the verifier's shape rule, the
// distribution rule, the linalg lowering and the cost model all read it from
// here (and the Python builder, through the C API's
// mlirDistMatmulResultShape).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_MATMULGEOMETRY_H
#define DIST_DIALECT_DIST_IR_MATMULGEOMETRY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <cstdint>
#include <optional>

namespace mlir {
namespace dist {
namespace matmul {

/// The dim of `op(t)`'s rows in `t` (of `rank` >= 2): x's m, y's k.
inline unsigned rowDim(unsigned rank, bool transposed) {
  assert(rank >= 2 && "a matmul operand has rank >= 2");
  return transposed ? rank - 1 : rank - 2;
}

/// The dim of `op(t)`'s columns in `t`: x's k, y's n.
inline unsigned colDim(unsigned rank, bool transposed) {
  assert(rank >= 2 && "a matmul operand has rank >= 2");
  return transposed ? rank - 2 : rank - 1;
}

/// The leading batch dims of an operand of `rank`.
inline unsigned batchRank(unsigned rank) { return rank - 2; }

/// The loop each dim of an operand of `rank` iterates, in a loop nest whose
/// first `resultBatch` loops are the result's batch dims (an operand's batch
/// dims align with the last of them) and where `rowLoop` and `colLoop`
/// iterate `op(t)`'s rows and columns. Each user orders m, n and k as it
/// needs (the lowering keeps n innermost, for contiguous reads).
inline llvm::SmallVector<unsigned> operandLoops(unsigned rank, bool transposed,
                                                unsigned resultBatch,
                                                unsigned rowLoop,
                                                unsigned colLoop) {
  llvm::SmallVector<unsigned> loops(rank);
  unsigned batch = batchRank(rank);
  assert(batch <= resultBatch && "an operand has at most the result's batch");
  for (unsigned j = 0; j < batch; ++j)
    loops[j] = resultBatch - batch + j;
  loops[rowDim(rank, transposed)] = rowLoop;
  loops[colDim(rank, transposed)] = colLoop;
  return loops;
}

/// The shape of `op(x) * op(y)` for operands of shapes `xs` and `ys`: the
/// batch dims broadcast, then m and n. Nothing when the operands have rank
/// below 2, their contraction sizes differ or their batch dims do not
/// broadcast; `why` then says which (the verifier's message, and the C
/// API's, which the Python builder raises).
std::optional<llvm::SmallVector<int64_t>>
resultShape(llvm::ArrayRef<int64_t> xs, llvm::ArrayRef<int64_t> ys,
            bool transposeX, bool transposeY, llvm::raw_ostream &why);

} // namespace matmul
} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_IR_MATMULGEOMETRY_H
