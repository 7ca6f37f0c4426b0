//===- DistModule.cpp - the dist._dist extension module -------------------===//
//
// Python objects over the C API of libDistCAPI.so (and nothing else: no C++
// of MLIR is used here, so no exception can cross an MLIR callback). Every
// object holds its context alive; a closed context, a stale operation (its
// module was rewritten since) or a value of the wrong kind raises a Python
// exception before any C API call could misbehave. Diagnostics never reach
// stderr: a handler collects them, and a failure raises
// dist.DiagnosticError with all of them.
//
//===----------------------------------------------------------------------===//

#include "dist-c/Dist.h"
#include "dist-c/Passes.h"

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

std::string toString(MlirStringRef s) { return std::string(s.data, s.length); }

/// A reference to `s`, which must outlive every use of the result: MLIR
/// keeps some of these (an operation state's name) until the op is built.
MlirStringRef toRef(const std::string &s) {
  return mlirStringRefCreate(s.data(), s.size());
}
/// A temporary would die before the reference's last use.
MlirStringRef toRef(std::string &&) = delete;
/// String literals live for the whole program.
template <size_t N> MlirStringRef toRef(const char (&literal)[N]) {
  return mlirStringRefCreate(literal, N - 1);
}

/// Appends printed text to a std::string.
void append(MlirStringRef text, void *userData) {
  static_cast<std::string *>(userData)->append(text.data, text.length);
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

struct Diagnostic {
  std::string severity, file, message;
  int line = 0, column = 0;
  std::vector<Diagnostic> notes;
};

/// The first file/line/column position in `loc`, looking through names,
/// call sites (the callee) and fusions.
bool findPosition(MlirLocation loc, std::string &file, int &line, int &col) {
  if (mlirLocationIsAFileLineColRange(loc)) {
    file = toString(
        mlirIdentifierStr(mlirLocationFileLineColRangeGetFilename(loc)));
    line = mlirLocationFileLineColRangeGetStartLine(loc);
    col = mlirLocationFileLineColRangeGetStartColumn(loc);
    return true;
  }
  if (mlirLocationIsAName(loc))
    return findPosition(mlirLocationNameGetChildLoc(loc), file, line, col);
  if (mlirLocationIsACallSite(loc))
    return findPosition(mlirLocationCallSiteGetCallee(loc), file, line, col);
  if (mlirLocationIsAFused(loc)) {
    intptr_t n = mlirLocationFusedGetNumLocations(loc);
    std::vector<MlirLocation> locs(n);
    mlirLocationFusedGetLocations(loc, locs.data());
    for (MlirLocation inner : locs)
      if (findPosition(inner, file, line, col))
        return true;
  }
  return false;
}

Diagnostic convert(MlirDiagnostic d) {
  Diagnostic out;
  switch (mlirDiagnosticGetSeverity(d)) {
  case MlirDiagnosticError:
    out.severity = "error";
    break;
  case MlirDiagnosticWarning:
    out.severity = "warning";
    break;
  case MlirDiagnosticNote:
    out.severity = "note";
    break;
  case MlirDiagnosticRemark:
    out.severity = "remark";
    break;
  }
  findPosition(mlirDiagnosticGetLocation(d), out.file, out.line, out.column);
  // The message alone: mlirDiagnosticPrint prints only the message.
  mlirDiagnosticPrint(d, append, &out.message);
  for (intptr_t i = 0, e = mlirDiagnosticGetNumNotes(d); i < e; ++i)
    out.notes.push_back(convert(mlirDiagnosticGetNote(d, i)));
  return out;
}

/// The context and what its diagnostic handler collected.
struct ContextState {
  MlirContext context;
  bool open = true;
  std::vector<Diagnostic> diagnostics;

  ContextState() {
    MlirDialectRegistry registry = mlirDialectRegistryCreate();
    mlirDistRegisterAllDialects(registry);
    context =
        mlirContextCreateWithRegistry(registry, /*threadingEnabled=*/true);
    mlirDialectRegistryDestroy(registry);
    mlirContextAttachDiagnosticHandler(
        context,
        [](MlirDiagnostic d, void *self) {
          static_cast<ContextState *>(self)->diagnostics.push_back(convert(d));
          return mlirLogicalResultSuccess();
        },
        this, nullptr);
  }
  ~ContextState() { mlirContextDestroy(context); }
  ContextState(const ContextState &) = delete;
  ContextState &operator=(const ContextState &) = delete;

  MlirContext get() const {
    if (!open)
      throw std::runtime_error("the dist.Context was closed");
    return context;
  }

  std::vector<Diagnostic> take() {
    std::vector<Diagnostic> out;
    out.swap(diagnostics);
    return out;
  }
};
using ContextRef = std::shared_ptr<ContextState>;

py::object toPython(const Diagnostic &d) {
  py::list notes;
  for (const Diagnostic &n : d.notes)
    notes.append(toPython(n));
  py::object cls = py::module_::import("dist._errors").attr("Diagnostic");
  return cls(d.severity, d.file, d.line, d.column, d.message, notes);
}

py::list toPython(const std::vector<Diagnostic> &ds) {
  py::list out;
  for (const Diagnostic &d : ds)
    out.append(toPython(d));
  return out;
}

[[noreturn]] void raiseDiagnostics(const std::string &what,
                                   std::vector<Diagnostic> diagnostics) {
  py::object cls = py::module_::import("dist._errors").attr("DiagnosticError");
  py::object error = cls(what, toPython(diagnostics));
  PyErr_SetObject(cls.ptr(), error.ptr());
  throw py::error_already_set();
}

/// Python's context object.
struct Context {
  ContextRef state = std::make_shared<ContextState>();
};

//===----------------------------------------------------------------------===//
// Attributes and types
//===----------------------------------------------------------------------===//

struct Attribute {
  ContextRef ctx;
  MlirAttribute attr;
};
struct Mesh : Attribute {};
struct TensorDist : Attribute {};

struct Type {
  ContextRef ctx;
  MlirType type;
};
struct TensorType : Type {};
struct FutureType : Type {};

ContextRef contextOf(const std::optional<Context> &context) {
  if (context)
    return context->state;
  // One default context per thread is what a script expects.
  static thread_local ContextRef defaultContext;
  if (!defaultContext || !defaultContext->open)
    defaultContext = std::make_shared<ContextState>();
  return defaultContext;
}

/// Raises ValueError unless an object of context `actual` may be used in
/// `expected`: MLIR objects of another context dangle once it is gone (and
/// mixing two contexts in one op is undefined even while both live).
void requireContext(const ContextRef &expected, const ContextRef &actual,
                    const std::string &what) {
  if (expected != actual)
    throw py::value_error(what + " belongs to another dist.Context");
}

py::object wrapAttribute(ContextRef ctx, MlirAttribute attr) {
  if (mlirAttributeIsNull(attr))
    return py::none();
  if (mlirAttributeIsADistMesh(attr))
    return py::cast(Mesh{{ctx, attr}});
  if (mlirAttributeIsADistTensor(attr))
    return py::cast(TensorDist{{ctx, attr}});
  return py::cast(Attribute{ctx, attr});
}

py::object wrapType(ContextRef ctx, MlirType type) {
  if (mlirTypeIsNull(type))
    return py::none();
  if (mlirTypeIsADistFuture(type))
    return py::cast(FutureType{{ctx, type}});
  if (mlirTypeIsARankedTensor(type))
    return py::cast(TensorType{{ctx, type}});
  return py::cast(Type{ctx, type});
}

std::string print(MlirAttribute attr) {
  std::string s;
  mlirAttributePrint(attr, append, &s);
  return s;
}

std::string print(MlirType type) {
  std::string s;
  mlirTypePrint(type, append, &s);
  return s;
}

/// Runs `make` and raises DiagnosticError when it returns null.
template <typename T, typename F>
T checked(ContextState &ctx, const std::string &what, F make) {
  ctx.take();
  T result = make();
  std::vector<Diagnostic> diagnostics = ctx.take();
  if (result.ptr == nullptr)
    raiseDiagnostics(what, std::move(diagnostics));
  return result;
}

Mesh makeMesh(std::vector<int64_t> shape,
              std::optional<std::vector<std::string>> names,
              std::optional<std::vector<int64_t>> ids,
              std::optional<Context> context) {
  ContextRef ctx = contextOf(context);
  std::vector<MlirStringRef> nameRefs;
  std::vector<std::string> nameStore =
      names.value_or(std::vector<std::string>{});
  for (const std::string &n : nameStore)
    nameRefs.push_back(toRef(n));
  std::vector<int64_t> idStore = ids.value_or(std::vector<int64_t>{});
  if (ids && ids->empty())
    throw py::value_error("process_ids must not be empty; pass None for the "
                          "default 0..N-1");
  MlirAttribute attr = checked<MlirAttribute>(*ctx, "invalid mesh", [&] {
    return mlirDistMeshAttrGet(ctx->get(), shape.size(), shape.data(),
                               idStore.size(), idStore.data(), nameRefs.size(),
                               nameRefs.data());
  });
  return Mesh{{ctx, attr}};
}

MlirDistReductionKind reductionKind(const std::string &name) {
  MlirDistReductionKind kind;
  if (!mlirDistReductionKindFromName(toRef(name), &kind))
    throw py::value_error("unknown reduction kind '" + name +
                          "'; expected sum, max, min, prod or avg");
  return kind;
}

TensorDist makeTensorDist(const Mesh &mesh, std::vector<int64_t> dims,
                          std::optional<py::dict> partial) {
  std::vector<std::pair<int64_t, MlirDistReductionKind>> entries;
  if (partial)
    for (auto item : *partial)
      entries.emplace_back(item.first.cast<int64_t>(),
                           reductionKind(item.second.cast<std::string>()));
  std::sort(entries.begin(), entries.end(),
            [](auto a, auto b) { return a.first < b.first; });
  std::vector<int64_t> axes;
  std::vector<MlirDistReductionKind> kinds;
  for (auto [axis, kind] : entries) {
    axes.push_back(axis);
    kinds.push_back(kind);
  }
  ContextState &ctx = *mesh.ctx;
  ctx.get();
  MlirAttribute attr = checked<MlirAttribute>(ctx, "invalid distribution", [&] {
    return mlirDistTensorAttrGet(mesh.attr, dims.size(), dims.data(),
                                 axes.size(), axes.data(), kinds.data());
  });
  return TensorDist{{mesh.ctx, attr}};
}

MlirType parseType(ContextRef ctx, const std::string &text) {
  return checked<MlirType>(*ctx, "invalid type '" + text + "'", [&] {
    return mlirTypeParseGet(ctx->get(), toRef(text));
  });
}

TensorType makeTensorType(std::vector<int64_t> shape, py::object elementType,
                          std::optional<TensorDist> dist,
                          std::optional<Context> context) {
  ContextRef ctx = dist ? dist->ctx : contextOf(context);
  MlirType element;
  if (py::isinstance<py::str>(elementType))
    element = parseType(ctx, elementType.cast<std::string>());
  else if (py::isinstance<Type>(elementType)) {
    const Type &t = elementType.cast<const Type &>();
    requireContext(ctx, t.ctx, "the element type");
    element = t.type;
  } else
    throw py::type_error("element_type must be a str or a dist.Type");
  for (int64_t d : shape)
    if (d < 0 && d != mlirShapedTypeGetDynamicSize())
      throw py::value_error("tensor dims must be non-negative (or dynamic)");
  MlirAttribute encoding = dist ? dist->attr : mlirAttributeGetNull();
  MlirType type = checked<MlirType>(*ctx, "invalid tensor type", [&] {
    return mlirRankedTensorTypeGetChecked(mlirLocationUnknownGet(ctx->get()),
                                          shape.size(), shape.data(), element,
                                          encoding);
  });
  return TensorType{{ctx, type}};
}

//===----------------------------------------------------------------------===//
// Modules and operations
//===----------------------------------------------------------------------===//

struct ModuleState {
  ContextRef ctx;
  MlirModule module;
  /// Bumped by every pass run: operation handles from before may dangle.
  uint64_t generation = 0;
  ~ModuleState() { mlirModuleDestroy(module); }
};
using ModuleRef = std::shared_ptr<ModuleState>;

struct Module {
  ModuleRef state;
};

struct Operation {
  ModuleRef module;
  uint64_t generation;
  MlirOperation op;

  MlirOperation get() const {
    module->ctx->get();
    if (generation != module->generation)
      throw std::runtime_error("this operation is stale: its module was "
                               "rewritten by a pass; walk the module again");
    return op;
  }
};

struct Value {
  ModuleRef module;
  uint64_t generation;
  MlirValue value;
  /// Values made by a function builder before its function is in a module.
  ContextRef ctx;

  MlirValue get() const {
    if (module) {
      module->ctx->get();
      if (generation != module->generation)
        throw std::runtime_error("this value is stale: its module was "
                                 "rewritten by a pass");
    } else {
      ctx->get();
    }
    return value;
  }
  ContextRef context() const { return module ? module->ctx : ctx; }
};

/// The module a value's ops belong to: walking from a value to its owner or
/// users hands out operations, which only exist as parts of a module.
ModuleRef moduleOf(const Value &v) {
  if (!v.module)
    throw std::runtime_error("this value's function is not in a module yet");
  return v.module;
}

struct Block {
  ModuleRef module;
  uint64_t generation;
  MlirBlock block;
};

struct Region {
  ModuleRef module;
  uint64_t generation;
  MlirRegion region;
};

Module parseModule(const std::string &text, const std::string &filename,
                   std::optional<Context> context) {
  ContextRef ctx = contextOf(context);
  MlirModule module =
      checked<MlirModule>(*ctx, "cannot parse " + filename, [&] {
        // The parser wants NUL-terminated text: std::string has it.
        return mlirDistModuleCreateParse(ctx->get(), toRef(text),
                                         toRef(filename));
      });
  auto state = std::make_shared<ModuleState>();
  state->ctx = ctx;
  state->module = module;
  return Module{state};
}

Module emptyModule(std::optional<Context> context) {
  ContextRef ctx = contextOf(context);
  auto state = std::make_shared<ModuleState>();
  state->ctx = ctx;
  state->module = mlirModuleCreateEmpty(mlirLocationUnknownGet(ctx->get()));
  return Module{state};
}

std::string printOperation(MlirOperation op, bool generic, bool debugInfo) {
  MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
  if (generic)
    mlirOpPrintingFlagsPrintGenericOpForm(flags);
  if (debugInfo)
    mlirOpPrintingFlagsEnableDebugInfo(flags, /*enable=*/true,
                                       /*prettyForm=*/false);
  std::string s;
  mlirOperationPrintWithFlags(op, flags, append, &s);
  mlirOpPrintingFlagsDestroy(flags);
  return s;
}

/// Runs `pipeline` (a textual pass pipeline, function passes nested
/// implicitly, as dist-opt does) on `module`; returns the diagnostics that
/// were not errors.
py::list runPipeline(Module &module, const std::string &pipeline) {
  ModuleState &m = *module.state;
  ContextState &ctx = *m.ctx;
  ctx.get();
  mlirDistRegisterAllPasses();
  ctx.take();
  ++m.generation;
  MlirLogicalResult result = mlirDistRunPassPipeline(m.module, toRef(pipeline));
  std::vector<Diagnostic> diagnostics = ctx.take();
  if (mlirLogicalResultIsFailure(result))
    raiseDiagnostics("pass pipeline '" + pipeline + "' failed",
                     std::move(diagnostics));
  return toPython(diagnostics);
}

void verifyModule(Module &module) {
  ModuleState &m = *module.state;
  m.ctx->get();
  m.ctx->take();
  bool ok = mlirOperationVerify(mlirModuleGetOperation(m.module));
  std::vector<Diagnostic> diagnostics = m.ctx->take();
  if (!ok)
    raiseDiagnostics("the module does not verify", std::move(diagnostics));
}

void verifyModuleDistributions(Module &module) {
  ModuleState &m = *module.state;
  m.ctx->get();
  m.ctx->take();
  MlirLogicalResult result = mlirDistVerifyDistributions(m.module);
  std::vector<Diagnostic> diagnostics = m.ctx->take();
  if (mlirLogicalResultIsFailure(result))
    raiseDiagnostics("the distribution check failed", std::move(diagnostics));
}

py::list operationsOf(const ModuleRef &module, uint64_t generation,
                      MlirBlock block) {
  py::list ops;
  for (MlirOperation op = mlirBlockGetFirstOperation(block);
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
    ops.append(Operation{module, generation, op});
  return ops;
}

//===----------------------------------------------------------------------===//
// Building functions
//===----------------------------------------------------------------------===//

/// A function under construction: a detached entry block that ops are
/// appended to, turned into a func.func in the module by finish().
struct FunctionBuilder {
  ModuleRef module;
  std::string name;
  std::vector<MlirType> argTypes;
  std::vector<MlirAttribute> argAttrs;
  MlirBlock block;
  bool finished = false;

  ~FunctionBuilder() {
    if (!finished)
      mlirBlockDestroy(block);
  }

  MlirContext context() const {
    if (finished)
      throw std::runtime_error("function @" + name + " is finished");
    return module->ctx->get();
  }

  /// Values keep the module alive and, like operations, go stale when a
  /// pass rewrites it; adding functions does not invalidate them.
  Value wrap(MlirValue v) const {
    return Value{module, module->generation, v, module->ctx};
  }

  /// `v` as an operand of an op of this function: it must be of this
  /// context and defined in this function (an argument, or a result of an
  /// op in it); a value of another function or module would leave a use
  /// that dangles when that one goes. Raises ValueError otherwise.
  MlirValue operand(const Value &v, const std::string &what) const {
    requireContext(module->ctx, v.context(), what);
    MlirValue value = v.get();
    MlirBlock owner = mlirValueIsABlockArgument(value)
                          ? mlirBlockArgumentGetOwner(value)
                          : mlirOperationGetBlock(mlirOpResultGetOwner(value));
    while (!mlirBlockIsNull(owner)) {
      if (mlirBlockEqual(owner, block))
        return value;
      MlirOperation parent = mlirBlockGetParentOperation(owner);
      if (mlirOperationIsNull(parent))
        break;
      owner = mlirOperationGetBlock(parent);
    }
    throw py::value_error(what + " is not a value of function @" + name +
                          " (it belongs to another function or module)");
  }
};

/// Loads the dialect of op `name` ("arith.constant"): dialects load
/// lazily, and an op of an unloaded one cannot be created.
void loadDialectOf(MlirContext ctx, const std::string &name) {
  std::string ns = name.substr(0, name.find('.'));
  if (mlirDialectIsNull(mlirContextGetOrLoadDialect(ctx, toRef(ns))))
    throw py::value_error("no dialect '" + ns + "' for op '" + name + "'");
}

MlirLocation locationOf(MlirContext ctx, const std::optional<std::string> &file,
                        int line, int col) {
  if (file)
    return mlirLocationFileLineColGet(ctx, toRef(*file), line, col);
  return mlirLocationUnknownGet(ctx);
}

std::shared_ptr<FunctionBuilder> makeFunction(Module &module,
                                              const std::string &name,
                                              const std::vector<Type> &argTypes,
                                              std::optional<py::list> attrs) {
  auto f = std::make_shared<FunctionBuilder>();
  f->module = module.state;
  f->name = name;
  MlirContext ctx = module.state->ctx->get();
  loadDialectOf(ctx, "func.func");
  std::vector<MlirLocation> locs;
  for (const Type &t : argTypes) {
    requireContext(module.state->ctx, t.ctx, "an argument type");
    f->argTypes.push_back(t.type);
    locs.push_back(mlirLocationUnknownGet(ctx));
  }
  for (size_t i = 0; i < argTypes.size(); ++i) {
    MlirAttribute dict = mlirDictionaryAttrGet(ctx, 0, nullptr);
    if (attrs && i < attrs->size() && !(*attrs)[i].is_none()) {
      const Attribute &a = (*attrs)[i].cast<const Attribute &>();
      requireContext(module.state->ctx, a.ctx,
                     "the markers of argument #" + std::to_string(i));
      dict = a.attr;
    }
    f->argAttrs.push_back(dict);
  }
  f->block =
      mlirBlockCreate(f->argTypes.size(), f->argTypes.data(), locs.data());
  return f;
}

py::list appendOp(FunctionBuilder &f, const std::string &name,
                  const std::vector<Value> &operands,
                  const std::vector<Type> &resultTypes, py::dict attributes,
                  std::optional<std::string> file, int line, int col) {
  MlirContext ctx = f.context();
  loadDialectOf(ctx, name);
  ContextState &state = *f.module->ctx;
  MlirOperationState op =
      mlirOperationStateGet(toRef(name), locationOf(ctx, file, line, col));
  std::vector<MlirValue> values;
  for (size_t i = 0; i < operands.size(); ++i)
    values.push_back(f.operand(operands[i], "operand #" + std::to_string(i) +
                                                " of '" + name + "'"));
  std::vector<MlirType> types;
  for (const Type &t : resultTypes) {
    requireContext(f.module->ctx, t.ctx, "a result type of '" + name + "'");
    types.push_back(t.type);
  }
  std::vector<std::string> names;
  std::vector<MlirNamedAttribute> named;
  for (auto item : attributes)
    names.push_back(item.first.cast<std::string>());
  size_t i = 0;
  for (auto item : attributes) {
    const Attribute &a = item.second.cast<const Attribute &>();
    requireContext(f.module->ctx, a.ctx, "attribute '" + names[i] + "'");
    named.push_back(mlirNamedAttributeGet(
        mlirIdentifierGet(ctx, toRef(names[i++])), a.attr));
  }
  mlirOperationStateAddOperands(&op, values.size(), values.data());
  mlirOperationStateAddResults(&op, types.size(), types.data());
  mlirOperationStateAddAttributes(&op, named.size(), named.data());
  state.take();
  MlirOperation created = mlirOperationCreate(&op);
  std::vector<Diagnostic> diagnostics = state.take();
  if (mlirOperationIsNull(created))
    raiseDiagnostics("cannot create '" + name + "'", std::move(diagnostics));
  mlirBlockAppendOwnedOperation(f.block, created);
  py::list results;
  for (intptr_t r = 0, e = mlirOperationGetNumResults(created); r < e; ++r)
    results.append(f.wrap(mlirOperationGetResult(created, r)));
  return results;
}

void finishFunction(FunctionBuilder &f, const std::vector<Value> &returned,
                    std::optional<py::list> resultAttrs, bool isPrivate,
                    py::dict extraAttrs) {
  MlirContext ctx = f.context();
  MlirLocation unknown = mlirLocationUnknownGet(ctx);
  std::vector<MlirValue> values;
  std::vector<MlirType> resultTypes;
  for (size_t i = 0; i < returned.size(); ++i) {
    values.push_back(
        f.operand(returned[i], "returned value #" + std::to_string(i)));
    resultTypes.push_back(mlirValueGetType(values.back()));
  }
  MlirOperationState ret = mlirOperationStateGet(toRef("func.return"), unknown);
  mlirOperationStateAddOperands(&ret, values.size(), values.data());
  mlirBlockAppendOwnedOperation(f.block, mlirOperationCreate(&ret));

  MlirType fnType =
      mlirFunctionTypeGet(ctx, f.argTypes.size(), f.argTypes.data(),
                          resultTypes.size(), resultTypes.data());
  std::vector<MlirAttribute> resAttrs;
  for (size_t i = 0; i < resultTypes.size(); ++i) {
    MlirAttribute dict = mlirDictionaryAttrGet(ctx, 0, nullptr);
    if (resultAttrs && i < resultAttrs->size() &&
        !(*resultAttrs)[i].is_none()) {
      const Attribute &a = (*resultAttrs)[i].cast<const Attribute &>();
      requireContext(f.module->ctx, a.ctx,
                     "the markers of result #" + std::to_string(i));
      dict = a.attr;
    }
    resAttrs.push_back(dict);
  }
  std::vector<MlirNamedAttribute> attrs = {
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, toRef("sym_name")),
                            mlirStringAttrGet(ctx, toRef(f.name))),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, toRef("function_type")),
                            mlirTypeAttrGet(fnType)),
      mlirNamedAttributeGet(
          mlirIdentifierGet(ctx, toRef("arg_attrs")),
          mlirArrayAttrGet(ctx, f.argAttrs.size(), f.argAttrs.data())),
      mlirNamedAttributeGet(
          mlirIdentifierGet(ctx, toRef("res_attrs")),
          mlirArrayAttrGet(ctx, resAttrs.size(), resAttrs.data()))};
  if (isPrivate)
    attrs.push_back(
        mlirNamedAttributeGet(mlirIdentifierGet(ctx, toRef("sym_visibility")),
                              mlirStringAttrGet(ctx, toRef("private"))));
  std::vector<std::string> extraNames;
  for (auto item : extraAttrs)
    extraNames.push_back(item.first.cast<std::string>());
  size_t k = 0;
  for (auto item : extraAttrs) {
    const Attribute &a = item.second.cast<const Attribute &>();
    requireContext(f.module->ctx, a.ctx,
                   "function attribute '" + extraNames[k] + "'");
    attrs.push_back(mlirNamedAttributeGet(
        mlirIdentifierGet(ctx, toRef(extraNames[k++])), a.attr));
  }
  MlirRegion body = mlirRegionCreate();
  mlirRegionAppendOwnedBlock(body, f.block);
  MlirOperationState func = mlirOperationStateGet(toRef("func.func"), unknown);
  mlirOperationStateAddAttributes(&func, attrs.size(), attrs.data());
  mlirOperationStateAddOwnedRegions(&func, 1, &body);
  f.finished = true;
  mlirBlockAppendOwnedOperation(mlirModuleGetBody(f.module->module),
                                mlirOperationCreate(&func));
}

/// A private declaration `@name : (args) -> (results)`, added once.
void declareFunction(Module &module, const std::string &name,
                     const std::vector<Type> &args,
                     const std::vector<Type> &results) {
  MlirContext ctx = module.state->ctx->get();
  loadDialectOf(ctx, "func.func");
  MlirBlock body = mlirModuleGetBody(module.state->module);
  for (MlirOperation op = mlirBlockGetFirstOperation(body);
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    MlirAttribute sym = mlirOperationGetAttributeByName(op, toRef("sym_name"));
    if (!mlirAttributeIsNull(sym) && mlirAttributeIsAString(sym) &&
        toString(mlirStringAttrGetValue(sym)) == name)
      return;
  }
  std::vector<MlirType> a, r;
  for (const Type &t : args) {
    requireContext(module.state->ctx, t.ctx, "an argument type");
    a.push_back(t.type);
  }
  for (const Type &t : results) {
    requireContext(module.state->ctx, t.ctx, "a result type");
    r.push_back(t.type);
  }
  MlirType fnType =
      mlirFunctionTypeGet(ctx, a.size(), a.data(), r.size(), r.data());
  MlirNamedAttribute attrs[] = {
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, toRef("sym_name")),
                            mlirStringAttrGet(ctx, toRef(name))),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, toRef("function_type")),
                            mlirTypeAttrGet(fnType)),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, toRef("sym_visibility")),
                            mlirStringAttrGet(ctx, toRef("private")))};
  MlirRegion body0 = mlirRegionCreate();
  MlirOperationState func =
      mlirOperationStateGet(toRef("func.func"), mlirLocationUnknownGet(ctx));
  mlirOperationStateAddAttributes(&func, 3, attrs);
  mlirOperationStateAddOwnedRegions(&func, 1, &body0);
  mlirBlockInsertOwnedOperation(body, 0, mlirOperationCreate(&func));
}

/// A dense constant attribute of `type` from a numpy array of its shape.
/// A dense constant of `type` from `values`: one per element, or one for
/// all of them (a splat, which the IR keeps as one value whatever the
/// shape).
Attribute denseElements(const TensorType &type, py::array values) {
  MlirType t = type.type;
  MlirContext ctx = type.ctx->get();
  intptr_t n = 1;
  for (intptr_t d = 0; d < mlirShapedTypeGetRank(t); ++d) {
    int64_t size = mlirShapedTypeGetDimSize(t, d);
    if (size < 0)
      throw py::value_error("a constant needs a static shape");
    n *= size;
  }
  bool splat = values.size() == 1 && n != 1;
  if (values.size() != n && !splat)
    throw py::value_error("the constant has " + std::to_string(values.size()) +
                          " values, the type " + std::to_string(n) +
                          " (or give one value for all)");
  // The encoding (if any) stays on the type: a constant may be annotated.
  MlirType element = mlirShapedTypeGetElementType(t);
  std::vector<MlirAttribute> elements;
  if (mlirTypeIsAF32(element) || mlirTypeIsAF16(element) ||
      mlirTypeIsABF16(element) || mlirTypeIsAF64(element)) {
    auto v =
        py::array_t<double, py::array::c_style | py::array::forcecast>(values);
    if (mlirTypeIsAF64(element) && !splat)
      return Attribute{type.ctx,
                       mlirDenseElementsAttrDoubleGet(t, n, v.data())};
    for (py::ssize_t i = 0; i < v.size(); ++i)
      elements.push_back(mlirFloatAttrDoubleGet(ctx, element, v.data()[i]));
  } else if (mlirTypeIsAInteger(element) || mlirTypeIsAIndex(element)) {
    auto v =
        py::array_t<int64_t, py::array::c_style | py::array::forcecast>(values);
    for (py::ssize_t i = 0; i < v.size(); ++i)
      elements.push_back(mlirIntegerAttrGet(element, v.data()[i]));
  } else {
    throw py::value_error("constants of element type " + print(element) +
                          " are not supported");
  }
  if (splat)
    return Attribute{type.ctx, mlirDenseElementsAttrSplatGet(t, elements[0])};
  return Attribute{type.ctx, mlirDenseElementsAttrGet(t, n, elements.data())};
}

} // namespace

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

PYBIND11_MODULE(_dist, m) {
  m.doc() = "Native part of the dist package (see dist/__init__.py).";

  py::class_<Context>(m, "Context",
                      "An MLIR context with dist and every dialect dist-opt "
                      "registers. Objects keep their context alive; close() "
                      "makes every later use raise instead of crash.")
      .def(py::init<>())
      .def(
          "close", [](Context &c) { c.state->open = false; },
          "Closes the context: later uses of it, or of objects made in it, "
          "raise RuntimeError.")
      .def_property_readonly(
          "closed", [](const Context &c) { return !c.state->open; },
          "Whether close() was called.")
      .def("__enter__", [](Context &c) -> Context & { return c; })
      .def("__exit__", [](Context &c, py::object, py::object,
                          py::object) { c.state->open = false; })
      .def("__eq__",
           [](const Context &a, py::object other) -> py::object {
             if (!py::isinstance<Context>(other))
               return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             return py::bool_(a.state == other.cast<const Context &>().state);
           })
      .def("__hash__", [](const Context &c) {
        return std::hash<const void *>()(c.state.get());
      });
  m.def("_default_context", [] { return Context{contextOf(std::nullopt)}; });

  // Attributes.
  py::class_<Attribute>(m, "Attribute", "An MLIR attribute.")
      .def_static(
          "parse",
          [](const std::string &text, std::optional<Context> context) {
            ContextRef ctx = contextOf(context);
            MlirAttribute a = checked<MlirAttribute>(
                *ctx, "invalid attribute '" + text + "'",
                [&] { return mlirAttributeParseGet(ctx->get(), toRef(text)); });
            return wrapAttribute(ctx, a);
          },
          py::arg("text"), py::arg("context") = py::none(),
          "Parses an attribute from its IR text.")
      .def("__str__",
           [](const Attribute &a) {
             a.ctx->get();
             return print(a.attr);
           })
      .def("__repr__",
           [](const Attribute &a) {
             a.ctx->get();
             return "Attribute(" + print(a.attr) + ")";
           })
      .def("__eq__",
           [](const Attribute &a, py::object other) {
             if (!py::isinstance<Attribute>(other))
               return false;
             const Attribute &b = other.cast<const Attribute &>();
             return a.ctx == b.ctx && mlirAttributeEqual(a.attr, b.attr);
           })
      .def("__hash__",
           [](const Attribute &a) {
             return std::hash<const void *>()(a.attr.ptr);
           })
      .def_property_readonly("context",
                             [](const Attribute &a) { return Context{a.ctx}; });

  py::class_<Mesh, Attribute>(
      m, "Mesh",
      "A #dist.mesh: processes on an n-d grid. `process_ids` lists the "
      "process at each position in row-major order (default 0..N-1).")
      .def(py::init(&makeMesh), py::arg("shape"), py::arg("names") = py::none(),
           py::arg("process_ids") = py::none(), py::arg("context") = py::none())
      .def_property_readonly(
          "shape",
          [](const Mesh &mesh) {
            std::vector<int64_t> shape;
            for (intptr_t a = 0, e = mlirDistMeshAttrGetRank(mesh.attr); a < e;
                 ++a)
              shape.push_back(mlirDistMeshAttrGetAxisSize(mesh.attr, a));
            return shape;
          },
          "The size of each mesh axis.")
      .def_property_readonly(
          "names",
          [](const Mesh &mesh) {
            std::vector<std::string> names;
            for (intptr_t a = 0, e = mlirDistMeshAttrGetNumNames(mesh.attr);
                 a < e; ++a)
              names.push_back(toString(mlirDistMeshAttrGetName(mesh.attr, a)));
            return names;
          },
          "The axis names (empty when the axes are unnamed).")
      .def_property_readonly(
          "process_ids",
          [](const Mesh &mesh) {
            std::vector<int64_t> ids;
            for (int64_t p = 0, e = mlirDistMeshAttrGetNumProcesses(mesh.attr);
                 p < e; ++p)
              ids.push_back(mlirDistMeshAttrGetProcessId(mesh.attr, p));
            return ids;
          },
          "The process at each mesh position, row-major.")
      .def_property_readonly(
          "num_processes",
          [](const Mesh &mesh) {
            return mlirDistMeshAttrGetNumProcesses(mesh.attr);
          },
          "The number of processes.")
      .def(
          "coord",
          [](const Mesh &mesh, int64_t process) {
            mesh.ctx->get();
            std::vector<int64_t> coord(mlirDistMeshAttrGetRank(mesh.attr));
            if (!mlirDistMeshAttrGetProcessCoord(mesh.attr, process,
                                                 coord.data()))
              throw py::value_error("process " + std::to_string(process) +
                                    " is not in the mesh");
            return py::tuple(py::cast(coord));
          },
          py::arg("process"),
          "The coordinate of `process`: the row-major unravel of its "
          "position in process_ids (not of its rank).")
      .def(
          "group",
          [](const Mesh &mesh, int64_t process, std::vector<int64_t> axes) {
            ContextState &ctx = *mesh.ctx;
            ctx.get();
            ctx.take();
            int64_t size = mlirDistMeshAttrGetGroupSize(mesh.attr, axes.size(),
                                                        axes.data());
            std::vector<Diagnostic> diagnostics = ctx.take();
            if (size < 0)
              raiseDiagnostics("invalid mesh axes", std::move(diagnostics));
            std::vector<int64_t> group(size);
            if (mlirDistMeshAttrGetProcessGroup(mesh.attr, process, axes.size(),
                                                axes.data(), group.data()) < 0)
              throw py::value_error("process " + std::to_string(process) +
                                    " is not in the mesh");
            return group;
          },
          py::arg("process"), py::arg("axes"),
          "The processes whose coordinates differ from `process`'s only "
          "along `axes`, ordered by their coordinates along `axes`.")
      .def("__repr__", [](const Mesh &mesh) { return print(mesh.attr); });

  py::class_<TensorDist, Attribute>(
      m, "TensorDist",
      "A #dist.tensor distribution: the mesh axis splitting each tensor dim "
      "(-1: replicated) and the partial axes with their pending reduction.")
      .def(py::init(&makeTensorDist), py::arg("mesh"), py::arg("dims_mapping"),
           py::arg("partial") = py::none())
      .def_property_readonly(
          "mesh",
          [](const TensorDist &d) {
            return Mesh{{d.ctx, mlirDistTensorAttrGetMesh(d.attr)}};
          },
          "The mesh.")
      .def_property_readonly(
          "dims_mapping",
          [](const TensorDist &d) {
            std::vector<int64_t> dims;
            for (intptr_t i = 0, e = mlirDistTensorAttrGetRank(d.attr); i < e;
                 ++i)
              dims.push_back(mlirDistTensorAttrGetDimMapping(d.attr, i));
            return dims;
          },
          "The mesh axis of each tensor dim, -1 for replicated.")
      .def_property_readonly(
          "partial",
          [](const TensorDist &d) {
            py::dict partial;
            for (intptr_t i = 0,
                          e = mlirDistTensorAttrGetNumPartialAxes(d.attr);
                 i < e; ++i)
              partial[py::int_(mlirDistTensorAttrGetPartialAxis(d.attr, i))] =
                  toString(mlirDistReductionKindGetName(
                      mlirDistTensorAttrGetPartialKind(d.attr, i)));
            return partial;
          },
          "{mesh axis: pending reduction} for the partial axes.")
      .def("__repr__", [](const TensorDist &d) { return print(d.attr); });

  // Types.
  py::class_<Type>(m, "Type", "An MLIR type.")
      .def_static(
          "parse",
          [](const std::string &text, std::optional<Context> context) {
            ContextRef ctx = contextOf(context);
            return wrapType(ctx, parseType(ctx, text));
          },
          py::arg("text"), py::arg("context") = py::none(),
          "Parses a type from its IR text.")
      .def("__str__",
           [](const Type &t) {
             t.ctx->get();
             return print(t.type);
           })
      .def("__repr__",
           [](const Type &t) { return "Type(" + print(t.type) + ")"; })
      .def("__eq__",
           [](const Type &a, py::object other) {
             if (!py::isinstance<Type>(other))
               return false;
             const Type &b = other.cast<const Type &>();
             return a.ctx == b.ctx && mlirTypeEqual(a.type, b.type);
           })
      .def("__hash__",
           [](const Type &t) { return std::hash<const void *>()(t.type.ptr); })
      .def_property_readonly("context",
                             [](const Type &t) { return Context{t.ctx}; });

  py::class_<TensorType, Type>(m, "TensorType",
                               "A ranked tensor type, optionally with a "
                               "#dist.tensor encoding.")
      .def(py::init(&makeTensorType), py::arg("shape"),
           py::arg("element_type") = "f32", py::arg("dist") = py::none(),
           py::arg("context") = py::none())
      .def_property_readonly(
          "shape",
          [](const TensorType &t) {
            std::vector<int64_t> shape;
            for (intptr_t d = 0; d < mlirShapedTypeGetRank(t.type); ++d)
              shape.push_back(mlirShapedTypeGetDimSize(t.type, d));
            return shape;
          },
          "The local (per-process) shape.")
      .def_property_readonly(
          "element_type",
          [](const TensorType &t) {
            return wrapType(t.ctx, mlirShapedTypeGetElementType(t.type));
          },
          "The element type.")
      .def_property_readonly(
          "dist",
          [](const TensorType &t) {
            return wrapAttribute(t.ctx, mlirDistTensorAttrOfType(t.type));
          },
          "The #dist.tensor encoding, or None.")
      .def("__repr__", [](const TensorType &t) { return print(t.type); });

  py::class_<FutureType, Type>(m, "FutureType",
                               "!dist.future: the pending result of an "
                               "asynchronous collective.")
      .def(py::init([](const TensorType &valueType) {
             ContextState &ctx = *valueType.ctx;
             ctx.get();
             MlirType t = checked<MlirType>(ctx, "invalid future", [&] {
               return mlirDistFutureTypeGet(valueType.type);
             });
             return FutureType{{valueType.ctx, t}};
           }),
           py::arg("value_type"))
      .def_property_readonly(
          "value_type",
          [](const FutureType &f) {
            return wrapType(f.ctx, mlirDistFutureTypeGetValueType(f.type));
          },
          "The tensor type the future completes to.")
      .def("__repr__", [](const FutureType &f) { return print(f.type); });

  // Modules and operations.
  py::class_<Value>(m, "Value", "An SSA value.")
      .def_property_readonly(
          "type",
          [](const Value &v) {
            return wrapType(v.context(), mlirValueGetType(v.get()));
          },
          "The value's type.")
      .def_property_readonly(
          "owner",
          [](const Value &v) -> py::object {
            MlirValue value = v.get();
            if (!mlirValueIsAOpResult(value))
              return py::none();
            return py::cast(Operation{moduleOf(v), v.generation,
                                      mlirOpResultGetOwner(value)});
          },
          "The operation that defines the value; None for a block argument.")
      .def_property_readonly(
          "users",
          [](const Value &v) {
            MlirValue value = v.get();
            ModuleRef module = moduleOf(v);
            py::list users;
            std::vector<const void *> seen;
            for (MlirOpOperand use = mlirValueGetFirstUse(value);
                 !mlirOpOperandIsNull(use);
                 use = mlirOpOperandGetNextUse(use)) {
              MlirOperation user = mlirOpOperandGetOwner(use);
              if (std::find(seen.begin(), seen.end(), user.ptr) != seen.end())
                continue;
              seen.push_back(user.ptr);
              users.append(Operation{module, v.generation, user});
            }
            return users;
          },
          "The operations that use the value, each once (no order promised).")
      .def("__eq__",
           [](const Value &a, py::object other) -> py::object {
             if (!py::isinstance<Value>(other))
               return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             return py::bool_(
                 mlirValueEqual(a.get(), other.cast<const Value &>().get()));
           })
      .def(
          "__hash__",
          [](const Value &v) { return std::hash<const void *>()(v.get().ptr); })
      .def("__str__", [](const Value &v) {
        std::string s;
        mlirValuePrint(v.get(), append, &s);
        return s;
      });

  py::class_<Operation>(m, "Operation", "An operation of a module.")
      .def_property_readonly(
          "name",
          [](const Operation &o) {
            return toString(mlirIdentifierStr(mlirOperationGetName(o.get())));
          },
          "The op's name, e.g. 'dist.allreduce'.")
      .def_property_readonly(
          "location",
          [](const Operation &o) {
            MlirLocation loc = mlirOperationGetLocation(o.get());
            std::string file;
            int line = 0, col = 0;
            findPosition(loc, file, line, col);
            std::string text;
            mlirLocationPrint(loc, append, &text);
            py::object cls =
                py::module_::import("dist._errors").attr("Location");
            return cls(file, line, col, text);
          },
          "Where the op came from: file, line, column and the full text.")
      .def_property_readonly(
          "attributes",
          [](const Operation &o) {
            MlirOperation op = o.get();
            py::dict attrs;
            for (intptr_t i = 0, e = mlirOperationGetNumAttributes(op); i < e;
                 ++i) {
              MlirNamedAttribute a = mlirOperationGetAttribute(op, i);
              attrs[py::str(toString(mlirIdentifierStr(a.name)))] =
                  wrapAttribute(o.module->ctx, a.attribute);
            }
            return attrs;
          },
          "{name: Attribute}; dist attributes come as Mesh/TensorDist.")
      .def_property_readonly(
          "operands",
          [](const Operation &o) {
            MlirOperation op = o.get();
            py::list values;
            for (intptr_t i = 0, e = mlirOperationGetNumOperands(op); i < e;
                 ++i)
              values.append(Value{o.module, o.generation,
                                  mlirOperationGetOperand(op, i), nullptr});
            return values;
          },
          "The operand values.")
      .def_property_readonly(
          "results",
          [](const Operation &o) {
            MlirOperation op = o.get();
            py::list values;
            for (intptr_t i = 0, e = mlirOperationGetNumResults(op); i < e; ++i)
              values.append(Value{o.module, o.generation,
                                  mlirOperationGetResult(op, i), nullptr});
            return values;
          },
          "The result values.")
      .def_property_readonly(
          "regions",
          [](const Operation &o) {
            MlirOperation op = o.get();
            py::list regions;
            for (intptr_t i = 0, e = mlirOperationGetNumRegions(op); i < e; ++i)
              regions.append(Region{o.module, o.generation,
                                    mlirOperationGetRegion(op, i)});
            return regions;
          },
          "The op's regions.")
      .def(
          "print",
          [](const Operation &o, bool generic, bool debugInfo) {
            return printOperation(o.get(), generic, debugInfo);
          },
          py::arg("generic") = false, py::arg("debug_info") = false,
          "The op as IR text.")
      .def_property_readonly(
          "next",
          [](const Operation &o) -> py::object {
            MlirOperation next = mlirOperationGetNextInBlock(o.get());
            if (mlirOperationIsNull(next))
              return py::none();
            return py::cast(Operation{o.module, o.generation, next});
          },
          "The op after this one in its block; None for the last.")
      .def("__eq__",
           [](const Operation &a, py::object other) -> py::object {
             if (!py::isinstance<Operation>(other))
               return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             return py::bool_(mlirOperationEqual(
                 a.get(), other.cast<const Operation &>().get()));
           })
      .def("__hash__",
           [](const Operation &o) {
             return std::hash<const void *>()(o.get().ptr);
           })
      .def("__str__", [](const Operation &o) {
        return printOperation(o.get(), false, false);
      });

  py::class_<Region>(m, "Region", "A region of an operation.")
      .def_property_readonly("blocks", [](const Region &r) {
        Operation check{r.module, r.generation, MlirOperation{nullptr}};
        check.get();
        py::list blocks;
        for (MlirBlock b = mlirRegionGetFirstBlock(r.region);
             !mlirBlockIsNull(b); b = mlirBlockGetNextInRegion(b))
          blocks.append(Block{r.module, r.generation, b});
        return blocks;
      });

  py::class_<Block>(m, "Block", "A block of a region.")
      .def_property_readonly(
          "arguments",
          [](const Block &b) {
            Operation check{b.module, b.generation, MlirOperation{nullptr}};
            check.get();
            py::list args;
            for (intptr_t i = 0, e = mlirBlockGetNumArguments(b.block); i < e;
                 ++i)
              args.append(Value{b.module, b.generation,
                                mlirBlockGetArgument(b.block, i), nullptr});
            return args;
          })
      .def_property_readonly("operations", [](const Block &b) {
        Operation check{b.module, b.generation, MlirOperation{nullptr}};
        check.get();
        return operationsOf(b.module, b.generation, b.block);
      });

  py::class_<Module>(m, "Module", "A builtin.module of dist IR.")
      .def_static("parse", &parseModule, py::arg("text"),
                  py::arg("filename") = "<string>",
                  py::arg("context") = py::none(),
                  "Parses a module from IR text (str) or MLIR bytecode "
                  "(bytes); raises DiagnosticError on a parse or "
                  "verification error.")
      .def_static("create", &emptyModule, py::arg("context") = py::none(),
                  "An empty module.")
      .def_property_readonly(
          "context", [](const Module &mod) { return Context{mod.state->ctx}; })
      .def_property_readonly(
          "operation",
          [](const Module &mod) {
            mod.state->ctx->get();
            return Operation{mod.state, mod.state->generation,
                             mlirModuleGetOperation(mod.state->module)};
          },
          "The builtin.module operation.")
      .def_property_readonly(
          "operations",
          [](const Module &mod) {
            mod.state->ctx->get();
            return operationsOf(mod.state, mod.state->generation,
                                mlirModuleGetBody(mod.state->module));
          },
          "The top-level operations (functions, ...).")
      .def("run", &runPipeline, py::arg("pipeline"),
           "Runs a textual pass pipeline (e.g. 'dist-auto-parallel' or "
           "'builtin.module(func.func(dist-dropout-seed))'); returns the "
           "warnings and remarks, raises DiagnosticError on failure.")
      .def("verify", &verifyModule, "Raises DiagnosticError if invalid.")
      .def("verify_distributions", &verifyModuleDistributions,
           "Runs the distribution check (--dist-verify-distributions): "
           "raises DiagnosticError with its located errors if a value's "
           "encoding does not say how it is distributed, or a collective may "
           "be reached by only some processes of its group.")
      .def(
          "print",
          [](const Module &mod, bool generic, bool debugInfo) {
            mod.state->ctx->get();
            return printOperation(mlirModuleGetOperation(mod.state->module),
                                  generic, debugInfo);
          },
          py::arg("generic") = false, py::arg("debug_info") = false,
          "The module as IR text (generic form with generic=True).")
      .def(
          "bytecode",
          [](const Module &mod) {
            mod.state->ctx->get();
            std::string out;
            mlirOperationWriteBytecode(
                mlirModuleGetOperation(mod.state->module), append, &out);
            return py::bytes(out);
          },
          "The module as MLIR bytecode (Module.parse and Module.read take "
          "it back).")
      .def("__str__", [](const Module &mod) {
        mod.state->ctx->get();
        return printOperation(mlirModuleGetOperation(mod.state->module), false,
                              false);
      });

  py::class_<FunctionBuilder, std::shared_ptr<FunctionBuilder>>(
      m, "_FunctionBuilder")
      .def_property_readonly(
          "arguments",
          [](const FunctionBuilder &f) {
            f.context();
            py::list args;
            for (intptr_t i = 0, e = mlirBlockGetNumArguments(f.block); i < e;
                 ++i)
              args.append(f.wrap(mlirBlockGetArgument(f.block, i)));
            return args;
          })
      .def("append", &appendOp, py::arg("name"), py::arg("operands"),
           py::arg("result_types"), py::arg("attributes"),
           py::arg("file") = py::none(), py::arg("line") = 0,
           py::arg("column") = 0)
      .def("finish", &finishFunction, py::arg("returned"),
           py::arg("result_attrs") = py::none(), py::arg("private") = false,
           py::arg("attributes") = py::dict());
  // Builtin attributes for the builder, made through the C API (no text
  // round trip, so any string is safe).
  m.def("_string", [](const std::string &text, Context &c) {
    return Attribute{c.state, mlirStringAttrGet(c.state->get(), toRef(text))};
  });
  m.def("_unit", [](Context &c) {
    return Attribute{c.state, mlirUnitAttrGet(c.state->get())};
  });
  m.def("_integer", [](int64_t value, unsigned bits, Context &c) {
    MlirContext ctx = c.state->get();
    return Attribute{c.state,
                     mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, bits), value)};
  });
  m.def("_float", [](double value, unsigned bits, Context &c) {
    MlirContext ctx = c.state->get();
    MlirType t = bits == 64 ? mlirF64TypeGet(ctx) : mlirF32TypeGet(ctx);
    return Attribute{c.state, mlirFloatAttrDoubleGet(ctx, t, value)};
  });
  m.def("_i64_array", [](const std::vector<int64_t> &values, Context &c) {
    return Attribute{
        c.state,
        mlirDenseI64ArrayGet(c.state->get(), values.size(), values.data())};
  });
  m.def("_dictionary", [](py::dict entries, Context &c) {
    MlirContext ctx = c.state->get();
    std::vector<std::string> names;
    for (auto item : entries)
      names.push_back(item.first.cast<std::string>());
    std::vector<MlirNamedAttribute> named;
    size_t i = 0;
    for (auto item : entries) {
      const Attribute &a = item.second.cast<const Attribute &>();
      requireContext(c.state, a.ctx, "marker '" + names[i] + "'");
      named.push_back(mlirNamedAttributeGet(
          mlirIdentifierGet(ctx, toRef(names[i++])), a.attr));
    }
    return Attribute{c.state,
                     mlirDictionaryAttrGet(ctx, named.size(), named.data())};
  });
  m.def("_function", &makeFunction);
  m.def("_declare", &declareFunction);
  m.def("_dense", &denseElements);
  m.def("_register_passes", [] { mlirDistRegisterAllPasses(); });
}
