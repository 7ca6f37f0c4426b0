//===- Dist.cpp - C API of the dist dialect -------------------------------===//
//
// Thin wrappers: every check the C++ API leaves to assertions (a cast to
// the wrong attribute kind, an index out of range) is made here and
// reported through the context, because a C caller (or a Python binding)
// must never reach an assertion or undefined behaviour.
//
//===----------------------------------------------------------------------===//

#include "dist-c/Dist.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/MatmulGeometry.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"
#include "dist/Dialect/Dist/Rules/DistRules.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"
#include "dist/Dialect/Dist/Transforms/Redistribution.h"
#include "dist/InitAllDist.h"
#include "dist/Support/InputLimits.h"
#include "dist/Support/TraceSvg.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/CAPI/Utils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdio>
#include <unistd.h>

using namespace mlir;
using namespace mlir::dist;

// The dialect handle registers what registerAllDistDialects does, the
// distribution rules of upstream ops included, not the dialect class alone
// (MLIR_DEFINE_CAPI_DIALECT_REGISTRATION would insert only that).
static void insertDistDialect(MlirDialectRegistry registry) {
  registerAllDistDialects(*unwrap(registry));
}
static MlirDialect loadDistDialect(MlirContext context) {
  DialectRegistry registry;
  registerAllDistDialects(registry);
  unwrap(context)->appendDialectRegistry(registry);
  return wrap(unwrap(context)->getOrLoadDialect<DistDialect>());
}
static MlirStringRef distDialectNamespace() {
  return wrap(DistDialect::getDialectNamespace());
}
MlirDialectHandle mlirGetDialectHandle__dist__() {
  static MlirDialectRegistrationHooks hooks = {
      insertDistDialect, loadDistDialect, distDialectNamespace};
  return MlirDialectHandle{&hooks};
}

void mlirDistRegisterDialects(MlirDialectRegistry registry) {
  registerAllDistDialects(*unwrap(registry));
}

void mlirDistRegisterAllDialects(MlirDialectRegistry registry) {
  DialectRegistry &r = *unwrap(registry);
  registerAllDistDialects(r);
  registerAllDialects(r);
  registerAllExtensions(r);
}

void mlirDistRegisterAllPasses(void) {
  registerAllPasses();
  registerAllDistPasses();
}

MlirModule mlirDistModuleCreateParse(MlirContext ctx, MlirStringRef source,
                                     MlirStringRef sourceName) {
  size_t offset = 0;
  if (std::optional<std::string> tooDeep =
          checkNestingDepth(unwrap(source), kMaxInputNesting, &offset)) {
    auto [line, column] = lineAndColumn(unwrap(source), offset);
    emitError(
        FileLineColLoc::get(unwrap(ctx), unwrap(sourceName), line, column))
        << *tooDeep;
    return MlirModule{nullptr};
  }
  // MLIR's lexer reads up to a terminating NUL, which a caller's string
  // (a slice of a larger buffer, a Python bytes object) need not have: the
  // parser gets its own terminated copy.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(unwrap(source), unwrap(sourceName)),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseInput(sourceMgr, unwrap(ctx));
  if (!module)
    return MlirModule{nullptr};
  return MlirModule{module.release().getOperation()};
}

/// The op a registered pass `name` runs on, if it is restricted to one.
static std::optional<std::string> passAnchor(StringRef element) {
  StringRef name = element.take_until([](char c) { return c == '{'; }).trim();
  const PassInfo *info = PassInfo::lookup(name);
  if (!info)
    return std::nullopt;
  OpPassManager scratch(OpPassManager::getAnyOpAnchorName(),
                        OpPassManager::Nesting::Explicit);
  if (failed(info->addToPipeline(scratch, "",
                                 [](const Twine &) { return failure(); })) ||
      scratch.size() != 1)
    return std::nullopt;
  if (std::optional<StringRef> op = scratch.begin()->getOpName())
    return op->str();
  return std::nullopt;
}

/// `pipeline` with each top-level pass that runs on another op than the
/// module nested under that op, as dist-opt's command line does implicitly.
static std::string nestTopLevelPasses(StringRef pipeline) {
  std::string out;
  int depth = 0;
  size_t start = 0;
  auto flush = [&](size_t end) {
    StringRef element = pipeline.slice(start, end).trim();
    if (element.empty())
      return;
    if (!out.empty())
      out += ",";
    std::optional<std::string> anchor;
    if (!element.contains('(') || element.find('{') < element.find('('))
      anchor = passAnchor(element);
    if (anchor && *anchor != ModuleOp::getOperationName())
      out += *anchor + "(" + element.str() + ")";
    else
      out += element.str();
  };
  for (size_t i = 0; i < pipeline.size(); ++i) {
    char c = pipeline[i];
    depth += (c == '(' || c == '{') - (c == ')' || c == '}');
    if (c == ',' && depth == 0) {
      flush(i);
      start = i + 1;
    }
  }
  flush(pipeline.size());
  return out;
}

/// Runs `fn`, collecting what it writes to stderr (fd 2) into `printed`
/// instead of printing it; runs it as is when no temporary file can be
/// made.
template <typename F>
static LogicalResult captureStderr(std::string &printed, F fn) {
  std::FILE *sink = std::tmpfile();
  if (!sink)
    return fn();
  llvm::errs().flush();
  std::fflush(stderr);
  int saved = ::dup(STDERR_FILENO);
  if (saved < 0 || ::dup2(::fileno(sink), STDERR_FILENO) < 0) {
    if (saved >= 0)
      ::close(saved);
    std::fclose(sink);
    return fn();
  }
  LogicalResult result = fn();
  llvm::errs().flush();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::rewind(sink);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), sink)) > 0;)
    printed.append(buffer, n);
  std::fclose(sink);
  return result;
}

MlirLogicalResult mlirDistRunPassPipeline(MlirModule module,
                                          MlirStringRef pipeline) {
  ModuleOp op = unwrap(module);
  MLIRContext *ctx = op.getContext();
  StringRef text = unwrap(pipeline).trim();
  // An anchored pipeline is taken as written.
  std::string body = text.str();
  StringRef anchor = "builtin.module(";
  if (text.starts_with(anchor) && text.ends_with(")"))
    body = text.drop_front(anchor.size()).drop_back().str();
  PassManager pm(ctx, ModuleOp::getOperationName());
  std::string error, printed;
  llvm::raw_string_ostream os(error);
  LogicalResult parsed = captureStderr(printed, [&] {
    return parsePassPipeline(nestTopLevelPasses(body), pm, os);
  });
  if (failed(parsed)) {
    // llvm::cl reports a bad option value on stderr, not on the stream it is
    // given: a library must not print, and the caller needs the reason.
    StringRef reason = StringRef(printed).trim().ltrim(": ");
    InFlightDiagnostic diag = emitError(UnknownLoc::get(ctx))
                              << "invalid pass pipeline '" << text << "': ";
    if (!reason.empty())
      diag << reason << "; ";
    diag << StringRef(error).trim();
    return mlirLogicalResultFailure();
  }
  if (!printed.empty())
    llvm::errs() << printed;
  return wrap(pm.run(op));
}

MlirLogicalResult mlirDistVerifyDistributions(MlirModule module) {
  ModuleOp op = unwrap(module);
  MLIRContext *ctx = op.getContext();
  // The diagnostics locate the op and carry their own notes; a dump of the
  // op as a further note would only bury them.
  bool printOp = ctx->shouldPrintOpOnDiagnostic();
  ctx->printOpOnDiagnostic(false);
  LogicalResult result =
      failure(failed(verify(op)) || failed(verifyDistributions(op)));
  ctx->printOpOnDiagnostic(printOp);
  return wrap(result);
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

/// An error at an unknown location of `ctx`, prefixed with the C function.
static InFlightDiagnostic report(MLIRContext *ctx, const char *function) {
  return emitError(UnknownLoc::get(ctx)) << function << ": ";
}

/// The attribute or type `handle` as a `T`, or null after a diagnostic
/// (none for a null `handle`).
template <typename T, typename Handle>
static T expect(Handle handle, const char *function, const char *what) {
  auto a = unwrap(handle);
  if (!a)
    return T();
  if (auto typed = dyn_cast<T>(a))
    return typed;
  report(a.getContext(), function) << "expected " << what << ", got " << a;
  return T();
}

static MeshAttr expectMesh(MlirAttribute attr, const char *function) {
  return expect<MeshAttr>(attr, function, "a #dist.mesh");
}

static TensorDistAttr expectDist(MlirAttribute attr, const char *function) {
  return expect<TensorDistAttr>(attr, function, "a #dist.tensor");
}

/// Whether `index` is in [0, size); reports otherwise.
static bool inRange(MLIRContext *ctx, const char *function, const char *what,
                    int64_t index, int64_t size) {
  if (index >= 0 && index < size)
    return true;
  report(ctx, function) << what << " " << index << " is out of range [0, "
                        << size << ")";
  return false;
}

/// Element `index` of what `elements` lists of the attribute `attr` (as
/// `expectAttr` reads it), converted by `convert`; `invalid`, reported, when
/// `attr` is not such an attribute or `index` is out of range.
template <typename AttrTy, typename R, typename Elements, typename Convert>
static R elementAt(AttrTy (*expectAttr)(MlirAttribute, const char *),
                   MlirAttribute attr, const char *function, const char *what,
                   intptr_t index, R invalid, Elements elements,
                   Convert convert) {
  AttrTy a = expectAttr(attr, function);
  if (!a)
    return invalid;
  auto items = elements(a);
  if (!inRange(a.getContext(), function, what, index, items.size()))
    return invalid;
  return convert(items[index]);
}

/// The identity, for elementAt on elements that need no conversion.
static int64_t asIs(int64_t value) { return value; }

/// Whether `axes` are distinct axes of `mesh`; reports otherwise.
static bool checkAxes(MeshAttr mesh, const char *function, intptr_t numAxes,
                      const int64_t *axes) {
  if (numAxes < 0 || (numAxes > 0 && !axes)) {
    report(mesh.getContext(), function) << "no axes given";
    return false;
  }
  llvm::SmallSet<int64_t, 4> seen;
  for (intptr_t i = 0; i < numAxes; ++i) {
    if (!inRange(mesh.getContext(), function, "mesh axis", axes[i],
                 mesh.getRank()))
      return false;
    if (!seen.insert(axes[i]).second) {
      report(mesh.getContext(), function)
          << "mesh axis " << axes[i] << " is repeated";
      return false;
    }
  }
  return true;
}

/// `count` values at `data`, or an empty range for a null pointer with a
/// zero count; nothing (after a diagnostic) for a negative count or a null
/// pointer with a positive one.
template <typename T>
static std::optional<ArrayRef<T>>
arrayArg(MLIRContext *ctx, const char *function, const char *what,
         intptr_t count, const T *data) {
  if (count < 0 || (count > 0 && !data)) {
    report(ctx, function) << "bad " << what << " array (count " << count
                          << (data ? ")" : ", null pointer)");
    return std::nullopt;
  }
  return ArrayRef<T>(data, count);
}

//===----------------------------------------------------------------------===//
// Reduction kinds
//===----------------------------------------------------------------------===//

MlirStringRef mlirDistReductionKindGetName(MlirDistReductionKind kind) {
  std::optional<ReductionKind> k = symbolizeReductionKind(kind);
  if (!k)
    return mlirStringRefCreate(nullptr, 0);
  return wrap(stringifyReductionKind(*k));
}

bool mlirDistReductionKindFromName(MlirStringRef name,
                                   MlirDistReductionKind *kind) {
  std::optional<ReductionKind> k = symbolizeReductionKind(unwrap(name));
  if (!k || !kind)
    return false;
  *kind = static_cast<MlirDistReductionKind>(*k);
  return true;
}

// The C enum spells the dialect's values; keep them in step.
static_assert(MlirDistReductionSum == int(ReductionKind::Sum) &&
                  MlirDistReductionMax == int(ReductionKind::Max) &&
                  MlirDistReductionMin == int(ReductionKind::Min) &&
                  MlirDistReductionProd == int(ReductionKind::Prod) &&
                  MlirDistReductionAvg == int(ReductionKind::Avg),
              "MlirDistReductionKind differs from dist::ReductionKind");

//===----------------------------------------------------------------------===//
// Stream kinds
//===----------------------------------------------------------------------===//

MlirStringRef mlirDistStreamKindGetName(MlirDistStreamKind kind) {
  std::optional<StreamKind> k = symbolizeStreamKind(kind);
  if (!k)
    return mlirStringRefCreate(nullptr, 0);
  return wrap(stringifyStreamKind(*k));
}

bool mlirDistStreamKindFromName(MlirStringRef name, MlirDistStreamKind *kind) {
  std::optional<StreamKind> k = symbolizeStreamKind(unwrap(name));
  if (!k || !kind)
    return false;
  *kind = static_cast<MlirDistStreamKind>(*k);
  return true;
}

static_assert(MlirDistStreamCompute == int(StreamKind::Compute) &&
                  MlirDistStreamModelParallel ==
                      int(StreamKind::ModelParallel) &&
                  MlirDistStreamDataParallel == int(StreamKind::DataParallel) &&
                  MlirDistStreamSharding == int(StreamKind::Sharding),
              "MlirDistStreamKind differs from dist::StreamKind");

//===----------------------------------------------------------------------===//
// #dist.mesh
//===----------------------------------------------------------------------===//

bool mlirAttributeIsADistMesh(MlirAttribute attr) {
  return unwrap(attr) && isa<MeshAttr>(unwrap(attr));
}

MlirAttribute mlirDistMeshAttrGet(MlirContext ctx, intptr_t rank,
                                  const int64_t *shape, intptr_t numProcessIds,
                                  const int64_t *processIds, intptr_t numNames,
                                  const MlirStringRef *names) {
  MLIRContext *context = unwrap(ctx);
  const char *fn = "mlirDistMeshAttrGet";
  context->getOrLoadDialect<DistDialect>();
  auto shapeRef = arrayArg(context, fn, "shape", rank, shape);
  auto idsRef = arrayArg(context, fn, "process id", numProcessIds, processIds);
  auto namesRef = arrayArg(context, fn, "name", numNames, names);
  if (!shapeRef || !idsRef || !namesRef)
    return MlirAttribute{nullptr};
  SmallVector<int64_t> ids(*idsRef);
  if (ids.empty()) {
    // The verifier bounds the product before anything is allocated; the
    // default ids are built only for a mesh it accepts.
    int64_t n = 1;
    for (int64_t size : *shapeRef)
      if (size <= 0 || llvm::MulOverflow(n, size, n) || n > (1 << 20))
        return wrap(MeshAttr::getChecked(
            [&] { return report(context, fn); }, context, *shapeRef,
            ArrayRef<int64_t>(), ArrayRef<StringAttr>()));
    ids = llvm::to_vector(llvm::seq<int64_t>(0, n));
  }
  SmallVector<StringAttr> nameAttrs;
  for (MlirStringRef name : *namesRef)
    nameAttrs.push_back(StringAttr::get(context, unwrap(name)));
  return wrap(MeshAttr::getChecked([&] { return report(context, fn); }, context,
                                   *shapeRef, ArrayRef<int64_t>(ids),
                                   ArrayRef<StringAttr>(nameAttrs)));
}

intptr_t mlirDistMeshAttrGetRank(MlirAttribute mesh) {
  MeshAttr m = expectMesh(mesh, "mlirDistMeshAttrGetRank");
  return m ? m.getRank() : -1;
}

int64_t mlirDistMeshAttrGetAxisSize(MlirAttribute mesh, intptr_t axis) {
  return elementAt(
      expectMesh, mesh, "mlirDistMeshAttrGetAxisSize", "mesh axis", axis,
      int64_t(-1), [](MeshAttr m) { return m.getShape(); }, asIs);
}

int64_t mlirDistMeshAttrGetNumProcesses(MlirAttribute mesh) {
  MeshAttr m = expectMesh(mesh, "mlirDistMeshAttrGetNumProcesses");
  return m ? m.getNumProcesses() : -1;
}

int64_t mlirDistMeshAttrGetProcessId(MlirAttribute mesh, intptr_t position) {
  return elementAt(
      expectMesh, mesh, "mlirDistMeshAttrGetProcessId", "mesh position",
      position, int64_t(-1), [](MeshAttr m) { return m.getProcessIds(); },
      asIs);
}

bool mlirDistMeshAttrHasDefaultProcessIds(MlirAttribute mesh) {
  MeshAttr m = expectMesh(mesh, "mlirDistMeshAttrHasDefaultProcessIds");
  return m && m.hasDefaultProcessIds();
}

intptr_t mlirDistMeshAttrGetNumNames(MlirAttribute mesh) {
  MeshAttr m = expectMesh(mesh, "mlirDistMeshAttrGetNumNames");
  return m ? static_cast<intptr_t>(m.getNames().size()) : -1;
}

MlirStringRef mlirDistMeshAttrGetName(MlirAttribute mesh, intptr_t axis) {
  return elementAt(
      expectMesh, mesh, "mlirDistMeshAttrGetName", "named axis", axis,
      mlirStringRefCreate(nullptr, 0), [](MeshAttr m) { return m.getNames(); },
      [](StringAttr name) { return wrap(name.getValue()); });
}

bool mlirDistMeshAttrGetProcessCoord(MlirAttribute mesh, int64_t process,
                                     int64_t *coord) {
  const char *fn = "mlirDistMeshAttrGetProcessCoord";
  MeshAttr m = expectMesh(mesh, fn);
  if (!m)
    return false;
  std::optional<SmallVector<int64_t>> c = mesh::processCoord(m, process);
  if (!c || !coord)
    return false;
  llvm::copy(*c, coord);
  return true;
}

int64_t mlirDistMeshAttrGetGroupSize(MlirAttribute mesh, intptr_t numAxes,
                                     const int64_t *axes) {
  const char *fn = "mlirDistMeshAttrGetGroupSize";
  MeshAttr m = expectMesh(mesh, fn);
  if (!m || !checkAxes(m, fn, numAxes, axes))
    return -1;
  return mesh::groupSize(m, ArrayRef<int64_t>(axes, numAxes));
}

int64_t mlirDistMeshAttrGetProcessGroup(MlirAttribute mesh, int64_t process,
                                        intptr_t numAxes, const int64_t *axes,
                                        int64_t *group) {
  const char *fn = "mlirDistMeshAttrGetProcessGroup";
  MeshAttr m = expectMesh(mesh, fn);
  if (!m || !checkAxes(m, fn, numAxes, axes))
    return -1;
  SmallVector<int64_t> members =
      mesh::processGroup(m, process, ArrayRef<int64_t>(axes, numAxes));
  if (members.empty() || !group)
    return -1;
  llvm::copy(members, group);
  return static_cast<int64_t>(members.size());
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

intptr_t mlirDistMatmulResultShape(MlirType x, MlirType y, bool transposeX,
                                   bool transposeY, int64_t *shape,
                                   intptr_t capacity) {
  const char *fn = "mlirDistMatmulResultShape";
  auto xt = dyn_cast_or_null<RankedTensorType>(unwrap(x));
  auto yt = dyn_cast_or_null<RankedTensorType>(unwrap(y));
  if (!xt || !yt) {
    if (Type t = unwrap(x) ? unwrap(x) : unwrap(y))
      report(t.getContext(), fn) << "expected two ranked tensor types";
    return -1;
  }
  std::string why;
  llvm::raw_string_ostream os(why);
  std::optional<SmallVector<int64_t>> result = matmul::resultShape(
      xt.getShape(), yt.getShape(), transposeX, transposeY, os);
  if (!result) {
    report(xt.getContext(), fn) << why;
    return -1;
  }
  if (shape && capacity >= static_cast<intptr_t>(result->size()))
    llvm::copy(*result, shape);
  return static_cast<intptr_t>(result->size());
}

//===----------------------------------------------------------------------===//
// #dist.tensor
//===----------------------------------------------------------------------===//

bool mlirAttributeIsADistTensor(MlirAttribute attr) {
  return unwrap(attr) && isa<TensorDistAttr>(unwrap(attr));
}

MlirAttribute mlirDistTensorAttrGet(MlirAttribute mesh, intptr_t rank,
                                    const int64_t *dimsMapping,
                                    intptr_t numPartial,
                                    const int64_t *partialAxes,
                                    const MlirDistReductionKind *partialKinds) {
  const char *fn = "mlirDistTensorAttrGet";
  MeshAttr m = expectMesh(mesh, fn);
  if (!m)
    return MlirAttribute{nullptr};
  MLIRContext *ctx = m.getContext();
  auto dims = arrayArg(ctx, fn, "dims_mapping", rank, dimsMapping);
  auto axes = arrayArg(ctx, fn, "partial axis", numPartial, partialAxes);
  auto kinds = arrayArg(ctx, fn, "partial kind", numPartial, partialKinds);
  if (!dims || !axes || !kinds)
    return MlirAttribute{nullptr};
  SmallVector<ReductionKind> reductionKinds;
  for (MlirDistReductionKind kind : *kinds) {
    std::optional<ReductionKind> k = symbolizeReductionKind(kind);
    if (!k) {
      report(ctx, fn) << "unknown reduction kind " << int(kind);
      return MlirAttribute{nullptr};
    }
    reductionKinds.push_back(*k);
  }
  return wrap(TensorDistAttr::getChecked(
      [&] { return report(ctx, fn); }, ctx, m, *dims, *axes,
      ArrayRef<ReductionKind>(reductionKinds)));
}

MlirAttribute mlirDistTensorAttrGetMesh(MlirAttribute dist) {
  TensorDistAttr d = expectDist(dist, "mlirDistTensorAttrGetMesh");
  return wrap(d ? Attribute(d.getMesh()) : Attribute());
}

int64_t mlirDistTensorAttrGetDimMapping(MlirAttribute dist, intptr_t dim) {
  return elementAt(
      expectDist, dist, "mlirDistTensorAttrGetDimMapping", "tensor dim", dim,
      int64_t(-2), [](TensorDistAttr d) { return d.getDimsMapping(); }, asIs);
}

int64_t mlirDistTensorAttrGetPartialAxis(MlirAttribute dist, intptr_t index) {
  return elementAt(
      expectDist, dist, "mlirDistTensorAttrGetPartialAxis", "partial index",
      index, int64_t(-1), [](TensorDistAttr d) { return d.getPartialAxes(); },
      asIs);
}

MlirDistReductionKind mlirDistTensorAttrGetPartialKind(MlirAttribute dist,
                                                       intptr_t index) {
  return elementAt(
      expectDist, dist, "mlirDistTensorAttrGetPartialKind", "partial index",
      index, MlirDistReductionSum,
      [](TensorDistAttr d) { return d.getPartialKinds(); },
      [](ReductionKind kind) {
        return static_cast<MlirDistReductionKind>(kind);
      });
}

intptr_t mlirDistTensorAttrGetRank(MlirAttribute dist) {
  TensorDistAttr d = expectDist(dist, "mlirDistTensorAttrGetRank");
  return d ? static_cast<intptr_t>(d.getDimsMapping().size()) : -1;
}

intptr_t mlirDistTensorAttrGetNumPartialAxes(MlirAttribute dist) {
  TensorDistAttr d = expectDist(dist, "mlirDistTensorAttrGetNumPartialAxes");
  return d ? static_cast<intptr_t>(d.getPartialAxes().size()) : -1;
}

MlirAttribute mlirDistTensorAttrOfType(MlirType type) {
  Type t = unwrap(type);
  return wrap(t ? Attribute(getTensorDist(t)) : Attribute());
}

//===----------------------------------------------------------------------===//
// !dist.future
//===----------------------------------------------------------------------===//

bool mlirTypeIsADistFuture(MlirType type) {
  return unwrap(type) && isa<FutureType>(unwrap(type));
}

MlirType mlirDistFutureTypeGet(MlirType valueType) {
  // A future holds a ranked tensor.
  auto tensor = expect<RankedTensorType>(valueType, "mlirDistFutureTypeGet",
                                         "a ranked tensor type");
  if (!tensor)
    return MlirType{nullptr};
  tensor.getContext()->getOrLoadDialect<DistDialect>();
  return wrap(FutureType::get(tensor.getContext(), tensor));
}

MlirType mlirDistFutureTypeGetValueType(MlirType future) {
  auto f = expect<FutureType>(future, "mlirDistFutureTypeGetValueType",
                              "a !dist.future");
  return wrap(f ? Type(f.getValueType()) : Type());
}

//===----------------------------------------------------------------------===//
// Redistribution
//===----------------------------------------------------------------------===//

MlirLogicalResult mlirDistPlanReshard(MlirType source, MlirType target,
                                      MlirDistReshardStepCallback callback,
                                      void *userData) {
  Type from = unwrap(source), to = unwrap(target);
  if (!from || !to)
    return mlirLogicalResultFailure();
  MLIRContext *ctx = from.getContext();
  auto fromType = dyn_cast<RankedTensorType>(from);
  auto toType = dyn_cast<RankedTensorType>(to);
  TensorDistAttr fromDist = getTensorDist(from), toDist = getTensorDist(to);
  if (!fromType || !toType || !fromDist || !toDist ||
      !fromType.hasStaticShape() || !toType.hasStaticShape()) {
    report(ctx, "mlirDistPlanReshard")
        << "expected statically shaped #dist.tensor types, got " << from
        << " and " << to;
    return mlirLogicalResultFailure();
  }
  if (fromDist.getMesh() != toDist.getMesh()) {
    report(ctx, "mlirDistPlanReshard")
        << "the types are on different meshes: " << fromDist.getMesh()
        << " and " << toDist.getMesh();
    return mlirLogicalResultFailure();
  }
  SmallVector<int64_t> global =
      mesh::globalShape(fromType.getShape(), fromDist);
  if (fromType.getElementType() != toType.getElementType() ||
      global != mesh::globalShape(toType.getShape(), toDist)) {
    report(ctx, "mlirDistPlanReshard")
        << from << " and " << to << " hold different global tensors";
    return mlirLogicalResultFailure();
  }
  std::string whyNot;
  FailureOr<ReshardPlan> plan = planReshard(
      global, fromType.getElementType(), fromDist, toDist, CostModel(), whyNot);
  if (failed(plan)) {
    report(ctx, "mlirDistPlanReshard") << whyNot;
    return mlirLogicalResultFailure();
  }
  for (const ReshardStep &step : plan->steps) {
    MlirDistReshardStep out{wrap(getRedistributionOpName(step.kind)),
                            step.axes.front(),
                            step.axes.data(),
                            static_cast<intptr_t>(step.axes.size()),
                            static_cast<MlirDistReductionKind>(step.reduction),
                            wrap(Attribute(step.to)),
                            step.bytes,
                            step.seconds};
    if (callback)
      callback(&out, userData);
  }
  return mlirLogicalResultSuccess();
}

MlirValue mlirDistBuildTranspose(MlirOperation op, MlirValue cotangent,
                                 MlirOperation insertBefore) {
  Operation *primal = unwrap(op), *before = unwrap(insertBefore);
  Value cot = unwrap(cotangent);
  if (!primal || !cot || !before)
    return MlirValue{nullptr};
  MLIRContext *ctx = primal->getContext();
  if (!before->getBlock()) {
    report(ctx, "mlirDistBuildTranspose")
        << "the insertion point '" << before->getName()
        << "' is not in a block";
    return MlirValue{nullptr};
  }
  // An op made with mlirOperationCreate may lack what its accessors read.
  if (failed(verify(primal, /*verifyRecursively=*/false))) {
    report(ctx, "mlirDistBuildTranspose")
        << "'" << primal->getName() << "' does not verify";
    return MlirValue{nullptr};
  }
  OpBuilder b(before);
  std::string whyNot;
  FailureOr<Value> transpose =
      buildTranspose(b, primal->getLoc(), primal, cot, CostModel(), whyNot);
  if (failed(transpose)) {
    report(ctx, "mlirDistBuildTranspose") << whyNot;
    return MlirValue{nullptr};
  }
  return wrap(*transpose);
}

//===----------------------------------------------------------------------===//
// Traces
//===----------------------------------------------------------------------===//

MlirLogicalResult mlirDistRenderTraceSvg(MlirStringRef trace,
                                         MlirStringCallback callback,
                                         void *userData) {
  mlir::detail::CallbackOstream stream(callback, userData);
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse(StringRef(trace.data, trace.length));
  llvm::Error error = json ? renderTraceSvg(*json, stream) : json.takeError();
  if (error) {
    stream << "not a dist trace: " << llvm::toString(std::move(error));
    return mlirLogicalResultFailure();
  }
  return mlirLogicalResultSuccess();
}
