//===- Redistribution.h - building redistributions and their transposes -===//
//
// What passes call to change a value's distribution: the steps of a reshard
// plan as ops, and the transpose of a redistribution for a backward pass.
//
// Every redistribution (dist.allreduce, all_gather, reduce_scatter,
// all_to_all, all_slice, make_partial, reshard) keeps the global tensor and
// changes only how the processes hold it, so its transpose with respect to
// the global inner product is a redistribution too: the cotangent of the
// result, held however it is held, becomes the cotangent of the operand,
// held as the operand's convention below says. The primitives come out
// paired as Megatron and ZeRO pair them:
//
//   forward                       cotangent of the result   transpose
//   all_gather     (split -> R)   partial sum               reduce_scatter
//                                 replicated                all_slice
//   reduce_scatter (P -> split)   split                     all_gather
//   allreduce      (P -> R)       replicated                identity
//                                 partial sum               identity
//   all_to_all     (dim i -> j)   split dim j               all_to_all j -> i
//   all_slice      (R -> split)   split                     all_gather
//   make_partial   (R -> P)       replicated                identity
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_REDISTRIBUTION_H
#define DIST_DIALECT_DIST_TRANSFORMS_REDISTRIBUTION_H

#include "dist/Analysis/ReshardPlan.h"

#include "mlir/IR/Builders.h"

#include <string>

namespace mlir {
namespace dist {

/// Builds the ops of `plan`'s steps on `input` at `b`'s insertion point, all
/// at `loc`; `globalShape` is the tensor's global shape. Returns the last
/// step's result (`input` for an empty plan).
Value buildReshardSteps(OpBuilder &b, Location loc, const ReshardPlan &plan,
                        Value input, ArrayRef<int64_t> globalShape);

/// Plans and builds the redistribution of `input` (statically shaped, with a
/// #dist.tensor encoding) to distribution `to`, or fails with the reason in
/// `whyNot`.
FailureOr<Value> buildReshard(OpBuilder &b, Location loc, Value input,
                              TensorDistAttr to, const CostModel &model,
                              std::string &whyNot);

/// The distribution of the cotangent of the operand of redistribution `op`
/// when the cotangent of its result is held as `cotangent`. On the mesh
/// axes that `op` acts on (its `axes`; every axis for dist.reshard), the
/// operand's cotangent is split where the operand is split, partial sum
/// where the result's cotangent already is and the operand is not split
/// (no communication to keep it so), and replicated otherwise (the
/// derivative of a reduction's result is every term's). The other axes keep
/// the cotangent's state. Fails when `op` is not a redistribution, the
/// shapes or meshes do not match, or one dim would be split by two axes.
FailureOr<TensorDistAttr> getTransposeDist(Operation *op,
                                           RankedTensorType cotangent,
                                           std::string &whyNot);

/// Builds the transpose of redistribution `op` applied to `cotangent`, the
/// cotangent of `op`'s result (its value type for an asynchronous op), and
/// returns the cotangent of its operand, distributed as getTransposeDist
/// says, through the cheapest plan `model` finds.
FailureOr<Value> buildTranspose(OpBuilder &b, Location loc, Operation *op,
                                Value cotangent, const CostModel &model,
                                std::string &whyNot);

} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_TRANSFORMS_REDISTRIBUTION_H
