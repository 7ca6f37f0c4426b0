/*===- Passes.h - C API of the dist passes and conversions ---------*- C
-*-===*\
|*                                                                            *|
|* Generated from the passes' TableGen descriptions: for each pass P of       *|
|* --dist-* (Passes.td) `mlirCreateDist<P>()` and `mlirRegisterDist<P>()`,    *|
|* and `mlirRegisterDistPasses()` for all of them; the same for the           *|
|* conversions with the prefix `DistConversion`. mlirDistRegisterAllPasses    *|
|* (Dist.h) also registers the pipelines.                                     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef DIST_C_PASSES_H
#define DIST_C_PASSES_H

#include "mlir-c/Pass.h"

#include "dist/Conversion/Passes.capi.h.inc"
#include "dist/Dialect/Dist/Transforms/Passes.capi.h.inc"

#endif /* DIST_C_PASSES_H */
