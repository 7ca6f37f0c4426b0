//===- Attributes.cpp - dist._dist attributes: Attribute, Mesh, TensorDist ===//

#include "PyDist.h"

#include <algorithm>

using namespace dist_python;

namespace {
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
  MlirAttribute attr =
      checked<MlirAttribute>(*mesh.ctx, "invalid distribution", [&] {
        return mlirDistTensorAttrGet(mesh.attr, dims.size(), dims.data(),
                                     axes.size(), axes.data(), kinds.data());
      });
  return TensorDist{{mesh.ctx, attr}};
}

/// dist.Attribute: any MLIR attribute.
void bindAttribute(py::module_ &m) {
  py::class_<Attribute> cls(m, "Attribute", "An MLIR attribute.");
  bindContextHandle(
      cls, "Attribute", &Attribute::attr,
      +[](ContextRef ctx, const std::string &text) {
        return checkedParse<MlirAttribute>(
            *ctx, "invalid attribute '" + text + "'", text,
            [&] { return mlirAttributeParseGet(ctx->get(), toRef(text)); });
      },
      mlirAttributeEqual);
}

/// dist.Mesh: the #dist.mesh attribute and its arithmetic.
void bindMesh(py::module_ &m) {
  py::class_<Mesh, Attribute>(
      m, "Mesh",
      "A #dist.mesh: processes on an n-d grid. `process_ids` lists the "
      "process at each position in row-major order (default 0..N-1).")
      .def(py::init(&makeMesh), py::arg("shape"), py::arg("names") = py::none(),
           py::arg("process_ids") = py::none(), py::arg("context") = py::none())
      .def_property_readonly("shape",
                             indexedOf(&Mesh::attr, mlirDistMeshAttrGetRank,
                                       mlirDistMeshAttrGetAxisSize),
                             "The size of each mesh axis.")
      .def_property_readonly(
          "names",
          [](const Mesh &mesh) {
            return listOf(
                mlirDistMeshAttrGetNumNames(mesh.attr), [&](intptr_t a) {
                  return toString(mlirDistMeshAttrGetName(mesh.attr, a));
                });
          },
          "The axis names (empty when the axes are unnamed).")
      .def_property_readonly("process_ids",
                             indexedOf(&Mesh::attr,
                                       mlirDistMeshAttrGetNumProcesses,
                                       mlirDistMeshAttrGetProcessId),
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
            int64_t size = collecting(
                *mesh.ctx, "invalid mesh axes",
                [&] {
                  return mlirDistMeshAttrGetGroupSize(mesh.attr, axes.size(),
                                                      axes.data());
                },
                [](int64_t n) { return n < 0; });
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
}

/// dist.TensorDist: the #dist.tensor attribute.
void bindTensorDist(py::module_ &m) {
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
      .def_property_readonly(
          "dims_mapping",
          indexedOf(&TensorDist::attr, mlirDistTensorAttrGetRank,
                    mlirDistTensorAttrGetDimMapping),
          "The mesh axis of each tensor dim, -1 for replicated.")
      .def("__repr__", [](const TensorDist &d) { return print(d.attr); });
}

} // namespace

void dist_python::populateAttributes(py::module_ &m) {
  // A class before the classes deriving from it.
  for (auto bind : {bindAttribute, bindMesh, bindTensorDist})
    bind(m);
}
