//===- Builder.cpp - dist._dist's half of FunctionBuilder -----------------===//
//
// dist/builder.py builds functions through these: a detached entry block ops
// are appended to (or the body of a region op being built, such as a
// linalg.generic's), finished into a func.func of the module; the builtin
// attributes it needs, made through the C API (no text round trip, so any
// string is safe); dense constants from numpy arrays.
//
//===----------------------------------------------------------------------===//

#include "PyDist.h"

using namespace dist_python;

namespace {
/// A function under construction: a detached entry block that ops are
/// appended to, turned into a func.func in the module by finish().
struct FunctionBuilder {
  ModuleRef module;
  std::string name;
  std::vector<MlirType> argTypes;
  std::vector<MlirAttribute> argAttrs;
  MlirBlock block;
  /// The bodies being built, innermost last: ops go to the last one, or to
  /// the entry block when there is none.
  std::vector<MlirBlock> bodies;
  bool finished = false;

  MlirBlock insertionBlock() const {
    return bodies.empty() ? block : bodies.back();
  }

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
  /// that dangles when that one goes. It must also be in scope where ops go
  /// now: in the block being built or one around it, not in a body already
  /// ended. Raises ValueError otherwise.
  MlirValue operand(const Value &v, const std::string &what) const {
    requireContext(module->ctx, v.context(), what);
    MlirValue value = v.get();
    MlirBlock owner = mlirValueIsABlockArgument(value)
                          ? mlirBlockArgumentGetOwner(value)
                          : mlirOperationGetBlock(mlirOpResultGetOwner(value));
    // The blocks from `from` out to the entry block, innermost first.
    auto enclosing = [&](MlirBlock from) {
      std::vector<MlirBlock> chain;
      for (MlirBlock b = from; !mlirBlockIsNull(b);) {
        chain.push_back(b);
        if (mlirBlockEqual(b, block))
          return chain;
        MlirOperation parent = mlirBlockGetParentOperation(b);
        if (mlirOperationIsNull(parent))
          break;
        b = mlirOperationGetBlock(parent);
      }
      return std::vector<MlirBlock>{};
    };
    if (enclosing(owner).empty())
      throw py::value_error(what + " is not a value of function @" + name +
                            " (it belongs to another function or module)");
    for (MlirBlock b : enclosing(insertionBlock()))
      if (mlirBlockEqual(b, owner))
        return value;
    throw py::value_error(what + " is defined in a body that does not "
                                 "enclose the op (a body already ended)");
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

/// `func.func @name` of type `fnType` with `body` (empty for a
/// declaration) and `attrs` besides its name, type and visibility: the one
/// place the builder assembles a function.
MlirOperation createFunction(MlirContext ctx, const std::string &name,
                             MlirType fnType, bool isPrivate,
                             std::vector<MlirNamedAttribute> attrs,
                             MlirRegion body) {
  attrs.push_back(
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, toRef("sym_name")),
                            mlirStringAttrGet(ctx, toRef(name))));
  attrs.push_back(mlirNamedAttributeGet(
      mlirIdentifierGet(ctx, toRef("function_type")), mlirTypeAttrGet(fnType)));
  if (isPrivate)
    attrs.push_back(
        mlirNamedAttributeGet(mlirIdentifierGet(ctx, toRef("sym_visibility")),
                              mlirStringAttrGet(ctx, toRef("private"))));
  MlirOperationState func =
      mlirOperationStateGet(toRef("func.func"), mlirLocationUnknownGet(ctx));
  mlirOperationStateAddAttributes(&func, attrs.size(), attrs.data());
  mlirOperationStateAddOwnedRegions(&func, 1, &body);
  return mlirOperationCreate(&func);
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

/// Appends op `name`; with `bodyArgTypes`, the op gets one region of one
/// block with arguments of those types, which later ops go to until
/// endBody. Returns its results.
py::list appendOp(FunctionBuilder &f, const std::string &name,
                  const std::vector<Value> &operands,
                  const std::vector<Type> &resultTypes, py::dict attributes,
                  std::optional<std::string> file, int line, int col,
                  std::optional<std::vector<Type>> bodyArgTypes) {
  MlirContext ctx = f.context();
  loadDialectOf(ctx, name);
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
  std::vector<MlirNamedAttribute> named =
      namedAttributes(f.module->ctx, attributes, "attribute");
  mlirOperationStateAddOperands(&op, values.size(), values.data());
  mlirOperationStateAddResults(&op, types.size(), types.data());
  mlirOperationStateAddAttributes(&op, named.size(), named.data());
  MlirBlock body = {nullptr};
  if (bodyArgTypes) {
    std::vector<MlirType> argTypes;
    std::vector<MlirLocation> argLocs;
    for (const Type &t : *bodyArgTypes) {
      requireContext(f.module->ctx, t.ctx,
                     "a body argument type of '" + name + "'");
      argTypes.push_back(t.type);
      argLocs.push_back(locationOf(ctx, file, line, col));
    }
    MlirRegion region = mlirRegionCreate();
    body = mlirBlockCreate(argTypes.size(), argTypes.data(), argLocs.data());
    mlirRegionAppendOwnedBlock(region, body);
    mlirOperationStateAddOwnedRegions(&op, 1, &region);
  }
  MlirOperation created =
      checked<MlirOperation>(*f.module->ctx, "cannot create '" + name + "'",
                             [&] { return mlirOperationCreate(&op); });
  mlirBlockAppendOwnedOperation(f.insertionBlock(), created);
  if (bodyArgTypes)
    f.bodies.push_back(body);
  return listOf(mlirOperationGetNumResults(created), [&](intptr_t r) {
    return f.wrap(mlirOperationGetResult(created, r));
  });
}

/// The arguments of the body being built.
py::list bodyArguments(const FunctionBuilder &f) {
  f.context();
  if (f.bodies.empty())
    throw std::runtime_error("no body is being built in function @" + f.name);
  MlirBlock body = f.bodies.back();
  return listOf(mlirBlockGetNumArguments(body), [&](intptr_t i) {
    return f.wrap(mlirBlockGetArgument(body, i));
  });
}

/// Ends the innermost body: ops go to the block around it again.
void endBody(FunctionBuilder &f) {
  f.context();
  if (f.bodies.empty())
    throw std::runtime_error("no body is being built in function @" + f.name);
  f.bodies.pop_back();
}

void finishFunction(FunctionBuilder &f, const std::vector<Value> &returned,
                    std::optional<py::list> resultAttrs, bool isPrivate,
                    py::dict extraAttrs) {
  MlirContext ctx = f.context();
  if (!f.bodies.empty())
    throw std::runtime_error("function @" + f.name +
                             " has a body still being built (end it first)");
  std::vector<MlirValue> values;
  std::vector<MlirType> resultTypes;
  for (size_t i = 0; i < returned.size(); ++i) {
    values.push_back(
        f.operand(returned[i], "returned value #" + std::to_string(i)));
    resultTypes.push_back(mlirValueGetType(values.back()));
  }
  MlirOperationState ret =
      mlirOperationStateGet(toRef("func.return"), mlirLocationUnknownGet(ctx));
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
      mlirNamedAttributeGet(
          mlirIdentifierGet(ctx, toRef("arg_attrs")),
          mlirArrayAttrGet(ctx, f.argAttrs.size(), f.argAttrs.data())),
      mlirNamedAttributeGet(
          mlirIdentifierGet(ctx, toRef("res_attrs")),
          mlirArrayAttrGet(ctx, resAttrs.size(), resAttrs.data()))};
  for (MlirNamedAttribute a :
       namedAttributes(f.module->ctx, extraAttrs, "function attribute"))
    attrs.push_back(a);
  MlirRegion body = mlirRegionCreate();
  mlirRegionAppendOwnedBlock(body, f.block);
  f.finished = true;
  mlirBlockAppendOwnedOperation(
      mlirModuleGetBody(f.module->module),
      createFunction(ctx, f.name, fnType, isPrivate, attrs, body));
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
  mlirBlockInsertOwnedOperation(body, 0,
                                createFunction(ctx, name, fnType,
                                               /*isPrivate=*/true, {},
                                               mlirRegionCreate()));
}

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

/// The native FunctionBuilder (dist/builder.py wraps it).
void bindFunctionBuilder(py::module_ &m) {
  py::class_<FunctionBuilder, std::shared_ptr<FunctionBuilder>>(
      m, "_FunctionBuilder")
      .def_property_readonly(
          "arguments",
          [](const FunctionBuilder &f) {
            f.context();
            return listOf(mlirBlockGetNumArguments(f.block), [&](intptr_t i) {
              return f.wrap(mlirBlockGetArgument(f.block, i));
            });
          })
      .def("append", &appendOp, py::arg("name"), py::arg("operands"),
           py::arg("result_types"), py::arg("attributes"),
           py::arg("file") = py::none(), py::arg("line") = 0,
           py::arg("column") = 0, py::arg("body_arg_types") = py::none())
      .def_property_readonly("body_arguments", &bodyArguments)
      .def("end_body", &endBody)
      .def("finish", &finishFunction, py::arg("returned"),
           py::arg("result_attrs") = py::none(), py::arg("private") = false,
           py::arg("attributes") = py::dict());
}

/// The builtin attributes, functions and constants the builder makes.
void bindBuilderHelpers(py::module_ &m) {
  // The builtin attributes the builder needs.
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
    std::vector<MlirNamedAttribute> named =
        namedAttributes(c.state, entries, "marker");
    return Attribute{c.state, mlirDictionaryAttrGet(
                                  c.state->get(), named.size(), named.data())};
  });
  m.def("_function", &makeFunction);
  m.def("_declare", &declareFunction);
  m.def("_dense", &denseElements);
  m.def("_register_passes", [] { mlirDistRegisterAllPasses(); });
  // The one trace drawer (lib/Support/TraceSvg.cpp); a ValueError with the
  // reason when the text is not a dist trace.
  m.def("_render_trace_svg", [](const std::string &trace) {
    std::string out;
    MlirLogicalResult drawn = mlirDistRenderTraceSvg(
        mlirStringRefCreate(trace.data(), trace.size()), append, &out);
    if (mlirLogicalResultIsFailure(drawn))
      throw py::value_error(out);
    return out;
  });
  // A matmul's result shape, by the verifier's rule (the builder states no
  // geometry of its own); a ValueError with the verifier's message when the
  // operands cannot be multiplied.
  m.def("_matmul_shape", [](const TensorType &x, const TensorType &y,
                            bool transposeX, bool transposeY) {
    requireContext(x.ctx, y.ctx, "y");
    ContextState &ctx = *x.ctx;
    std::vector<int64_t> shape(
        std::max(mlirShapedTypeGetRank(x.type), mlirShapedTypeGetRank(y.type)));
    std::vector<Diagnostic> kept;
    intptr_t rank = collecting(
        ctx, "",
        [&] {
          return mlirDistMatmulResultShape(x.type, y.type, transposeX,
                                           transposeY, shape.data(),
                                           shape.size());
        },
        [](intptr_t) { return false; }, &kept);
    if (rank < 0) {
      std::string message = kept.empty() ? "invalid matmul" : kept[0].message;
      // The C function's name is for C callers.
      std::string prefix = "mlirDistMatmulResultShape: ";
      if (message.rfind(prefix, 0) == 0)
        message = message.substr(prefix.size());
      throw py::value_error("matmul " + message);
    }
    shape.resize(rank);
    return shape;
  });
}

} // namespace

void dist_python::populateBuilder(py::module_ &m) {
  bindFunctionBuilder(m);
  bindBuilderHelpers(m);
}
