//===- IR.cpp - dist._dist IR: contexts, modules, operations, values -----===//

#include "PyDist.h"

#include <algorithm>
#include <functional>

using namespace dist_python;

namespace {
/// The module a value's ops belong to: walking from a value to its owner or
/// users hands out operations, which only exist as parts of a module.
ModuleRef moduleOf(const Value &v) {
  if (!v.module)
    throw std::runtime_error("this value's function is not in a module yet");
  return v.module;
}

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
  mlirDistRegisterAllPasses();
  ++m.generation;
  std::vector<Diagnostic> kept;
  collecting(
      *m.ctx, "pass pipeline '" + pipeline + "' failed",
      [&] { return mlirDistRunPassPipeline(m.module, toRef(pipeline)); },
      mlirLogicalResultIsFailure, &kept);
  return toPython(kept);
}

void verifyModule(Module &module) {
  ModuleState &m = *module.state;
  collecting(
      *m.ctx, "the module does not verify",
      [&] { return mlirOperationVerify(mlirModuleGetOperation(m.module)); },
      [](bool ok) { return !ok; });
}

void verifyModuleDistributions(Module &module) {
  ModuleState &m = *module.state;
  collecting(
      *m.ctx, "the distribution check failed",
      [&] { return mlirDistVerifyDistributions(m.module); },
      mlirLogicalResultIsFailure);
}

/// A value or region of operation `o`, as an object of its module.
Value partOf(const Operation &o, MlirValue value) {
  return Value{o.module, o.generation, value, nullptr};
}
Region partOf(const Operation &o, MlirRegion region) {
  return Region{o.module, o.generation, region};
}

/// The getter of what `count` and `get` list of an operation (its operands,
/// results or regions).
template <typename Handle>
auto partsOf(intptr_t (*count)(MlirOperation),
             Handle (*get)(MlirOperation, intptr_t)) {
  return [count, get](const Operation &o) {
    MlirOperation op = o.get();
    return listOf(count(op), [&](intptr_t i) { return partOf(o, get(op, i)); });
  };
}

py::list operationsOf(const ModuleRef &module, uint64_t generation,
                      MlirBlock block) {
  py::list ops;
  for (MlirOperation op = mlirBlockGetFirstOperation(block);
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
    ops.append(Operation{module, generation, op});
  return ops;
}

/// dist.Context, and the default context.
void bindContext(py::module_ &m) {
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
}

/// dist.Value: an SSA value, its type, owner and users.
void bindValue(py::module_ &m) {
  py::class_<Value> cls(m, "Value", "An SSA value.");
  cls.def_property_readonly(
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
      .def("__str__", [](const Value &v) {
        std::string s;
        mlirValuePrint(v.get(), append, &s);
        return s;
      });
  bindIdentity(
      cls, [](const Value &v) { return v.get(); },
      [](const Value &a, const Value &b) {
        return mlirValueEqual(a.get(), b.get());
      });
}

/// dist.Operation: an op of a module, read-only.
void bindOperation(py::module_ &m) {
  py::class_<Operation> cls(m, "Operation", "An operation of a module.");
  cls.def_property_readonly(
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
          partsOf(mlirOperationGetNumOperands, mlirOperationGetOperand),
          "The operand values.")
      .def_property_readonly(
          "results",
          partsOf(mlirOperationGetNumResults, mlirOperationGetResult),
          "The result values.")
      .def_property_readonly(
          "regions",
          partsOf(mlirOperationGetNumRegions, mlirOperationGetRegion),
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
      .def("__str__", [](const Operation &o) {
        return printOperation(o.get(), false, false);
      });
  bindIdentity(
      cls, [](const Operation &o) { return o.get(); },
      [](const Operation &a, const Operation &b) {
        return mlirOperationEqual(a.get(), b.get());
      });
}

/// dist.Region and dist.Block.
void bindRegionsAndBlocks(py::module_ &m) {
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
            return listOf(mlirBlockGetNumArguments(b.block), [&](intptr_t i) {
              return Value{b.module, b.generation,
                           mlirBlockGetArgument(b.block, i), nullptr};
            });
          })
      .def_property_readonly("operations", [](const Block &b) {
        Operation check{b.module, b.generation, MlirOperation{nullptr}};
        check.get();
        return operationsOf(b.module, b.generation, b.block);
      });
}

/// dist.Module: parsing, printing, pass runs and checks.
void bindModule(py::module_ &m) {
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
}

} // namespace

void dist_python::populateIR(py::module_ &m) {
  bindContext(m);
  bindValue(m);
  bindOperation(m);
  bindRegionsAndBlocks(m);
  bindModule(m);
}
