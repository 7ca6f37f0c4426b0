//===- DistAttrs.cpp - dist attributes ------------------------------------===//

#include "dist/Dialect/Dist/IR/DistAttrs.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::dist;

#include "dist/Dialect/Dist/IR/DistEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dist/Dialect/Dist/IR/DistAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dist/Dialect/Dist/IR/DistTypes.cpp.inc"

void DistDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dist/Dialect/Dist/IR/DistTypes.cpp.inc"
      >();
}

void DistDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dist/Dialect/Dist/IR/DistAttrs.cpp.inc"
      >();
}

/// Meshes beyond this many processes are rejected rather than materialising
/// a process-id list that could exhaust memory on a typo'd shape.
static constexpr int64_t kMaxMeshProcesses = int64_t(1) << 20;

//===----------------------------------------------------------------------===//
// Shared parsing helpers
//===----------------------------------------------------------------------===//

static ParseResult parseIntList(AsmParser &parser,
                                SmallVectorImpl<int64_t> &values) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                        [&]() -> ParseResult {
                                          int64_t v;
                                          if (parser.parseInteger(v))
                                            return failure();
                                          values.push_back(v);
                                          return success();
                                        });
}

static void printIntList(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << '[';
  llvm::interleaveComma(values, printer);
  printer << ']';
}

//===----------------------------------------------------------------------===//
// MeshAttr
//===----------------------------------------------------------------------===//

/// Number of processes of a mesh shaped `shape`, or nothing when a size is not
/// positive or the product exceeds kMaxMeshProcesses.
static std::optional<int64_t> checkedNumProcesses(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t size : shape) {
    if (size <= 0 || size > kMaxMeshProcesses)
      return std::nullopt;
    n *= size;
    if (n > kMaxMeshProcesses)
      return std::nullopt;
  }
  return n;
}

MeshAttr MeshAttr::get(MLIRContext *context, ArrayRef<int64_t> shape) {
  int64_t n = checkedNumProcesses(shape).value_or(0);
  SmallVector<int64_t> ids = llvm::to_vector(llvm::seq<int64_t>(0, n));
  return get(context, shape, ids, {});
}

int64_t MeshAttr::getNumProcesses() const {
  return static_cast<int64_t>(getProcessIds().size());
}

bool MeshAttr::hasDefaultProcessIds() const {
  for (auto [position, id] : llvm::enumerate(getProcessIds()))
    if (id != static_cast<int64_t>(position))
      return false;
  return true;
}

LogicalResult MeshAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape,
                               ArrayRef<int64_t> processIds,
                               ArrayRef<StringAttr> names) {
  if (shape.empty())
    return emitError() << "mesh must have at least one axis";
  for (auto [axis, size] : llvm::enumerate(shape))
    if (size <= 0)
      return emitError() << "mesh axis " << axis << " has size " << size
                         << "; sizes must be positive";
  std::optional<int64_t> n = checkedNumProcesses(shape);
  if (!n)
    return emitError() << "mesh has more than " << kMaxMeshProcesses
                       << " processes";
  if (static_cast<int64_t>(processIds.size()) != *n)
    return emitError() << "mesh of " << *n << " processes has "
                       << processIds.size() << " process ids";
  llvm::SmallDenseSet<int64_t> seenIds;
  for (int64_t id : processIds) {
    if (id < 0)
      return emitError() << "process id " << id << " is negative";
    if (!seenIds.insert(id).second)
      return emitError() << "process id " << id << " appears more than once";
  }
  if (!names.empty() && names.size() != shape.size())
    return emitError() << "mesh of rank " << shape.size() << " has "
                       << names.size() << " axis names";
  llvm::SmallDenseSet<StringAttr> seenNames;
  for (StringAttr name : names) {
    if (!name || name.getValue().empty())
      return emitError() << "mesh axis names must be non-empty";
    if (!seenNames.insert(name).second)
      return emitError() << "mesh axis name \"" << name.getValue()
                         << "\" appears more than once";
  }
  return success();
}

// #dist.mesh<shape = [2, 4] (, names = ["dp", "mp"])? (, process_ids = [...])?>
Attribute MeshAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape, ids;
  SmallVector<StringAttr> names;
  bool hasIds = false;
  if (parser.parseLess() || parser.parseKeyword("shape") ||
      parser.parseEqual() || parseIntList(parser, shape))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "names" && names.empty()) {
      if (parser.parseCommaSeparatedList(
              AsmParser::Delimiter::Square, [&]() -> ParseResult {
                std::string name;
                if (parser.parseString(&name))
                  return failure();
                names.push_back(parser.getBuilder().getStringAttr(name));
                return success();
              }))
        return {};
    } else if (key == "process_ids" && !hasIds) {
      hasIds = true;
      if (parseIntList(parser, ids))
        return {};
    } else {
      parser.emitError(keyLoc) << "expected 'names' or 'process_ids' (each at "
                                  "most once), got '"
                               << key << "'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  auto emitError = [&] { return parser.emitError(loc); };
  // Fill the default ids only for a valid shape, so that a huge or negative
  // size is diagnosed by the verifier instead of allocated.
  if (!hasIds)
    if (std::optional<int64_t> n = checkedNumProcesses(shape))
      ids = llvm::to_vector(llvm::seq<int64_t>(0, *n));
  return getChecked(emitError, parser.getContext(), shape, ids, names);
}

void MeshAttr::print(AsmPrinter &printer) const {
  printer << "<shape = ";
  printIntList(printer, getShape());
  if (!getNames().empty()) {
    printer << ", names = [";
    llvm::interleaveComma(getNames(), printer, [&](StringAttr name) {
      printer.printString(name.getValue());
    });
    printer << ']';
  }
  if (!hasDefaultProcessIds()) {
    printer << ", process_ids = ";
    printIntList(printer, getProcessIds());
  }
  printer << '>';
}

//===----------------------------------------------------------------------===//
// TensorDistAttr
//===----------------------------------------------------------------------===//

TensorDistAttr
TensorDistAttr::get(MeshAttr mesh, ArrayRef<int64_t> dimsMapping,
                    ArrayRef<std::pair<int64_t, ReductionKind>> partial) {
  SmallVector<std::pair<int64_t, ReductionKind>> sorted(partial);
  llvm::sort(sorted, llvm::less_first());
  SmallVector<int64_t> axes;
  SmallVector<ReductionKind> kinds;
  for (auto [axis, kind] : sorted) {
    axes.push_back(axis);
    kinds.push_back(kind);
  }
  return get(mesh.getContext(), mesh, dimsMapping, axes, kinds);
}

namespace {
/// The first thing wrong with a distribution, and the entry it is about,
/// so that the parser can point at that entry.
struct DistProblem {
  enum class Entry { Whole, Dim, Partial } entry = Entry::Whole;
  size_t index = 0;
  std::string message;
};
} // namespace

static std::optional<DistProblem>
findDistProblem(MeshAttr mesh, ArrayRef<int64_t> dimsMapping,
                ArrayRef<int64_t> partialAxes,
                ArrayRef<ReductionKind> partialKinds) {
  auto problem = [](DistProblem::Entry entry, size_t index, const Twine &msg) {
    return DistProblem{entry, index, msg.str()};
  };
  if (!mesh)
    return problem(DistProblem::Entry::Whole, 0, "expected a #dist.mesh");
  int64_t rank = mesh.getRank();
  llvm::SmallDenseSet<int64_t> used;
  for (auto [dim, axis] : llvm::enumerate(dimsMapping)) {
    if (axis < -1 || axis >= rank)
      return problem(DistProblem::Entry::Dim, dim,
                     "dims_mapping entry " + Twine(axis) + " of dim " +
                         Twine(dim) + " must be -1 or a mesh axis in [0, " +
                         Twine(rank) + ")");
    if (axis >= 0 && !used.insert(axis).second)
      return problem(DistProblem::Entry::Dim, dim,
                     "mesh axis " + Twine(axis) +
                         " splits more than one tensor dim");
  }
  if (partialAxes.size() != partialKinds.size())
    return problem(DistProblem::Entry::Whole, 0,
                   "expected one reduction kind per partial axis");
  for (auto [i, axis] : llvm::enumerate(partialAxes)) {
    if (axis < 0 || axis >= rank)
      return problem(DistProblem::Entry::Partial, i,
                     "partial axis " + Twine(axis) +
                         " is not a mesh axis in [0, " + Twine(rank) + ")");
    if (i > 0 && partialAxes[i - 1] >= axis)
      return problem(DistProblem::Entry::Partial, i,
                     "partial axes must be unique and ascending");
    if (used.contains(axis))
      return problem(DistProblem::Entry::Partial, i,
                     "mesh axis " + Twine(axis) +
                         " is both partial and in dims_mapping");
  }
  return std::nullopt;
}

LogicalResult
TensorDistAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       MeshAttr mesh, ArrayRef<int64_t> dimsMapping,
                       ArrayRef<int64_t> partialAxes,
                       ArrayRef<ReductionKind> partialKinds) {
  if (std::optional<DistProblem> problem =
          findDistProblem(mesh, dimsMapping, partialAxes, partialKinds))
    return emitError() << problem->message;
  return success();
}

LogicalResult TensorDistAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != getDimsMapping().size())
    return emitError() << "tensor of rank " << shape.size()
                       << " has a distribution with " << getDimsMapping().size()
                       << " dims_mapping entries";
  // The global shape is what lowerings index with: it must fit.
  for (auto [dim, axis] : llvm::enumerate(getDimsMapping())) {
    if (axis < 0 || ShapedType::isDynamic(shape[dim]))
      continue;
    int64_t global;
    if (llvm::MulOverflow(shape[dim], getMesh().getAxisSize(axis), global))
      return emitError() << "dim " << dim << " of local size " << shape[dim]
                         << " split over mesh axis " << axis << " (size "
                         << getMesh().getAxisSize(axis)
                         << ") has a global size that does not fit in 64 bits";
  }
  return success();
}

TensorDistAttr TensorDistAttr::getReplicated(MeshAttr mesh, int64_t rank) {
  return TensorDistAttr::get(mesh, SmallVector<int64_t>(rank, -1));
}

bool TensorDistAttr::isReplicated() const {
  return !isPartial() &&
         llvm::all_of(getDimsMapping(), [](int64_t axis) { return axis < 0; });
}

SmallVector<int64_t> TensorDistAttr::getSplitAxes() const {
  SmallVector<int64_t> axes;
  for (int64_t axis : getDimsMapping())
    if (axis >= 0)
      axes.push_back(axis);
  llvm::sort(axes);
  return axes;
}

std::optional<int64_t> TensorDistAttr::getDimOfMeshAxis(int64_t axis) const {
  for (auto [dim, a] : llvm::enumerate(getDimsMapping()))
    if (a == axis)
      return dim;
  return std::nullopt;
}

std::optional<ReductionKind>
TensorDistAttr::getPartialKind(int64_t axis) const {
  for (auto [a, kind] : llvm::zip_equal(getPartialAxes(), getPartialKinds()))
    if (a == axis)
      return kind;
  return std::nullopt;
}

SmallVector<std::pair<int64_t, ReductionKind>>
TensorDistAttr::getPartials() const {
  SmallVector<std::pair<int64_t, ReductionKind>> partials;
  for (auto [axis, kind] : llvm::zip_equal(getPartialAxes(), getPartialKinds()))
    partials.emplace_back(axis, kind);
  return partials;
}

TensorDistAttr TensorDistAttr::dropPartial(ArrayRef<int64_t> axes) const {
  SmallVector<std::pair<int64_t, ReductionKind>> kept;
  for (auto partial : getPartials())
    if (!llvm::is_contained(axes, partial.first))
      kept.push_back(partial);
  return get(getMesh(), getDimsMapping(), kept);
}

// The verifier asks this of every allreduce after every pass; building the
// expected attribute would hash and look it up in the context each time.
bool TensorDistAttr::isDropPartialOf(TensorDistAttr other,
                                     ArrayRef<int64_t> axes) const {
  if (getMesh() != other.getMesh() ||
      getDimsMapping() != other.getDimsMapping())
    return false;
  ArrayRef<int64_t> myAxes = getPartialAxes();
  ArrayRef<ReductionKind> myKinds = getPartialKinds();
  size_t next = 0;
  for (auto [axis, kind] :
       llvm::zip_equal(other.getPartialAxes(), other.getPartialKinds())) {
    if (llvm::is_contained(axes, axis))
      continue;
    if (next == myAxes.size() || myAxes[next] != axis || myKinds[next] != kind)
      return false;
    ++next;
  }
  return next == myAxes.size();
}

TensorDistAttr TensorDistAttr::addPartial(ArrayRef<int64_t> axes,
                                          ReductionKind kind) const {
  TensorDistAttr base = dropPartial(axes);
  SmallVector<std::pair<int64_t, ReductionKind>> partials = base.getPartials();
  for (int64_t axis : axes)
    partials.emplace_back(axis, kind);
  return get(getMesh(), getDimsMapping(), partials);
}

TensorDistAttr
TensorDistAttr::withDimsMapping(ArrayRef<int64_t> dimsMapping) const {
  return get(getMesh(), dimsMapping, getPartials());
}

// #dist.tensor<#mesh, [1, -1] (, partial = [1 : sum, ...])?>
Attribute TensorDistAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  MeshAttr mesh;
  SmallVector<int64_t> dims, axes;
  // Where each entry was written: a bad entry is reported there, not at
  // the start of the attribute.
  SmallVector<SMLoc> dimLocs;
  SmallVector<std::tuple<int64_t, ReductionKind, SMLoc>> partials;
  if (parser.parseLess() || parser.parseAttribute(mesh) || parser.parseComma())
    return {};
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            dimLocs.push_back(parser.getCurrentLocation());
            int64_t v;
            if (parser.parseInteger(v))
              return failure();
            dims.push_back(v);
            return success();
          }))
    return {};
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("partial") || parser.parseEqual() ||
        parser.parseCommaSeparatedList(
            AsmParser::Delimiter::Square, [&]() -> ParseResult {
              int64_t axis = 0;
              StringRef kindName;
              SMLoc axisLoc = parser.getCurrentLocation(), kindLoc;
              if (parser.parseInteger(axis) || parser.parseColon())
                return failure();
              kindLoc = parser.getCurrentLocation();
              if (parser.parseKeyword(&kindName))
                return failure();
              std::optional<ReductionKind> kind =
                  symbolizeReductionKind(kindName);
              if (!kind)
                return parser.emitError(kindLoc)
                       << "unknown reduction kind '" << kindName
                       << "'; expected sum, max, min, prod or avg";
              partials.emplace_back(axis, *kind, axisLoc);
              return success();
            }))
      return {};
  }
  if (parser.parseGreater())
    return {};
  // Sort here so that the written order does not matter, but keep duplicates
  // for the verifier to report, in the order they were written (ties go by
  // position in the text; libstdc++'s stable_sort is deprecated under
  // clang 22).
  llvm::sort(partials, [](const auto &a, const auto &b) {
    return std::pair(std::get<0>(a), std::get<2>(a).getPointer()) <
           std::pair(std::get<0>(b), std::get<2>(b).getPointer());
  });
  SmallVector<ReductionKind> kinds;
  for (auto [axis, kind, axisLoc] : partials) {
    axes.push_back(axis);
    kinds.push_back(kind);
  }
  if (std::optional<DistProblem> problem =
          findDistProblem(mesh, dims, axes, kinds)) {
    SMLoc at = loc;
    if (problem->entry == DistProblem::Entry::Dim)
      at = dimLocs[problem->index];
    else if (problem->entry == DistProblem::Entry::Partial)
      at = std::get<2>(partials[problem->index]);
    parser.emitError(at) << problem->message;
    return {};
  }
  return get(parser.getContext(), mesh, dims, axes, kinds);
}

void TensorDistAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printer.printAttribute(getMesh());
  printer << ", ";
  printIntList(printer, getDimsMapping());
  if (isPartial()) {
    printer << ", partial = [";
    llvm::interleaveComma(getPartials(), printer, [&](auto partial) {
      printer << partial.first << " : "
              << stringifyReductionKind(partial.second);
    });
    printer << ']';
  }
  printer << '>';
}

//===----------------------------------------------------------------------===//
// Type helpers
//===----------------------------------------------------------------------===//

TensorDistAttr mlir::dist::getTensorDist(Type type) {
  auto tensor = dyn_cast_or_null<RankedTensorType>(type);
  if (!tensor)
    return {};
  return dyn_cast_or_null<TensorDistAttr>(tensor.getEncoding());
}

RankedTensorType mlir::dist::withTensorDist(RankedTensorType type,
                                            TensorDistAttr dist) {
  return RankedTensorType::get(type.getShape(), type.getElementType(), dist);
}
