//===- CostModel.cpp - compute and communication time estimates -----------===//

#include "dist/Analysis/CostModel.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/MatmulGeometry.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dist;

LogicalResult
CostModelOptions::verify(function_ref<InFlightDiagnostic()> emitError) const {
  auto bad = [&](StringRef option, double value, StringRef expected) {
    return emitError() << "cost model option " << option << "=" << value
                       << " must be " << expected;
  };
  if (!std::isfinite(peakTflops) || peakTflops <= 0)
    return bad("peak-tflops", peakTflops, "positive and finite");
  if (!std::isfinite(linkLatencyUs) || linkLatencyUs < 0)
    return bad("link-latency-us", linkLatencyUs, "non-negative and finite");
  if (!std::isfinite(linkBandwidthGBps) || linkBandwidthGBps <= 0)
    return bad("link-bandwidth-gbps", linkBandwidthGBps, "positive and finite");
  if (!std::isfinite(memoryBandwidthGBps) || memoryBandwidthGBps < 0)
    return bad("memory-bandwidth-gbps", memoryBandwidthGBps,
               "non-negative and finite (0: not priced)");
  return success();
}

namespace {
/// Reads a cost-model file's JSON, reporting the first problem at the file.
class CostFileReader {
public:
  explicit CostFileReader(Location fileLoc) : fileLoc(fileLoc) {}

  InFlightDiagnostic error() {
    return emitError(fileLoc) << "invalid cost-model file: ";
  }

  /// A positive finite number at `key` of `object`.
  FailureOr<double> positive(const llvm::json::Object &object, StringRef key,
                             StringRef where) {
    std::optional<double> value = object.getNumber(key);
    if (!value)
      return error() << where << ": '" << key << "' must be a number";
    if (!std::isfinite(*value) || *value <= 0)
      return error() << where << ": '" << key << "' is " << *value
                     << "; it must be positive and finite";
    return *value;
  }

  LogicalResult onlyKeys(const llvm::json::Object &object,
                         ArrayRef<StringRef> keys, StringRef where) {
    for (const auto &entry : object)
      if (!llvm::is_contained(keys, StringRef(entry.first)))
        return error() << where << ": unknown key '" << entry.first.str()
                       << "'";
    return success();
  }

  /// The links of the collective `kind`: an array of {group-size,
  /// latency-us, bandwidth-gbps}, one per group size. An optional kind may
  /// be absent, not empty.
  LogicalResult links(const llvm::json::Object &root, StringRef kind,
                      SmallVectorImpl<MeasuredCosts::Link> &links,
                      bool optional = false) {
    if (optional && !root.get(kind))
      return success();
    const llvm::json::Array *array = root.getArray(kind);
    if (!array || array->empty())
      return error() << "'" << kind
                     << "' must be a non-empty array of measurements";
    for (const llvm::json::Value &value : *array) {
      std::string where = (kind + "[" + Twine(links.size()) + "]").str();
      const llvm::json::Object *entry = value.getAsObject();
      if (!entry)
        return error() << where << " must be an object";
      if (failed(onlyKeys(
              *entry, {"group-size", "latency-us", "bandwidth-gbps"}, where)))
        return failure();
      std::optional<int64_t> groupSize = entry->getInteger("group-size");
      if (!groupSize || *groupSize < 2)
        return error() << where << ": 'group-size' must be an integer of at "
                       << "least 2";
      std::optional<double> latency = entry->getNumber("latency-us");
      if (!latency || !std::isfinite(*latency) || *latency < 0)
        return error() << where << ": 'latency-us' must be a non-negative "
                       << "finite number";
      FailureOr<double> bandwidth = positive(*entry, "bandwidth-gbps", where);
      if (failed(bandwidth))
        return failure();
      for (const MeasuredCosts::Link &link : links)
        if (link.groupSize == *groupSize)
          return error() << where << ": group size " << *groupSize
                         << " is measured twice";
      links.push_back({*groupSize, *latency, *bandwidth});
    }
    llvm::sort(links, [](const auto &a, const auto &b) {
      return a.groupSize < b.groupSize;
    });
    return success();
  }

private:
  Location fileLoc;
};

/// The measurement for the group size nearest to `groupSize` (by ratio):
/// a group of 8 on a machine measured up to 4 uses the 4's figures.
const MeasuredCosts::Link &nearestLink(ArrayRef<MeasuredCosts::Link> links,
                                       int64_t groupSize) {
  const MeasuredCosts::Link *best = &links.front();
  auto distance = [&](int64_t measured) {
    return std::abs(std::log(static_cast<double>(measured) /
                             static_cast<double>(groupSize)));
  };
  for (const MeasuredCosts::Link &link : links)
    if (distance(link.groupSize) < distance(best->groupSize))
      best = &link;
  return *best;
}
} // namespace

FailureOr<MeasuredCosts> MeasuredCosts::parse(StringRef text,
                                              Location fileLoc) {
  CostFileReader reader(fileLoc);
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return reader.error() << llvm::toString(json.takeError());
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return reader.error() << "the file must hold a JSON object";
  if (failed(reader.onlyKeys(*root,
                             {"dist-cost-model", "measured-on", "matmul-tflops",
                              "memory-gbps", "allreduce", "broadcast",
                              "all-gather", "reduce-scatter", "all-to-all"},
                             "the object")))
    return failure();
  std::optional<int64_t> version = root->getInteger("dist-cost-model");
  if (version != 1)
    return reader.error() << "'dist-cost-model' must be 1 (the format this "
                          << "dist-opt reads)";
  MeasuredCosts costs;
  const llvm::json::Object *matmul = root->getObject("matmul-tflops");
  if (!matmul)
    return reader.error() << "'matmul-tflops' must be an object";
  if (failed(reader.onlyKeys(
          *matmul,
          {"matmul", "matmul-transpose-x", "matmul-transpose-y", "matmul-grad"},
          "matmul-tflops")))
    return failure();
  for (auto [key, field] :
       {std::pair{"matmul", &costs.matmulTflops},
        std::pair{"matmul-transpose-x", &costs.matmulTransposeXTflops},
        std::pair{"matmul-transpose-y", &costs.matmulTransposeYTflops},
        std::pair{"matmul-grad", &costs.matmulGradTflops}}) {
    FailureOr<double> rate = reader.positive(*matmul, key, "matmul-tflops");
    if (failed(rate))
      return failure();
    *field = *rate;
  }
  if (root->get("memory-gbps")) {
    FailureOr<double> rate =
        reader.positive(*root, "memory-gbps", "the object");
    if (failed(rate))
      return failure();
    costs.memoryGBps = *rate;
  }
  if (failed(reader.links(*root, "allreduce", costs.allreduce)) ||
      failed(reader.links(*root, "broadcast", costs.broadcast)) ||
      failed(reader.links(*root, "all-gather", costs.allGather,
                          /*optional=*/true)) ||
      failed(reader.links(*root, "reduce-scatter", costs.reduceScatter,
                          /*optional=*/true)) ||
      failed(reader.links(*root, "all-to-all", costs.allToAll,
                          /*optional=*/true)))
    return failure();
  return costs;
}

FailureOr<MeasuredCosts> MeasuredCosts::read(StringRef path,
                                             MLIRContext *context) {
  Location fileLoc = FileLineColLoc::get(context, path, 0, 0);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return emitError(fileLoc) << "cannot read the cost-model file: "
                              << buffer.getError().message();
  return parse((*buffer)->getBuffer(), fileLoc);
}

FailureOr<std::shared_ptr<const MeasuredCosts>>
MeasuredCosts::readForPass(StringRef path, const CostModelOptions &constants,
                           MLIRContext *context) {
  const CostModelOptions defaults;
  for (auto [name, value, fallback] :
       {std::tuple{"peak-tflops", constants.peakTflops, defaults.peakTflops},
        std::tuple{"link-latency-us", constants.linkLatencyUs,
                   defaults.linkLatencyUs},
        std::tuple{"link-bandwidth-gbps", constants.linkBandwidthGBps,
                   defaults.linkBandwidthGBps},
        std::tuple{"memory-bandwidth-gbps", constants.memoryBandwidthGBps,
                   defaults.memoryBandwidthGBps}})
    // NaN != NaN: a NaN constant counts as given, too.
    if (!(value == fallback))
      return emitError(FileLineColLoc::get(context, path, 0, 0))
             << "cost model option " << name << "=" << value
             << " and cost-model=" << path
             << " both given; the file replaces the constants";
  FailureOr<MeasuredCosts> measured = read(path, context);
  if (failed(measured))
    return failure();
  return std::make_shared<const MeasuredCosts>(std::move(*measured));
}

FailureOr<CostModelOptions>
CostModelOptions::fromPassOptions(const CostModelOptions &constants,
                                  StringRef costModelFile, Operation *anchor) {
  CostModelOptions options = constants;
  if (costModelFile.empty()) {
    if (failed(options.verify([&] { return emitError(anchor->getLoc()); })))
      return failure();
    return options;
  }
  FailureOr<std::shared_ptr<const MeasuredCosts>> measured =
      MeasuredCosts::readForPass(costModelFile, constants,
                                 anchor->getContext());
  if (failed(measured))
    return failure();
  options.measured = std::move(*measured);
  return options;
}

LogicalResult PassCostModel::initialize(StringRef costModelFile,
                                        const CostModelOptions &constants,
                                        MLIRContext *context) {
  if (costModelFile.empty())
    return success();
  FailureOr<std::shared_ptr<const MeasuredCosts>> costs =
      MeasuredCosts::readForPass(costModelFile, constants, context);
  if (failed(costs))
    return failure();
  measured = std::move(*costs);
  return success();
}

FailureOr<CostModelOptions>
PassCostModel::getOptions(const CostModelOptions &constants,
                          Operation *anchor) const {
  CostModelOptions options = constants;
  options.measured = measured;
  // At the location only: the op itself would be printed into a note.
  auto emitError = [&] { return mlir::emitError(anchor->getLoc()); };
  if (!measured && failed(options.verify(emitError)))
    return failure();
  return options;
}

std::optional<int64_t> CostModel::tensorBytes(RankedTensorType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  // i1 and other sub-byte types still take a byte each in memory.
  int64_t elementBytes =
      std::max<int64_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
  return checkedBytes(type.getShape(), elementBytes);
}

std::optional<int64_t> CostModel::checkedBytes(ArrayRef<int64_t> shape,
                                               int64_t elementBytes) {
  // A type may name a shape whose size does not fit in 64 bits: no size,
  // rather than a wrapped-around one.
  std::optional<int64_t> bytes = elementBytes;
  for (int64_t dim : shape)
    if (bytes)
      bytes = llvm::checkedMul(*bytes, dim);
  return bytes;
}

std::optional<double> CostModel::matmulFlops(RankedTensorType x,
                                             RankedTensorType result,
                                             bool transposeX) {
  if (!x.hasStaticShape() || !result.hasStaticShape() || x.getRank() < 2)
    return std::nullopt;
  int64_t k = x.getDimSize(matmul::colDim(x.getRank(), transposeX));
  return 2.0 * static_cast<double>(result.getNumElements()) *
         static_cast<double>(k);
}

double CostModel::matmulTime(double flops, bool transposeX,
                             bool transposeY) const {
  double tflops = options.peakTflops;
  if (const MeasuredCosts *measured = options.measured.get()) {
    // A transposed y is read with a stride in the innermost loop, which
    // costs more than a transposed x.
    tflops = transposeY   ? measured->matmulTransposeYTflops
             : transposeX ? measured->matmulTransposeXTflops
                          : measured->matmulTflops;
  }
  return flops / (tflops * 1e12);
}

double CostModel::collectiveTime(RedistributionKind kind, int64_t bytes,
                                 int64_t groupSize) const {
  if (groupSize <= 1 || !communicates(kind))
    return 0.0;
  double size = static_cast<double>(bytes);
  const MeasuredCosts *measured = options.measured.get();
  if (!measured)
    return options.linkLatencyUs * 1e-6 + ringFactor(kind, groupSize) * size /
                                              (options.linkBandwidthGBps * 1e9);
  using Kind = RedistributionKind;
  ArrayRef<MeasuredCosts::Link> links =
      kind == Kind::AllReduce       ? measured->allreduce
      : kind == Kind::Broadcast     ? measured->broadcast
      : kind == Kind::AllGather     ? measured->allGather
      : kind == Kind::ReduceScatter ? measured->reduceScatter
                                    : measured->allToAll;
  double scale = 1.0;
  if (links.empty()) {
    links = measured->allreduce;
    scale =
        ringFactor(kind, groupSize) / ringFactor(Kind::AllReduce, groupSize);
  }
  const MeasuredCosts::Link &link = nearestLink(links, groupSize);
  return link.latencyUs * 1e-6 + scale * size / (link.bandwidthGBps * 1e9);
}

std::optional<double> CostModel::collectiveTime(Operation *op) const {
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  if (!collective)
    return std::nullopt;
  std::optional<int64_t> in = tensorBytes(collective.getInput().getType());
  std::optional<int64_t> out = tensorBytes(collective.getResultTensorType());
  if (!in || !out)
    return std::nullopt;
  int64_t p = mesh::groupSize(collective.getMesh(), collective.getAxes());
  // A c_identity communicates nothing in the forward direction. The larger
  // side is what an all-gather and a reduce-scatter move (p-1)/p of; an
  // all-to-all keeps its size.
  auto redistribution = dyn_cast<RedistributionOpInterface>(op);
  if (!redistribution)
    return 0.0;
  return collectiveTime(redistribution.getRedistributionKind(),
                        std::max(*in, *out), p);
}

double CostModel::memoryBandwidthGBps() const {
  return options.measured ? options.measured->memoryGBps
                          : options.memoryBandwidthGBps;
}

double CostModel::memoryTime(double bytes) const {
  double gbps = memoryBandwidthGBps();
  return gbps > 0 ? bytes / (gbps * 1e9) : 0.0;
}

std::optional<double> CostModel::memoryTraffic(Operation *op,
                                               TypeRange operandTypes,
                                               TypeRange resultTypes) {
  bool dynamic = false;
  auto bytes = [&](Type type) -> double {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return 0.0; // A scalar operand is a register.
    std::optional<int64_t> n = tensorBytes(tensor);
    dynamic |= !n;
    return static_cast<double>(n.value_or(0));
  };
  auto total = [&](TypeRange types) {
    double sum = 0;
    for (Type type : types)
      sum += bytes(type);
    return sum;
  };
  auto known = [&](double traffic) -> std::optional<double> {
    if (dynamic)
      return std::nullopt;
    return traffic;
  };
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    // An init is read only where the body reads its element (an
    // accumulator); otherwise it is only the shape of the result.
    double traffic = total(resultTypes);
    for (OpOperand &operand : op->getOpOperands())
      if (!linalgOp.isDpsInit(&operand) ||
          linalgOp.payloadUsesValueFromOperand(&operand))
        traffic += bytes(operandTypes[operand.getOperandNumber()]);
    return known(traffic);
  }
  // A lookup reads only the rows it gathers (as many as it writes), and
  // its gradient writes the whole table once and adds each row into it.
  auto withoutTable = [&](unsigned table) {
    double sum = 0;
    for (auto [i, type] : llvm::enumerate(operandTypes))
      if (i != table)
        sum += bytes(type);
    return sum;
  };
  // The four lookups name their table and (the gradients) out_grad alike.
  auto lookup = [&](auto op) {
    return withoutTable(op.getWeightMutable().getOperandNumber()) +
           2 * total(resultTypes);
  };
  auto lookupGrad = [&](auto op) {
    return withoutTable(op.getWeightMutable().getOperandNumber()) +
           bytes(operandTypes[op.getOutGradMutable().getOperandNumber()]) +
           total(resultTypes);
  };
  if (auto lookupOp = dyn_cast<EmbeddingOp>(op))
    return known(lookup(lookupOp));
  if (auto lookupOp = dyn_cast<CEmbeddingOp>(op))
    return known(lookup(lookupOp));
  if (auto grad = dyn_cast<EmbeddingGradOp>(op))
    return known(lookupGrad(grad));
  if (auto grad = dyn_cast<CEmbeddingGradOp>(op))
    return known(lookupGrad(grad));
  // Packing copies each tensor into (or out of) one flat buffer.
  if (isa<DropoutOp, ScaleOp, SgdOp, AdamWOp, CheckFiniteAndUnscaleOp, PackOp,
          UnpackOp>(op))
    return known(total(operandTypes) + total(resultTypes));
  return std::nullopt;
}

std::optional<double> CostModel::computeTime(Operation *op) const {
  return computeTime(op, op->getOperandTypes(), op->getResultTypes());
}

std::optional<double> CostModel::computeTime(Operation *op,
                                             TypeRange operandTypes,
                                             TypeRange resultTypes) const {
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    std::optional<double> flops = matmulFlops(
        cast<RankedTensorType>(
            operandTypes[matmul.getXMutable().getOperandNumber()]),
        cast<RankedTensorType>(resultTypes[0]), matmul.getTransposeX());
    if (!flops)
      return std::nullopt;
    return matmulTime(*flops, matmul.getTransposeX(), matmul.getTransposeY());
  }
  auto grad = dyn_cast<MatmulGradOp>(op);
  if (!grad) {
    // Without a memory bandwidth these ops are not compute the model
    // knows: a report shows no slice for them.
    if (memoryBandwidthGBps() <= 0)
      return std::nullopt;
    std::optional<double> traffic =
        memoryTraffic(op, operandTypes, resultTypes);
    if (!traffic)
      return std::nullopt;
    return memoryTime(*traffic);
  }
  // Two matmuls (dX and dY), each as costly as the forward one.
  std::optional<double> flops = matmulFlops(
      cast<RankedTensorType>(
          operandTypes[grad.getXMutable().getOperandNumber()]),
      cast<RankedTensorType>(
          operandTypes[grad.getOutGradMutable().getOperandNumber()]),
      grad.getTransposeX());
  if (!flops)
    return std::nullopt;
  double tflops = options.measured ? options.measured->matmulGradTflops
                                   : options.peakTflops;
  return 2.0 * *flops / (tflops * 1e12);
}
