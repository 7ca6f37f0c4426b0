//===- Types.cpp - dist._dist types: Type, TensorType, FutureType ---------===//

#include "PyDist.h"

using namespace dist_python;

namespace {
MlirType parseType(ContextRef ctx, const std::string &text) {
  return checkedParse<MlirType>(*ctx, "invalid type '" + text + "'", text, [&] {
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

/// dist.Type: any MLIR type.
void bindType(py::module_ &m) {
  py::class_<Type> cls(m, "Type", "An MLIR type.");
  bindContextHandle(cls, "Type", &Type::type, parseType, mlirTypeEqual);
}

/// dist.TensorType: ranked tensors, encoded or not.
void bindTensorType(py::module_ &m) {
  py::class_<TensorType, Type>(m, "TensorType",
                               "A ranked tensor type, optionally with a "
                               "#dist.tensor encoding.")
      .def(py::init(&makeTensorType), py::arg("shape"),
           py::arg("element_type") = "f32", py::arg("dist") = py::none(),
           py::arg("context") = py::none())
      .def_property_readonly("shape",
                             indexedOf(&TensorType::type, mlirShapedTypeGetRank,
                                       mlirShapedTypeGetDimSize),
                             "The local (per-process) shape.")
      .def_property_readonly(
          "element_type",
          wrappedOf(&TensorType::type, mlirShapedTypeGetElementType),
          "The element type.")
      .def_property_readonly(
          "dist", wrappedOf(&TensorType::type, mlirDistTensorAttrOfType),
          "The #dist.tensor encoding, or None.")
      .def("__repr__", [](const TensorType &t) { return print(t.type); });
}

/// dist.FutureType: !dist.future.
void bindFutureType(py::module_ &m) {
  py::class_<FutureType, Type>(m, "FutureType",
                               "!dist.future: the pending result of an "
                               "asynchronous collective.")
      .def(py::init([](const TensorType &valueType) {
             MlirType t =
                 checked<MlirType>(*valueType.ctx, "invalid future", [&] {
                   return mlirDistFutureTypeGet(valueType.type);
                 });
             return FutureType{{valueType.ctx, t}};
           }),
           py::arg("value_type"))
      .def("__repr__", [](const FutureType &f) { return print(f.type); })
      .def_property_readonly(
          "value_type",
          wrappedOf(&FutureType::type, mlirDistFutureTypeGetValueType),
          "The tensor type the future completes to.");
}

} // namespace

void dist_python::populateTypes(py::module_ &m) {
  // A class before the classes deriving from it.
  for (auto bind : {bindType, bindTensorType, bindFutureType})
    bind(m);
}
