//===- TensorRuleModels.cpp - rules of tensor slices, concat and pad ------===//
//
// The tensor ops that move parts of a tensor: each process applies them to
// its block, so they compute a block of the global result only where a
// split dim is taken whole (a slice of it, or padding, would take a
// different part on each process). Selections pass partial values when
// every part is partial alike; padding passes a pending sum only with
// zeros.
//
//===----------------------------------------------------------------------===//

#include "RuleModelUtils.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::rules;
using rules::detail::GivenTypes;
using rules::detail::MeshRuleModel;

/// Whether the slice of `op` takes dim `dim` of a tensor of local size
/// `size` whole: offset 0, the full size, stride 1, all static.
static bool takesWhole(OffsetSizeAndStrideOpInterface op, unsigned dim,
                       int64_t size) {
  return op.isDynamicOffset(dim) == false && op.getStaticOffset(dim) == 0 &&
         !op.isDynamicSize(dim) && op.getStaticSize(dim) == size &&
         !op.isDynamicStride(dim) && op.getStaticStride(dim) == 1;
}

/// The part of a slice's rule both slices share: `full` is the tensor the
/// slice is of (the source of extract_slice, the destination of
/// insert_slice), `part` the sliced tensor's distribution, which must be
/// `full`'s on the dims the slice keeps (those not in `dropped`).
static LogicalResult checkSlice(OffsetSizeAndStrideOpInterface op,
                                const llvm::SmallBitVector &dropped,
                                RankedTensorType fullType, const Dist &full,
                                const Dist &part, raw_ostream &whyNot) {
  int64_t partDim = 0;
  for (int64_t d = 0; d < fullType.getRank(); ++d) {
    int64_t axis = full.dims[d];
    int64_t partAxis = dropped.test(d) ? -1 : part.dims[partDim];
    if (axis >= 0 && !takesWhole(op, d, fullType.getDimSize(d))) {
      whyNot << "dim " << d << " is split over mesh "
             << axisName(full.mesh, axis)
             << " and the slice does not take it whole: each process would "
                "take a different part of the global tensor";
      return failure();
    }
    if (axis >= 0 && dropped.test(d)) {
      whyNot << "dim " << d << " is split over mesh "
             << axisName(full.mesh, axis) << " and dropped by the slice";
      return failure();
    }
    if (!dropped.test(d)) {
      if (partAxis != axis) {
        whyNot << "the sliced tensor's dim " << partDim << " is "
               << (partAxis < 0
                       ? "replicated"
                       : "split over mesh " + axisName(full.mesh, partAxis))
               << " but dim " << d << " of the whole is "
               << (axis < 0 ? "replicated"
                            : "split over mesh " + axisName(full.mesh, axis));
        return failure();
      }
      ++partDim;
    }
  }
  return success();
}

namespace {
struct ExtractSliceModel
    : public MeshRuleModel<ExtractSliceModel, tensor::ExtractSliceOp> {
  FailureOr<SmallVector<Dist>> infer(tensor::ExtractSliceOp slice,
                                     GivenTypes types, MeshAttr mesh,
                                     raw_ostream &whyNot) const {
    auto sourceType =
        cast<RankedTensorType>(types.of(slice.getSourceMutable()));
    Dist src = Dist::of(sourceType, mesh);
    // The result keeps the source's splits on the dims it keeps; a slice
    // is linear, so every partial passes.
    Dist out;
    out.mesh = mesh;
    out.partial = src.partial;
    Dist declared = Dist::of(types.results.front(), mesh);
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    if (!getTensorDist(types.results.front())) {
      // Undecided (completion asks): the kept dims keep the source's
      // splits, the only distribution checkSlice accepts.
      declared.dims.clear();
      for (int64_t d = 0; d < sourceType.getRank(); ++d)
        if (!dropped.test(d))
          declared.dims.push_back(src.dims[d]);
    }
    if (failed(checkSlice(slice, dropped, sourceType, src, declared, whyNot)))
      return failure();
    out.dims = declared.dims;
    return SmallVector<Dist>{std::move(out)};
  }
};

/// The parts must be partial alike: a replicated part among partial sums
/// would be counted once per process.
static LogicalResult samePartials(const Dist &a, const Dist &b, StringRef what,
                                  raw_ostream &whyNot) {
  SmallVector<std::pair<int64_t, ReductionKind>> pa(a.partial), pb(b.partial);
  llvm::sort(pa, llvm::less_first());
  llvm::sort(pb, llvm::less_first());
  if (pa == pb)
    return success();
  whyNot << what
         << " are not partial alike: a part that is not partial would be "
            "counted once per process";
  return failure();
}

struct InsertSliceModel
    : public MeshRuleModel<InsertSliceModel, tensor::InsertSliceOp> {
  FailureOr<SmallVector<Dist>> infer(tensor::InsertSliceOp insert,
                                     GivenTypes types, MeshAttr mesh,
                                     raw_ostream &whyNot) const {
    // The destination as the op's result is typed (upstream's getDestType):
    // the two are one type, and completion prices a new destination only
    // with its result's type (an init keeps its result's type).
    auto destType = cast<RankedTensorType>(types.results.front());
    Dist src = Dist::of(types.of(insert.getSourceMutable()), mesh);
    Dist dest = Dist::of(destType, mesh);
    llvm::SmallBitVector dropped = insert.getDroppedDims();
    if (!getTensorDist(destType)) {
      // Undecided (completion asks): the whole takes the part's splits and
      // pending reductions, the only distribution checkSlice accepts.
      dest.dims.clear();
      int64_t partDim = 0;
      for (int64_t d = 0; d < destType.getRank(); ++d)
        dest.dims.push_back(dropped.test(d) ? -1 : src.dims[partDim++]);
      dest.partial = src.partial;
    }
    if (failed(checkSlice(insert, dropped, destType, dest, src, whyNot)) ||
        failed(
            samePartials(src, dest, "the source and the destination", whyNot)))
      return failure();
    return SmallVector<Dist>{std::move(dest)};
  }
};

struct ConcatModel : public MeshRuleModel<ConcatModel, tensor::ConcatOp> {
  FailureOr<SmallVector<Dist>> infer(tensor::ConcatOp concat, GivenTypes types,
                                     MeshAttr mesh, raw_ostream &whyNot) const {
    Dist first = Dist::of(types.operands.front(), mesh);
    for (auto [i, operand] : llvm::enumerate(types.operands)) {
      Dist d = Dist::of(operand, mesh);
      if (d.dims != first.dims) {
        whyNot << "operand #" << i << " is split differently from operand #0";
        return failure();
      }
      if (failed(samePartials(first, d, "the operands", whyNot)))
        return failure();
    }
    int64_t dim = concat.getDim();
    if (first.dims[dim] >= 0) {
      whyNot << "the concatenated dim " << dim << " is split over mesh "
             << axisName(mesh, first.dims[dim])
             << ": the local concatenation would interleave the shards";
      return failure();
    }
    return SmallVector<Dist>{std::move(first)};
  }
};

struct PadModel : public MeshRuleModel<PadModel, tensor::PadOp> {
  /// The rule reads the padding value: a zero pads a partial sum.
  void appendRuleAttributes(Operation *op,
                            SmallVectorImpl<const void *> &key) const {
    rules::appendInherentAttributes(op, key);
    key.push_back(rules::detail::constantKeyWord(
        cast<tensor::PadOp>(op).getConstantPaddingValue()));
  }

  FailureOr<SmallVector<Dist>> infer(tensor::PadOp pad, GivenTypes types,
                                     MeshAttr mesh, raw_ostream &whyNot) const {
    Dist src = Dist::of(types.of(pad.getSourceMutable()), mesh);
    ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
    for (auto [dim, axis] : llvm::enumerate(src.dims))
      if (axis >= 0 && (low[dim] != 0 || high[dim] != 0)) {
        whyNot << "dim " << dim << " is split over mesh "
               << axisName(mesh, axis)
               << " and padded: every process would pad its shard";
        return failure();
      }
    if (src.partial.empty())
      return SmallVector<Dist>{std::move(src)};
    // The padding is on every process: a sum counts it once per process
    // unless it is zero; max and min take it once.
    Value padding = pad.getConstantPaddingValue();
    Attribute value;
    bool zero = padding && matchPattern(padding, m_Constant(&value)) &&
                ((isa<FloatAttr>(value) &&
                  cast<FloatAttr>(value).getValue().isZero()) ||
                 (isa<IntegerAttr>(value) &&
                  cast<IntegerAttr>(value).getValue().isZero()));
    for (auto [axis, kind] : src.partial)
      if (kind != ReductionKind::Max && kind != ReductionKind::Min && !zero) {
        whyNot << "the source is partial (" << stringifyReductionKind(kind)
               << ") over mesh " << axisName(mesh, axis)
               << " and the padding is not a constant zero: every process "
                  "would add it";
        return failure();
      }
    return SmallVector<Dist>{std::move(src)};
  }
};
} // namespace

using TensorSelections =
    rules::detail::OpList<tensor::ExtractSliceOp, tensor::InsertSliceOp,
                          tensor::ConcatOp, tensor::PadOp>;

void mlir::dist::registerTensorRuleModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::ExtractSliceOp::attachInterface<ExtractSliceModel>(*ctx);
    tensor::InsertSliceOp::attachInterface<InsertSliceModel>(*ctx);
    tensor::ConcatOp::attachInterface<ConcatModel>(*ctx);
    tensor::PadOp::attachInterface<PadModel>(*ctx);
  });
}

void mlir::dist::promiseTensorRules(MLIRContext *ctx) {
  rules::detail::promise(ctx, TensorSelections{});
}
