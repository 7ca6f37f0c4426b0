/*===- Dist.h - C API of the dist dialect --------------------------*- C
-*-===*\
|*                                                                            *|
|* The dist dialect, its attributes and types, and the mesh arithmetic, for   *|
|* C programs and language bindings. Functions that build an attribute or a   *|
|* type return a null one (mlirAttributeIsNull/mlirTypeIsNull) for bad        *|
|* arguments and report why as an error diagnostic through the context.       *|
|* Getters given a value of the wrong kind, or an index out of range, report  *|
|* the same way and return the documented sentinel; given a null value (no    *|
|* context to report to) they return the sentinel silently.                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef DIST_C_DIST_H
#define DIST_C_DIST_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The dist dialect: `mlirGetDialectHandle__dist__()`. Inserting or
 *  loading it through the handle also registers the distribution rules of
 *  the upstream ops dist programs use (as mlirDistRegisterDialects does). */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Dist, dist);

/** Registers the dist dialect with the distribution rules of upstream ops
 *  (external models): C++'s mlir::dist::registerAllDistDialects. */
MLIR_CAPI_EXPORTED void mlirDistRegisterDialects(MlirDialectRegistry registry);

/** Registers dist and every upstream dialect and extension that dist-opt
 *  registers, so that any program dist-opt reads can be parsed. */
MLIR_CAPI_EXPORTED void
mlirDistRegisterAllDialects(MlirDialectRegistry registry);

/** Registers every pass dist-opt knows, for pipeline strings: the dist
 *  passes and conversions, the `dist-auto-parallel` and `dist-to-llvm`
 *  pipelines, and upstream's passes (canonicalize, cse, ...). */
MLIR_CAPI_EXPORTED void mlirDistRegisterAllPasses(void);

/** Parses `source`, MLIR text or bytecode, as a module (top-level ops go
 *  into an implicit builtin.module, as in dist-opt), naming the buffer
 *  `sourceName` in locations and diagnostics: mlirModuleCreateParse with a
 *  file name. Null on a parse or verification error, reported through the
 *  context, and for input nested more than 1000 levels deep (regions,
 *  attributes or types: the parser, the printer and passes would overflow
 *  the stack). */
MLIR_CAPI_EXPORTED MlirModule mlirDistModuleCreateParse(
    MlirContext ctx, MlirStringRef source, MlirStringRef sourceName);

/** Runs the textual pass pipeline `pipeline` on `module` as dist-opt
 *  would: on the module, nesting passes that run on functions implicitly
 *  ("dist-auto-parallel,dist-dropout-seed" needs no "func.func(...)").
 *  Failure when the pipeline does not parse (reported as an error
 *  diagnostic through the context) or a pass fails. */
MLIR_CAPI_EXPORTED MlirLogicalResult
mlirDistRunPassPipeline(MlirModule module, MlirStringRef pipeline);

/** The distribution check of --dist-verify-distributions on `module`
 *  (verified first): every op against its distribution rule, and what needs
 *  the module (values that differ by process declared replicated,
 *  encodings cast away and back, collectives under control that differs
 *  within their group, directly or through calls). Failure with the
 *  errors, located, reported through the context. */
MLIR_CAPI_EXPORTED MlirLogicalResult
mlirDistVerifyDistributions(MlirModule module);

/*===----------------------------------------------------------------------===*/
/* Reduction kinds                                                           */
/*===----------------------------------------------------------------------===*/

/** The reduction a collective applies, or that a partial value awaits. */
typedef enum MlirDistReductionKind {
  MlirDistReductionSum = 0,
  MlirDistReductionMax = 1,
  MlirDistReductionMin = 2,
  MlirDistReductionProd = 3,
  MlirDistReductionAvg = 4,
  /* Not a kind: makes every int a value of the type in C++ as in C, so
   * that passing an unknown kind to the functions below is defined. */
  MlirDistReductionKindForceInt32Min = -2147483647 - 1,
  MlirDistReductionKindForceInt32Max = 2147483647
} MlirDistReductionKind;

/** The IR spelling of `kind` ("sum", ...); empty for an unknown kind. */
MLIR_CAPI_EXPORTED MlirStringRef
mlirDistReductionKindGetName(MlirDistReductionKind kind);

/** Parses an IR spelling into `*kind`; false (and `*kind` untouched) when
 *  `name` is not one. */
MLIR_CAPI_EXPORTED bool
mlirDistReductionKindFromName(MlirStringRef name, MlirDistReductionKind *kind);

/*===----------------------------------------------------------------------===*/
/* Stream kinds                                                              */
/*===----------------------------------------------------------------------===*/

/** The stream a collective is issued on (its `stream` attribute). */
typedef enum MlirDistStreamKind {
  MlirDistStreamCompute = 0,
  MlirDistStreamModelParallel = 1,
  MlirDistStreamDataParallel = 2,
  MlirDistStreamSharding = 3,
  /* Not a kind: see MlirDistReductionKindForceInt32Min. */
  MlirDistStreamKindForceInt32Min = -2147483647 - 1,
  MlirDistStreamKindForceInt32Max = 2147483647
} MlirDistStreamKind;

/** The IR spelling of `kind` ("compute", "mp", "dp", "sharding"); empty for
 *  an unknown kind. */
MLIR_CAPI_EXPORTED MlirStringRef
mlirDistStreamKindGetName(MlirDistStreamKind kind);

/** Parses an IR spelling into `*kind`; false (and `*kind` untouched) when
 *  `name` is not one. */
MLIR_CAPI_EXPORTED bool mlirDistStreamKindFromName(MlirStringRef name,
                                                   MlirDistStreamKind *kind);

/*===----------------------------------------------------------------------===*/
/* #dist.mesh                                                                */
/*===----------------------------------------------------------------------===*/

/** Whether `attr` is a `#dist.mesh`. */
MLIR_CAPI_EXPORTED bool mlirAttributeIsADistMesh(MlirAttribute attr);

/** A mesh of the given shape. `processIds` (position -> process, row-major)
 *  may be null with `numProcessIds` 0 for the default `0..N-1`; `names`
 *  may be null with `numNames` 0 for unnamed axes. */
MLIR_CAPI_EXPORTED MlirAttribute
mlirDistMeshAttrGet(MlirContext ctx, intptr_t rank, const int64_t *shape,
                    intptr_t numProcessIds, const int64_t *processIds,
                    intptr_t numNames, const MlirStringRef *names);

/** Number of mesh axes; -1 for a non-mesh. */
MLIR_CAPI_EXPORTED intptr_t mlirDistMeshAttrGetRank(MlirAttribute mesh);

/** Size of mesh axis `axis`; -1 for a non-mesh or an axis out of range. */
MLIR_CAPI_EXPORTED int64_t mlirDistMeshAttrGetAxisSize(MlirAttribute mesh,
                                                       intptr_t axis);

/** Number of processes; -1 for a non-mesh. */
MLIR_CAPI_EXPORTED int64_t mlirDistMeshAttrGetNumProcesses(MlirAttribute mesh);

/** The process at mesh position `position`; -1 for a non-mesh or a
 *  position out of range. */
MLIR_CAPI_EXPORTED int64_t mlirDistMeshAttrGetProcessId(MlirAttribute mesh,
                                                        intptr_t position);

/** Whether the process ids are the default `0..N-1`; false for a non-mesh. */
MLIR_CAPI_EXPORTED bool
mlirDistMeshAttrHasDefaultProcessIds(MlirAttribute mesh);

/** Number of axis names (0 or the rank); -1 for a non-mesh. */
MLIR_CAPI_EXPORTED intptr_t mlirDistMeshAttrGetNumNames(MlirAttribute mesh);

/** The name of axis `axis`; empty for a non-mesh, an unnamed mesh or an
 *  axis out of range. */
MLIR_CAPI_EXPORTED MlirStringRef mlirDistMeshAttrGetName(MlirAttribute mesh,
                                                         intptr_t axis);

/** Writes the coordinate of process `process` (one entry per axis, the
 *  row-major unravel of its position in the id list) to `coord`, which has
 *  room for the rank. False when `process` is not in the mesh or `mesh` is
 *  not one. */
MLIR_CAPI_EXPORTED bool mlirDistMeshAttrGetProcessCoord(MlirAttribute mesh,
                                                        int64_t process,
                                                        int64_t *coord);

/** The size of the process group along `axes` (the product of their
 *  sizes); -1 for a non-mesh or an axis out of range or repeated. */
MLIR_CAPI_EXPORTED int64_t mlirDistMeshAttrGetGroupSize(MlirAttribute mesh,
                                                        intptr_t numAxes,
                                                        const int64_t *axes);

/** Writes the process group of `process` along `axes` (the processes whose
 *  coordinates differ from its only along `axes`, ordered by their
 *  coordinates along `axes`) to `group`, which has room for
 *  mlirDistMeshAttrGetGroupSize entries, and returns its size; -1 when
 *  `process` is not in the mesh, or for bad axes or a non-mesh. */
MLIR_CAPI_EXPORTED int64_t mlirDistMeshAttrGetProcessGroup(MlirAttribute mesh,
                                                           int64_t process,
                                                           intptr_t numAxes,
                                                           const int64_t *axes,
                                                           int64_t *group);

/*===----------------------------------------------------------------------===*/
/* #dist.tensor                                                              */
/*===----------------------------------------------------------------------===*/

/** Whether `attr` is a `#dist.tensor` distribution. */
MLIR_CAPI_EXPORTED bool mlirAttributeIsADistTensor(MlirAttribute attr);

/** The distribution on `mesh` with `dimsMapping` (one mesh axis or -1 per
 *  tensor dim) and partial axes `partialAxes` with their `partialKinds`
 *  (both null with `numPartial` 0 for none). */
MLIR_CAPI_EXPORTED MlirAttribute mlirDistTensorAttrGet(
    MlirAttribute mesh, intptr_t rank, const int64_t *dimsMapping,
    intptr_t numPartial, const int64_t *partialAxes,
    const MlirDistReductionKind *partialKinds);

/** The mesh; null for a non-distribution. */
MLIR_CAPI_EXPORTED MlirAttribute mlirDistTensorAttrGetMesh(MlirAttribute dist);

/** Number of tensor dims (dims_mapping entries); -1 for a
 *  non-distribution. */
MLIR_CAPI_EXPORTED intptr_t mlirDistTensorAttrGetRank(MlirAttribute dist);

/** The mesh axis splitting tensor dim `dim`, or -1 when it is replicated;
 *  -2 for a non-distribution or a dim out of range. */
MLIR_CAPI_EXPORTED int64_t mlirDistTensorAttrGetDimMapping(MlirAttribute dist,
                                                           intptr_t dim);

/** Number of partial axes; -1 for a non-distribution. */
MLIR_CAPI_EXPORTED intptr_t
mlirDistTensorAttrGetNumPartialAxes(MlirAttribute dist);

/** The `index`-th partial axis (ascending); -1 for a non-distribution or
 *  an index out of range. */
MLIR_CAPI_EXPORTED int64_t mlirDistTensorAttrGetPartialAxis(MlirAttribute dist,
                                                            intptr_t index);

/** The reduction pending on the `index`-th partial axis; Sum for a
 *  non-distribution or an index out of range (with a diagnostic). */
MLIR_CAPI_EXPORTED MlirDistReductionKind
mlirDistTensorAttrGetPartialKind(MlirAttribute dist, intptr_t index);

/** The `#dist.tensor` encoding of `type`; null when it is not a ranked
 *  tensor with one (no diagnostic: having none is not an error). */
MLIR_CAPI_EXPORTED MlirAttribute mlirDistTensorAttrOfType(MlirType type);

/*===----------------------------------------------------------------------===*/
/* !dist.future                                                              */
/*===----------------------------------------------------------------------===*/

/** Whether `type` is a `!dist.future`. */
MLIR_CAPI_EXPORTED bool mlirTypeIsADistFuture(MlirType type);

/** The future of `valueType`, which must be a ranked tensor. */
MLIR_CAPI_EXPORTED MlirType mlirDistFutureTypeGet(MlirType valueType);

/** The tensor type a future completes to; null for a non-future. */
MLIR_CAPI_EXPORTED MlirType mlirDistFutureTypeGetValueType(MlirType future);

/*===----------------------------------------------------------------------===*/
/* Ops                                                                        */
/*===----------------------------------------------------------------------===*/

/** The rank of the result shape of `dist.matmul` (and of `out_grad` of
 *  `dist.matmul_grad`) on ranked tensors `x` and `y` with these transposes,
 *  matmul_v2's rule as the verifier applies it; the shape itself (the local
 *  shape: the types' own) is written to `shape` when it has room for
 *  `capacity` entries. -1, after an error diagnostic in `x`'s context, when
 *  the operands cannot be multiplied (rank below 2, differing contraction
 *  sizes, batch dims that do not broadcast). */
MLIR_CAPI_EXPORTED intptr_t mlirDistMatmulResultShape(MlirType x, MlirType y,
                                                      bool transposeX,
                                                      bool transposeY,
                                                      int64_t *shape,
                                                      intptr_t capacity);

/*===----------------------------------------------------------------------===*/
/* Redistribution: reshard plans and transposes                               */
/*===----------------------------------------------------------------------===*/

/** One step of a reshard plan. */
typedef struct MlirDistReshardStep {
  /** The step's op: "dist.allreduce", "dist.all_gather",
   *  "dist.reduce_scatter", "dist.all_to_all", "dist.all_slice" or
   *  "dist.make_partial" (owned by the library). */
  MlirStringRef opName;
  /** The first mesh axis the step acts on (its only one but for an
   *  allreduce over several). */
  int64_t axis;
  /** Every mesh axis the step acts on, in ascending order. */
  const int64_t *axes;
  intptr_t numAxes;
  /** The reduction of an allreduce, reduce-scatter or partial view. */
  MlirDistReductionKind reduction;
  /** The `#dist.tensor` after the step. */
  MlirAttribute to;
  /** Bytes through each process's link, and the estimated seconds. */
  int64_t bytes;
  double seconds;
} MlirDistReshardStep;

typedef void (*MlirDistReshardStepCallback)(const MlirDistReshardStep *step,
                                            void *userData);

/** Plans, with the default cost model, the redistribution that
 *  `dist.reshard` from type `source` to type `target` lowers to, and calls
 *  `callback` with each step in order (none when the types are equal). Both
 *  types are statically shaped ranked tensors with `#dist.tensor`
 *  encodings on one mesh, of one global shape and element type. On failure
 *  nothing is called and the reason is reported through the context. */
MLIR_CAPI_EXPORTED MlirLogicalResult
mlirDistPlanReshard(MlirType source, MlirType target,
                    MlirDistReshardStepCallback callback, void *userData);

/** Builds, right before `insertBefore` (an op in a block), the transpose of
 *  the redistribution `op` (dist.allreduce, all_gather, reduce_scatter,
 *  all_to_all, all_slice, make_partial or reshard) applied to `cotangent`,
 *  the cotangent of `op`'s result, and returns the cotangent of `op`'s
 *  operand: C++'s mlir::dist::buildTranspose. A null value, with the reason
 *  reported through the context, when there is none. */
MLIR_CAPI_EXPORTED MlirValue mlirDistBuildTranspose(MlirOperation op,
                                                    MlirValue cotangent,
                                                    MlirOperation insertBefore);

/*===----------------------------------------------------------------------===*/
/* Traces                                                                     */
/*===----------------------------------------------------------------------===*/

/** Draws `trace`, the JSON text of a dist trace (what dist-run --trace and
 *  --dist-overlap-report's trace-file write; docs/running.md), as an SVG
 *  picture, which `callback` receives (in one or more pieces). On failure
 *  `callback` receives the reason instead, and nothing else. */
MLIR_CAPI_EXPORTED MlirLogicalResult mlirDistRenderTraceSvg(
    MlirStringRef trace, MlirStringCallback callback, void *userData);

#ifdef __cplusplus
}
#endif

#endif /* DIST_C_DIST_H */
