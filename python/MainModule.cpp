//===- MainModule.cpp - the dist._dist extension module -------------------===//
//
// Each area's bindings are a populate function of its own file (PyDist.h
// says which); this is the module that calls them, in the order pybind11
// needs (a class before the classes deriving from it and the functions
// taking it).
//
//===----------------------------------------------------------------------===//

#include "PyDist.h"

PYBIND11_MODULE(_dist, m) {
  m.doc() = "Native part of the dist package (see dist/__init__.py).";
  dist_python::populateIR(m);
  dist_python::populateAttributes(m);
  dist_python::populateTypes(m);
  dist_python::populateBuilder(m);
}
