//===- PyDist.h - what the parts of dist._dist share ------------*- C++ -*-===//
//
// The extension dist._dist is Python objects over the C API of
// libDistCAPI.so (and nothing else: no C++ of MLIR is used here, so no
// exception can cross an MLIR callback). Every object holds its context
// alive; a closed context, a stale operation (its module was rewritten since)
// or a value of the wrong kind raises a Python exception before any C API
// call could misbehave. Diagnostics never reach stderr: a handler collects
// them, and a failure raises dist.DiagnosticError with all of them.
//
// As upstream's bindings (mlir/lib/Bindings/Python/) are, it is one file per
// area, each with a populate function that MainModule.cpp calls: Support.cpp
// (diagnostics, contexts, wrapping), Attributes.cpp, Types.cpp, IR.cpp
// (modules, operations, values, pass runs), Builder.cpp (FunctionBuilder's
// native half).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_PYTHON_PYDIST_H
#define DIST_PYTHON_PYDIST_H

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

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dist_python {
namespace py = pybind11;

inline std::string toString(MlirStringRef s) {
  return std::string(s.data, s.length);
}

/// A reference to `s`, which must outlive every use of the result: MLIR
/// keeps some of these (an operation state's name) until the op is built.
inline MlirStringRef toRef(const std::string &s) {
  return mlirStringRefCreate(s.data(), s.size());
}
/// A temporary would die before the reference's last use.
MlirStringRef toRef(std::string &&) = delete;
/// String literals live for the whole program.
template <size_t N> MlirStringRef toRef(const char (&literal)[N]) {
  return mlirStringRefCreate(literal, N - 1);
}

/// Appends printed text to a std::string (an MlirStringCallback).
void append(MlirStringRef text, void *userData);

/// The list of `make(i)` for i in [0, count): an op's operands, results or
/// regions, a block's arguments.
template <typename Make> pybind11::list listOf(intptr_t count, Make make) {
  pybind11::list out;
  for (intptr_t i = 0; i < count; ++i)
    out.append(make(i));
  return out;
}

/// __eq__ and __hash__ of a class wrapping an MLIR handle: two of its objects
/// are equal when `equal` says so (any other object is NotImplemented, so
/// that Python asks it); the hash is the pointer of the handle that `handle`
/// gives (checking, where it does, that the object is still usable).
template <typename T, typename... Options, typename Handle, typename Equal>
void bindIdentity(pybind11::class_<T, Options...> &cls, Handle handle,
                  Equal equal) {
  cls.def("__eq__",
          [equal](const T &a, pybind11::object other) -> pybind11::object {
            if (!pybind11::isinstance<T>(other))
              return pybind11::reinterpret_borrow<pybind11::object>(
                  Py_NotImplemented);
            return pybind11::bool_(equal(a, other.cast<const T &>()));
          });
  cls.def("__hash__", [handle](const T &x) {
    return std::hash<const void *>()(handle(x).ptr);
  });
}

//===----------------------------------------------------------------------===//
// Diagnostics and contexts
//===----------------------------------------------------------------------===//

struct Diagnostic {
  std::string severity, file, message;
  int line = 0, column = 0;
  std::vector<Diagnostic> notes;
};

/// The first file/line/column position in `loc`, looking through names,
/// call sites (the callee) and fusions.
bool findPosition(MlirLocation loc, std::string &file, int &line, int &col);
Diagnostic convert(MlirDiagnostic d);

/// The context and what its diagnostic handler collected.
struct ContextState {
  MlirContext context;
  bool open = true;
  std::vector<Diagnostic> diagnostics;

  ContextState();
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

/// Python's context object.
struct Context {
  ContextRef state = std::make_shared<ContextState>();
};

/// `context`'s state, or this thread's default context.
ContextRef contextOf(const std::optional<Context> &context);

/// Raises ValueError unless an object of context `actual` may be used in
/// `expected`: MLIR objects of another context dangle once it is gone (and
/// mixing two contexts in one op is undefined even while both live).
void requireContext(const ContextRef &expected, const ContextRef &actual,
                    const std::string &what);

/// dist._errors.Diagnostic objects.
py::object toPython(const Diagnostic &d);
py::list toPython(const std::vector<Diagnostic> &ds);
[[noreturn]] void raiseDiagnostics(const std::string &what,
                                   std::vector<Diagnostic> diagnostics);

/// The one protocol of every call that may fail with diagnostics: runs
/// `call` with the context's handler collecting what it emits, and raises
/// DiagnosticError(what) with all of it when `failed(result)`. Otherwise
/// returns the result, and the diagnostics (warnings, remarks) through
/// `kept` when given.
template <typename F, typename Failed>
auto collecting(ContextState &ctx, const std::string &what, F call,
                Failed failed, std::vector<Diagnostic> *kept = nullptr) {
  ctx.get();
  ctx.take();
  auto result = call();
  std::vector<Diagnostic> diagnostics = ctx.take();
  if (failed(result))
    raiseDiagnostics(what, std::move(diagnostics));
  if (kept)
    *kept = std::move(diagnostics);
  return result;
}

/// collecting() for a C API call that returns null on failure.
template <typename T, typename F>
T checked(ContextState &ctx, const std::string &what, F make) {
  return collecting(ctx, what, make, [](T r) { return r.ptr == nullptr; });
}

/// checked() for parsing `text` (a type or an attribute). MLIR names the
/// text itself as the file of its errors ("f99:1:1: error: ..."); they say
/// where in the text instead.
template <typename T, typename F>
T checkedParse(ContextState &ctx, const std::string &what,
               const std::string &text, F make) {
  std::vector<Diagnostic> diagnostics;
  T result = collecting(ctx, what, make, [](T) { return false; }, &diagnostics);
  if (result.ptr)
    return result;
  for (Diagnostic &d : diagnostics) {
    if (d.file != text)
      continue;
    d.message += d.line > 1 ? " (line " + std::to_string(d.line) + ", column " +
                                  std::to_string(d.column) + ")"
                            : " (column " + std::to_string(d.column) + ")";
    d.file.clear();
    d.line = d.column = 0;
  }
  raiseDiagnostics(what, std::move(diagnostics));
}

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

/// The most specific Python class of `attr` (Mesh, TensorDist, Attribute);
/// None for a null attribute.
py::object wrapAttribute(ContextRef ctx, MlirAttribute attr);
/// The same for types (FutureType, TensorType, Type).
py::object wrapType(ContextRef ctx, MlirType type);

std::string print(MlirAttribute attr);
std::string print(MlirType type);

/// A handle as the most specific dist Python class (wrapAttribute, wrapType).
inline py::object wrapHandle(ContextRef ctx, MlirAttribute attr) {
  return wrapAttribute(std::move(ctx), attr);
}
inline py::object wrapHandle(ContextRef ctx, MlirType type) {
  return wrapType(std::move(ctx), type);
}

/// The getter of a class wrapping the handle `member`: `get(handle)`, wrapped.
template <typename T, typename Handle, typename Get>
auto wrappedOf(Handle T::*member, Get get) {
  return
      [member, get](const T &x) { return wrapHandle(x.ctx, get(x.*member)); };
}

/// The getter of a class wrapping the handle `member`: the list of
/// `get(handle, i)` for i below `count(handle)`.
template <typename T, typename Handle, typename Count, typename Get>
auto indexedOf(Handle T::*member, Count count, Get get) {
  return [member, count, get](const T &x) {
    return listOf(count(x.*member),
                  [&](intptr_t i) { return get(x.*member, i); });
  };
}

/// The Python protocol of dist.Attribute and dist.Type, which wrap a handle
/// (`member`) of a context: `parse` (IR text to a handle, raising), str is
/// the IR text, repr `Kind(text)`, `context` the context, and two are equal
/// in one context when `equal` says so.
template <typename T, typename Handle>
void bindContextHandle(py::class_<T> &cls, const char *kind, Handle T::*member,
                       Handle (*parse)(ContextRef, const std::string &),
                       bool (*equal)(Handle, Handle)) {
  cls.def_static(
      "parse",
      [parse](const std::string &text, std::optional<Context> context) {
        ContextRef ctx = contextOf(context);
        return wrapHandle(ctx, parse(ctx, text));
      },
      py::arg("text"), py::arg("context") = py::none(),
      "Parses one from its IR text.");
  cls.def("__str__",
          [member](const T &x) {
            x.ctx->get();
            return print(x.*member);
          })
      .def("__repr__",
           [member, kind](const T &x) {
             x.ctx->get();
             return std::string(kind) + "(" + print(x.*member) + ")";
           })
      .def_property_readonly("context",
                             [](const T &x) { return Context{x.ctx}; });
  bindIdentity(
      cls, [member](const T &x) { return x.*member; },
      [member, equal](const T &a, const T &b) {
        return a.ctx == b.ctx && equal(a.*member, b.*member);
      });
}

/// The entries of `dict` ({name: dist.Attribute}) as named attributes, each
/// of context `ctx` (`what` names an entry in the error: "attribute").
std::vector<MlirNamedAttribute>
namedAttributes(const ContextRef &ctx, py::dict dict, const std::string &what);

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

//===----------------------------------------------------------------------===//
// The areas' bindings
//===----------------------------------------------------------------------===//

void populateAttributes(py::module_ &m);
void populateTypes(py::module_ &m);
void populateIR(py::module_ &m);
void populateBuilder(py::module_ &m);

} // namespace dist_python

#endif // DIST_PYTHON_PYDIST_H
