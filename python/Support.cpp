//===- Support.cpp - diagnostics, contexts and wrapping for dist._dist ----===//

#include "PyDist.h"

#include <algorithm>
#include <cctype>

using namespace dist_python;

void dist_python::append(MlirStringRef text, void *userData) {
  static_cast<std::string *>(userData)->append(text.data, text.length);
}

bool dist_python::findPosition(MlirLocation loc, std::string &file, int &line,
                               int &col) {
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

Diagnostic dist_python::convert(MlirDiagnostic d) {
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
  // The C API puts its function's name in front of its own messages
  // ("mlirDistMeshAttrGet: mesh axis 1 has size 0"): what a C caller needs,
  // not a Python user, who called none of them.
  if (out.message.compare(0, 4, "mlir") == 0) {
    size_t colon = out.message.find(": ");
    if (colon != std::string::npos &&
        std::all_of(out.message.begin(), out.message.begin() + colon,
                    [](char c) { return std::isalnum((unsigned char)c); }))
      out.message.erase(0, colon + 2);
  }
  for (intptr_t i = 0, e = mlirDiagnosticGetNumNotes(d); i < e; ++i)
    out.notes.push_back(convert(mlirDiagnosticGetNote(d, i)));
  return out;
}

ContextState::ContextState() {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirDistRegisterAllDialects(registry);
  context = mlirContextCreateWithRegistry(registry, /*threadingEnabled=*/true);
  mlirDialectRegistryDestroy(registry);
  mlirContextAttachDiagnosticHandler(
      context,
      [](MlirDiagnostic d, void *self) {
        static_cast<ContextState *>(self)->diagnostics.push_back(convert(d));
        return mlirLogicalResultSuccess();
      },
      this, nullptr);
}

py::object dist_python::toPython(const Diagnostic &d) {
  py::list notes;
  for (const Diagnostic &n : d.notes)
    notes.append(toPython(n));
  py::object cls = py::module_::import("dist._errors").attr("Diagnostic");
  return cls(d.severity, d.file, d.line, d.column, d.message, notes);
}

py::list dist_python::toPython(const std::vector<Diagnostic> &ds) {
  py::list out;
  for (const Diagnostic &d : ds)
    out.append(toPython(d));
  return out;
}

void dist_python::raiseDiagnostics(const std::string &what,
                                   std::vector<Diagnostic> diagnostics) {
  py::object cls = py::module_::import("dist._errors").attr("DiagnosticError");
  py::object error = cls(what, toPython(diagnostics));
  PyErr_SetObject(cls.ptr(), error.ptr());
  throw py::error_already_set();
}

ContextRef dist_python::contextOf(const std::optional<Context> &context) {
  if (context)
    return context->state;
  // One default context per thread is what a script expects.
  static thread_local ContextRef defaultContext;
  if (!defaultContext || !defaultContext->open)
    defaultContext = std::make_shared<ContextState>();
  return defaultContext;
}

void dist_python::requireContext(const ContextRef &expected,
                                 const ContextRef &actual,
                                 const std::string &what) {
  if (expected != actual)
    throw py::value_error(what + " belongs to another dist.Context");
}

/// `handle` of `ctx` as its most specific class: the first of `kinds`
/// whose test accepts it, else `Base`; None for a null handle.
template <typename Base, typename Handle>
static py::object wrapMostSpecific(
    ContextRef ctx, Handle handle, bool (*isNull)(Handle),
    std::initializer_list<std::pair<bool (*)(Handle), py::object (*)(Base)>>
        kinds) {
  if (isNull(handle))
    return py::none();
  Base base{std::move(ctx), handle};
  for (auto [is, make] : kinds)
    if (is(handle))
      return make(base);
  return py::cast(base);
}

py::object dist_python::wrapAttribute(ContextRef ctx, MlirAttribute attr) {
  return wrapMostSpecific<Attribute>(
      std::move(ctx), attr, mlirAttributeIsNull,
      {{mlirAttributeIsADistMesh,
        [](Attribute a) { return py::cast(Mesh{a}); }},
       {mlirAttributeIsADistTensor,
        [](Attribute a) { return py::cast(TensorDist{a}); }}});
}

py::object dist_python::wrapType(ContextRef ctx, MlirType type) {
  return wrapMostSpecific<Type>(
      std::move(ctx), type, mlirTypeIsNull,
      {{mlirTypeIsADistFuture, [](Type t) { return py::cast(FutureType{t}); }},
       {mlirTypeIsARankedTensor,
        [](Type t) { return py::cast(TensorType{t}); }}});
}

std::string dist_python::print(MlirAttribute attr) {
  std::string s;
  mlirAttributePrint(attr, append, &s);
  return s;
}

std::string dist_python::print(MlirType type) {
  std::string s;
  mlirTypePrint(type, append, &s);
  return s;
}

std::vector<MlirNamedAttribute>
dist_python::namedAttributes(const ContextRef &ctx, py::dict dict,
                             const std::string &what) {
  MlirContext context = ctx->get();
  std::vector<MlirNamedAttribute> named;
  for (auto item : dict) {
    // The identifier is interned in the context: the name need not live on.
    std::string name = item.first.cast<std::string>();
    const Attribute &a = item.second.cast<const Attribute &>();
    requireContext(ctx, a.ctx, what + " '" + name + "'");
    named.push_back(
        mlirNamedAttributeGet(mlirIdentifierGet(context, toRef(name)), a.attr));
  }
  return named;
}
