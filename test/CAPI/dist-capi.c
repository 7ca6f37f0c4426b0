// RUN: dist-capi-test 2>&1 | FileCheck %s

/*===- dist-capi.c - exercise every function of the dist C API ----*- C -*-===*\
|*                                                                            *|
|* Built by the test suite against libDistCAPI.so alone and run by            *|
|* test/CAPI/dist-capi.test, which checks its output with FileCheck, as       *|
|* upstream's mlir/test/CAPI does. Diagnostics are printed to stdout, so the  *|
|* error paths are checked too.                                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "dist-c/Dist.h"
#include "dist-c/Passes.h"

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/Dialect/Func.h"
#include "mlir-c/Dialect/Tensor.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic,
                                         void *userData) {
  (void)userData;
  printf("diagnostic: ");
  mlirDiagnosticPrint(diagnostic, printToStdout, NULL);
  printf("\n");
  return mlirLogicalResultSuccess();
}

static void printAttr(const char *label, MlirAttribute attr) {
  printf("%s: ", label);
  if (mlirAttributeIsNull(attr))
    printf("<null>");
  else
    mlirAttributePrint(attr, printToStdout, NULL);
  printf("\n");
}

/* A type prints as the type attribute holding it. */
static void printType(const char *label, MlirType type) {
  printAttr(label, mlirTypeIsNull(type) ? mlirAttributeGetNull()
                                        : mlirTypeAttrGet(type));
}

static void printString(const char *label, MlirStringRef s) {
  printf("%s: '%.*s'\n", label, (int)s.length, s.data);
}

/* Runs `pm` on `module`, prints whether it succeeded (after `label`) and the
 * module, and destroys both. */
static void runPrintAndDestroy(MlirPassManager pm, MlirModule module,
                               const char *label) {
  MlirLogicalResult ran =
      mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
  printf("%s: %d\n", label, mlirLogicalResultIsSuccess(ran));
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  printf("\n");
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
}

static MlirContext createContext(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirDistRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirContextAttachDiagnosticHandler(ctx, printDiagnostic, NULL, NULL);
  return ctx;
}

// CHECK-LABEL: testDialect
// CHECK: namespace: 'dist'
// CHECK: parsed: #mesh = #dist.mesh<shape = [2]>
// CHECK: func.func @f(%{{.*}}: tensor<4xf32, #dist.tensor<#mesh, [0]>>)
// CHECK: location: loc("step.mlir":1:1)
// CHECK: diagnostic: expected operation name in quotes
// CHECK: bad parse is null: 1
// CHECK: unterminated parse is null: 0
// CHECK: diagnostic: expected '['
// CHECK: diagnostic: MLIR's parser of 'linalg.broadcast' crashed here: the input is malformed, and this is a bug in MLIR 22 itself
// CHECK: crashing parse is null: 1
static void testDialect(MlirContext ctx) {
  printf("testDialect\n");
  MlirDialect dialect =
      mlirDialectHandleLoadDialect(mlirGetDialectHandle__dist__(), ctx);
  printString("namespace", mlirDialectGetNamespace(dialect));
  MlirModule module = mlirModuleCreateParse(
      ctx, mlirStringRefCreateFromCString(
               "#mesh = #dist.mesh<shape = [2]>\n"
               "func.func @f(%x: tensor<4xf32, #dist.tensor<#mesh, [0]>>) {\n"
               "  return\n"
               "}\n"));
  printf("parsed: ");
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  printf("\n");
  mlirModuleDestroy(module);

  /* Named buffers: locations and diagnostics say the file. */
  module = mlirDistModuleCreateParse(
      ctx, mlirStringRefCreateFromCString("func.func @g() {\n  return\n}\n"),
      mlirStringRefCreateFromCString("step.mlir"));
  MlirOperation g = mlirBlockGetFirstOperation(mlirModuleGetBody(module));
  printAttr("location", mlirLocationGetAttribute(mlirOperationGetLocation(g)));
  mlirModuleDestroy(module);
  module = mlirDistModuleCreateParse(
      ctx, mlirStringRefCreateFromCString("func.func @h() {\n  %x = \n}\n"),
      mlirStringRefCreateFromCString("bad.mlir"));
  printf("bad parse is null: %d\n", mlirModuleIsNull(module));

  /* A source that is a slice of a larger buffer, not NUL-terminated: the
   * parser reads none of what follows (under ASan, past the allocation). */
  const char text[] = "func.func @s() {\n  return\n}\n";
  char *exact = (char *)malloc(sizeof(text) - 1);
  memcpy(exact, text, sizeof(text) - 1);
  module = mlirDistModuleCreateParse(
      ctx, mlirStringRefCreate(exact, sizeof(text) - 1),
      mlirStringRefCreateFromCString("slice.mlir"));
  printf("unterminated parse is null: %d\n", mlirModuleIsNull(module));
  mlirModuleDestroy(module);
  free(exact);

  /* Input MLIR 22's own op parser crashes on (ParserCrashGuard.h): an
   * error at the place, and no module. */
  module = mlirDistModuleCreateParse(
      ctx,
      mlirStringRefCreateFromCString(
          "func.func @b(%a: tensor<2xf32>, %b: tensor<2x3xf32>) {\n"
          "  %0 = linalg.broadcast ins(%a : tensor<2xf32>) outs(%b : "
          "tensor<2x3xf32>) dimensions = \"a\"\n"
          "  return\n}\n"),
      mlirStringRefCreateFromCString("crash.mlir"));
  printf("crashing parse is null: %d\n", mlirModuleIsNull(module));
}

// CHECK-LABEL: testReductionKinds
// CHECK: sum max min prod avg
// CHECK: unknown kind: ''
// CHECK: from "avg": 1 4
// CHECK: from "mean": 0
// CHECK: compute mp dp sharding
// CHECK: unknown stream: ''
// CHECK: stream "dp": 1 2
// CHECK: stream "tp": 0
static void testReductionKinds(void) {
  printf("testReductionKinds\n");
  for (int k = MlirDistReductionSum; k <= MlirDistReductionAvg; ++k) {
    MlirStringRef name = mlirDistReductionKindGetName((MlirDistReductionKind)k);
    printf("%.*s ", (int)name.length, name.data);
  }
  printf("\n");
  printString("unknown kind",
              mlirDistReductionKindGetName((MlirDistReductionKind)42));
  MlirDistReductionKind kind = MlirDistReductionSum;
  bool ok = mlirDistReductionKindFromName(mlirStringRefCreateFromCString("avg"),
                                          &kind);
  printf("from \"avg\": %d %d\n", ok, (int)kind);
  ok = mlirDistReductionKindFromName(mlirStringRefCreateFromCString("mean"),
                                     &kind);
  printf("from \"mean\": %d\n", ok);
  for (int k = MlirDistStreamCompute; k <= MlirDistStreamSharding; ++k) {
    MlirStringRef name = mlirDistStreamKindGetName((MlirDistStreamKind)k);
    printf("%.*s ", (int)name.length, name.data);
  }
  printf("\n");
  printString("unknown stream",
              mlirDistStreamKindGetName((MlirDistStreamKind)-1));
  MlirDistStreamKind stream = MlirDistStreamCompute;
  ok =
      mlirDistStreamKindFromName(mlirStringRefCreateFromCString("dp"), &stream);
  printf("stream \"dp\": %d %d\n", ok, (int)stream);
  ok =
      mlirDistStreamKindFromName(mlirStringRefCreateFromCString("tp"), &stream);
  printf("stream \"tp\": %d\n", ok);
}

// CHECK-LABEL: testMesh
// CHECK: mesh: #dist.mesh<shape = [2, 4], names = ["dp", "mp"], process_ids = [7, 6, 5, 4, 3, 2, 1, 0]>
// CHECK: isa mesh 1 isa tensor 0
// CHECK: rank 2 sizes 2 4 processes 8 id@1 6 default 0
// CHECK: names 2: 'dp'
// CHECK: name 1: 'mp'
// CHECK: coord of 6: 1 0 1
// CHECK: coord of 9: 0
// CHECK: group size along mp: 4
// CHECK: group of 6 along mp: 4: 7 6 5 4
// CHECK: group of 6 along mp, dp: 8: 7 3 6 2 5 1 4 0
// CHECK: default mesh: #dist.mesh<shape = [3]> default 1 names 0
static void testMesh(MlirContext ctx) {
  printf("testMesh\n");
  int64_t shape[] = {2, 4};
  int64_t ids[] = {7, 6, 5, 4, 3, 2, 1, 0};
  MlirStringRef names[] = {mlirStringRefCreateFromCString("dp"),
                           mlirStringRefCreateFromCString("mp")};
  MlirAttribute mesh = mlirDistMeshAttrGet(ctx, 2, shape, 8, ids, 2, names);
  printAttr("mesh", mesh);
  printf("isa mesh %d isa tensor %d\n", mlirAttributeIsADistMesh(mesh),
         mlirAttributeIsADistTensor(mesh));
  printf("rank %d sizes %" PRId64 " %" PRId64 " processes %" PRId64
         " id@1 %" PRId64 " default %d\n",
         (int)mlirDistMeshAttrGetRank(mesh),
         mlirDistMeshAttrGetAxisSize(mesh, 0),
         mlirDistMeshAttrGetAxisSize(mesh, 1),
         mlirDistMeshAttrGetNumProcesses(mesh),
         mlirDistMeshAttrGetProcessId(mesh, 1),
         mlirDistMeshAttrHasDefaultProcessIds(mesh));
  printf("names %d: ", (int)mlirDistMeshAttrGetNumNames(mesh));
  MlirStringRef first = mlirDistMeshAttrGetName(mesh, 0);
  printf("'%.*s'\n", (int)first.length, first.data);
  printString("name 1", mlirDistMeshAttrGetName(mesh, 1));

  int64_t coord[2] = {-1, -1};
  bool found = mlirDistMeshAttrGetProcessCoord(mesh, 6, coord);
  printf("coord of 6: %d %" PRId64 " %" PRId64 "\n", found, coord[0], coord[1]);
  printf("coord of 9: %d\n", mlirDistMeshAttrGetProcessCoord(mesh, 9, coord));

  int64_t mp[] = {1};
  printf("group size along mp: %" PRId64 "\n",
         mlirDistMeshAttrGetGroupSize(mesh, 1, mp));
  int64_t group[8];
  int64_t n = mlirDistMeshAttrGetProcessGroup(mesh, 6, 1, mp, group);
  printf("group of 6 along mp: %" PRId64 ":", n);
  for (int64_t i = 0; i < n; ++i)
    printf(" %" PRId64, group[i]);
  printf("\n");
  int64_t both[] = {1, 0};
  n = mlirDistMeshAttrGetProcessGroup(mesh, 6, 2, both, group);
  printf("group of 6 along mp, dp: %" PRId64 ":", n);
  for (int64_t i = 0; i < n; ++i)
    printf(" %" PRId64, group[i]);
  printf("\n");

  int64_t line[] = {3};
  MlirAttribute plain = mlirDistMeshAttrGet(ctx, 1, line, 0, NULL, 0, NULL);
  printf("default mesh: ");
  mlirAttributePrint(plain, printToStdout, NULL);
  printf(" default %d names %d\n", mlirDistMeshAttrHasDefaultProcessIds(plain),
         (int)mlirDistMeshAttrGetNumNames(plain));
}

// CHECK-LABEL: testMeshErrors
// CHECK: diagnostic: mlirDistMeshAttrGet: mesh axis 1 has size 0; sizes must be positive
// CHECK: zero axis: <null>
// CHECK: diagnostic: mlirDistMeshAttrGet: mesh has more than 1048576 processes
// CHECK: huge: <null>
// CHECK: diagnostic: mlirDistMeshAttrGet: process id 1 appears more than once
// CHECK: repeated id: <null>
// CHECK: diagnostic: mlirDistMeshAttrGet: mesh of rank 1 has 2 axis names
// CHECK: names: <null>
// CHECK: diagnostic: mlirDistMeshAttrGet: bad shape array (count 2, null pointer)
// CHECK: null shape: <null>
// CHECK: diagnostic: mlirDistMeshAttrGet: mesh must have at least one axis
// CHECK: no axes: <null>
// CHECK: diagnostic: mlirDistMeshAttrGetRank: expected a #dist.mesh, got 5 : i64
// CHECK: rank of an integer: -1
// CHECK: diagnostic: mlirDistMeshAttrGetAxisSize: mesh axis 2 is out of range [0, 1)
// CHECK: diagnostic: mlirDistMeshAttrGetProcessId: mesh position -1 is out of range [0, 2)
// CHECK: diagnostic: mlirDistMeshAttrGetName: named axis 0 is out of range [0, 0)
// CHECK: out of range: -1 -1 ''
// CHECK: diagnostic: mlirDistMeshAttrGetGroupSize: mesh axis 0 is repeated
// CHECK: diagnostic: mlirDistMeshAttrGetProcessGroup: mesh axis 3 is out of range [0, 1)
// CHECK: bad axes: -1 -1
// CHECK: outside the mesh: -1
// CHECK: null mesh: -1 0 -1
static void testMeshErrors(MlirContext ctx) {
  printf("testMeshErrors\n");
  int64_t zero[] = {2, 0};
  printAttr("zero axis", mlirDistMeshAttrGet(ctx, 2, zero, 0, NULL, 0, NULL));
  int64_t huge[] = {1 << 20, 4};
  printAttr("huge", mlirDistMeshAttrGet(ctx, 2, huge, 0, NULL, 0, NULL));
  int64_t two[] = {2};
  int64_t repeated[] = {1, 1};
  printAttr("repeated id",
            mlirDistMeshAttrGet(ctx, 1, two, 2, repeated, 0, NULL));
  MlirStringRef names[] = {mlirStringRefCreateFromCString("a"),
                           mlirStringRefCreateFromCString("b")};
  printAttr("names", mlirDistMeshAttrGet(ctx, 1, two, 0, NULL, 2, names));
  printAttr("null shape", mlirDistMeshAttrGet(ctx, 2, NULL, 0, NULL, 0, NULL));
  printAttr("no axes", mlirDistMeshAttrGet(ctx, 0, NULL, 0, NULL, 0, NULL));

  MlirAttribute integer = mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), 5);
  printf("rank of an integer: %d\n", (int)mlirDistMeshAttrGetRank(integer));
  MlirAttribute mesh = mlirDistMeshAttrGet(ctx, 1, two, 0, NULL, 0, NULL);
  int64_t size = mlirDistMeshAttrGetAxisSize(mesh, 2);
  int64_t id = mlirDistMeshAttrGetProcessId(mesh, -1);
  MlirStringRef name = mlirDistMeshAttrGetName(mesh, 0);
  printf("out of range: %" PRId64 " %" PRId64 " '%.*s'\n", size, id,
         (int)name.length, name.data);
  int64_t twice[] = {0, 0};
  int64_t three[] = {3};
  int64_t group[4];
  int64_t a = mlirDistMeshAttrGetGroupSize(mesh, 2, twice);
  int64_t b = mlirDistMeshAttrGetProcessGroup(mesh, 0, 1, three, group);
  printf("bad axes: %" PRId64 " %" PRId64 "\n", a, b);
  int64_t axis0[] = {0};
  printf("outside the mesh: %" PRId64 "\n",
         mlirDistMeshAttrGetProcessGroup(mesh, 5, 1, axis0, group));
  MlirAttribute null = {NULL};
  int64_t coord[1];
  printf("null mesh: %d %d %" PRId64 "\n", (int)mlirDistMeshAttrGetRank(null),
         mlirDistMeshAttrGetProcessCoord(null, 0, coord),
         mlirDistMeshAttrGetNumProcesses(null));
}

// CHECK-LABEL: testTensorDist
// CHECK: dist: #dist.tensor<#dist.mesh<shape = [2, 4]>, [0, -1], partial = [1 : sum]>
// CHECK: isa 1 rank 2 dims 0 -1 partial 1: axis 1 kind 0
// CHECK: mesh of dist: #dist.mesh<shape = [2, 4]>
// CHECK: type: tensor<8x16xf32, #dist.tensor<#dist.mesh<shape = [2, 4]>, [0, -1], partial = [1 : sum]>>
// CHECK: dist of type: #dist.tensor<#dist.mesh<shape = [2, 4]>, [0, -1], partial = [1 : sum]>
// CHECK: dist of a plain type: <null>
// CHECK: replicated: #dist.tensor<#dist.mesh<shape = [2, 4]>, [-1, -1], partial = [0 : max, 1 : avg]>
static void testTensorDist(MlirContext ctx) {
  printf("testTensorDist\n");
  int64_t shape[] = {2, 4};
  MlirAttribute mesh = mlirDistMeshAttrGet(ctx, 2, shape, 0, NULL, 0, NULL);
  int64_t dims[] = {0, -1};
  int64_t axes[] = {1};
  MlirDistReductionKind kinds[] = {MlirDistReductionSum};
  MlirAttribute dist = mlirDistTensorAttrGet(mesh, 2, dims, 1, axes, kinds);
  printAttr("dist", dist);
  printf("isa %d rank %d dims %" PRId64 " %" PRId64 " partial %d: axis %" PRId64
         " kind %d\n",
         mlirAttributeIsADistTensor(dist), (int)mlirDistTensorAttrGetRank(dist),
         mlirDistTensorAttrGetDimMapping(dist, 0),
         mlirDistTensorAttrGetDimMapping(dist, 1),
         (int)mlirDistTensorAttrGetNumPartialAxes(dist),
         mlirDistTensorAttrGetPartialAxis(dist, 0),
         (int)mlirDistTensorAttrGetPartialKind(dist, 0));
  printAttr("mesh of dist", mlirDistTensorAttrGetMesh(dist));
  int64_t tshape[] = {8, 16};
  MlirType type = mlirRankedTensorTypeGet(2, tshape, mlirF32TypeGet(ctx), dist);
  printType("type", type);
  printAttr("dist of type", mlirDistTensorAttrOfType(type));
  MlirType plain = mlirRankedTensorTypeGet(2, tshape, mlirF32TypeGet(ctx),
                                           mlirAttributeGetNull());
  printAttr("dist of a plain type", mlirDistTensorAttrOfType(plain));
  int64_t none[] = {-1, -1};
  int64_t two[] = {0, 1};
  MlirDistReductionKind mixed[] = {MlirDistReductionMax, MlirDistReductionAvg};
  printAttr("replicated", mlirDistTensorAttrGet(mesh, 2, none, 2, two, mixed));
}

// CHECK-LABEL: testTensorDistErrors
// CHECK: diagnostic: mlirDistTensorAttrGet: mesh axis 0 splits more than one tensor dim
// CHECK: axis twice: <null>
// CHECK: diagnostic: mlirDistTensorAttrGet: unknown reduction kind 9
// CHECK: bad kind: <null>
// CHECK: diagnostic: mlirDistTensorAttrGet: expected a #dist.mesh, got unit
// CHECK: not a mesh: <null>
// CHECK: diagnostic: mlirDistTensorAttrGetDimMapping: tensor dim 5 is out of range [0, 1)
// CHECK: diagnostic: mlirDistTensorAttrGetPartialAxis: partial index 0 is out of range [0, 0)
// CHECK: diagnostic: mlirDistTensorAttrGetPartialKind: partial index 0 is out of range [0, 0)
// CHECK: out of range: -2 -1 0
// CHECK: diagnostic: mlirDistTensorAttrGetMesh: expected a #dist.tensor
// CHECK: diagnostic: mlirDistTensorAttrGetRank: expected a #dist.tensor
// CHECK: diagnostic: mlirDistTensorAttrGetNumPartialAxes: expected a #dist.tensor
// CHECK: not a dist: <null> -1 -1
static void testTensorDistErrors(MlirContext ctx) {
  printf("testTensorDistErrors\n");
  int64_t shape[] = {2};
  MlirAttribute mesh = mlirDistMeshAttrGet(ctx, 1, shape, 0, NULL, 0, NULL);
  int64_t twice[] = {0, 0};
  printAttr("axis twice", mlirDistTensorAttrGet(mesh, 2, twice, 0, NULL, NULL));
  int64_t dims[] = {-1};
  int64_t axes[] = {0};
  MlirDistReductionKind bad[] = {(MlirDistReductionKind)9};
  printAttr("bad kind", mlirDistTensorAttrGet(mesh, 1, dims, 1, axes, bad));
  printAttr("not a mesh", mlirDistTensorAttrGet(mlirUnitAttrGet(ctx), 1, dims,
                                                0, NULL, NULL));
  MlirAttribute dist = mlirDistTensorAttrGet(mesh, 1, dims, 0, NULL, NULL);
  int64_t d = mlirDistTensorAttrGetDimMapping(dist, 5);
  int64_t p = mlirDistTensorAttrGetPartialAxis(dist, 0);
  int k = (int)mlirDistTensorAttrGetPartialKind(dist, 0);
  printf("out of range: %" PRId64 " %" PRId64 " %d\n", d, p, k);
  MlirAttribute m = mlirDistTensorAttrGetMesh(mesh);
  intptr_t r = mlirDistTensorAttrGetRank(mesh);
  intptr_t n = mlirDistTensorAttrGetNumPartialAxes(mesh);
  printf("not a dist: %s %d %d\n", mlirAttributeIsNull(m) ? "<null>" : "?",
         (int)r, (int)n);
}

// CHECK-LABEL: testFuture
// CHECK: future: !dist.future<tensor<4xf32>>
// CHECK: isa 1 value: tensor<4xf32>
// CHECK: diagnostic: mlirDistFutureTypeGet: expected a ranked tensor type, got 'f32'
// CHECK: of f32: <null>
// CHECK: diagnostic: mlirDistFutureTypeGetValueType: expected a !dist.future, got 'f32'
// CHECK: value of f32: <null>
static void testFuture(MlirContext ctx) {
  printf("testFuture\n");
  int64_t shape[] = {4};
  MlirType tensor = mlirRankedTensorTypeGet(1, shape, mlirF32TypeGet(ctx),
                                            mlirAttributeGetNull());
  MlirType future = mlirDistFutureTypeGet(tensor);
  printType("future", future);
  printf("isa %d ", mlirTypeIsADistFuture(future));
  printType("value", mlirDistFutureTypeGetValueType(future));
  printType("of f32", mlirDistFutureTypeGet(mlirF32TypeGet(ctx)));
  printType("value of f32",
            mlirDistFutureTypeGetValueType(mlirF32TypeGet(ctx)));
}

#define MESH "#dist.mesh<shape = [2], names = [\"mp\"]>"
#define X "tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>"
#define XP "tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>"
#define W "tensor<8x16xf32, #dist.tensor<#mesh, [-1, 0]>>"
#define D "tensor<4x16xf32, #dist.tensor<#mesh, [-1, 0]>>"
static const char *kStep =
    "#mesh = " MESH "\n"
    "func.func @step(%x: " X ", %w: " W ", %d: " D ") -> (" X ", " W ") {\n"
    "  %dx, %dw = dist.matmul_grad %x, %w, %d : " X ", " W ", " D " -> " XP
    ", " W "\n"
    "  %r = dist.allreduce %dx on #mesh axes = [0] reduce = sum : " XP " -> " X
    "\n"
    "  return %r, %dw : " X ", " W "\n"
    "}\n";

static MlirModule parseStep(MlirContext ctx) {
  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kStep));
  if (mlirModuleIsNull(module))
    printf("the step does not parse\n");
  return module;
}

// CHECK-LABEL: testPasses
// The pipeline by name, from a string:
// CHECK: pipeline parsed: 1
// CHECK: ran: 1
// CHECK: dist.matmul %{{.*}} transpose_y
// CHECK-NEXT: dist.allreduce {{.*}} stream = mp
// CHECK-NEXT: dist.matmul {{.*}} transpose_x
// CHECK: dist.wait
// A generated create function, added to a pass manager:
// CHECK: ran overlap: 1 split: 1
// A bad pipeline string reports through the callback:
// CHECK: pipeline error: {{.*}}no-such-pass
// CHECK: pipeline parsed: 0
// CHECK: run pipeline: 1 split: 1
// CHECK: diagnostic: unknown overlap report format 'xml'; expected table or json
// CHECK: failing pass: 0
// CHECK: diagnostic: invalid pass pipeline 'bogus-pass': MLIR Textual PassPipeline Parser:1:1: error: 'bogus-pass' does not refer to a registered pass or pass pipeline
// CHECK: bad pipeline: 0
// CHECK: completed: 1 partial: 1
static void collectToBuffer(MlirStringRef text, void *userData) {
  char *buffer = (char *)userData;
  size_t used = strlen(buffer);
  size_t room = 8191 - used;
  size_t n = text.length < room ? text.length : room;
  memcpy(buffer + used, text.data, n);
  buffer[used + n] = 0;
}

static void testPasses(MlirContext ctx) {
  printf("testPasses\n");
  mlirDistRegisterAllPasses();
  MlirModule module = parseStep(ctx);
  if (mlirModuleIsNull(module))
    return;
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirLogicalResult parsed = mlirParsePassPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreateFromCString("builtin.module(dist-auto-parallel)"),
      printToStdout, NULL);
  printf("pipeline parsed: %d\n", mlirLogicalResultIsSuccess(parsed));
  runPrintAndDestroy(pm, module, "ran");

  module = parseStep(ctx);
  pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager nested = mlirPassManagerGetNestedUnder(
      pm, mlirStringRefCreateFromCString("func.func"));
  mlirOpPassManagerAddOwnedPass(nested, mlirCreateDistDistMatmulGradOverlap());
  MlirLogicalResult ran =
      mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
  static char text[8192];
  text[0] = 0;
  mlirOperationPrint(mlirModuleGetOperation(module), collectToBuffer, text);
  printf("ran overlap: %d split: %d\n", mlirLogicalResultIsSuccess(ran),
         strstr(text, "matmul_grad") == NULL);
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);

  pm = mlirPassManagerCreate(ctx);
  printf("pipeline error: ");
  parsed = mlirParsePassPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreateFromCString("builtin.module(no-such-pass)"),
      printToStdout, NULL);
  printf("\npipeline parsed: %d\n", mlirLogicalResultIsSuccess(parsed));
  mlirPassManagerDestroy(pm);

  /* As dist-opt: function passes nest implicitly. */
  module = parseStep(ctx);
  MlirLogicalResult r = mlirDistRunPassPipeline(
      module,
      mlirStringRefCreateFromCString("dist-matmul-grad-overlap,canonicalize"));
  text[0] = 0;
  mlirOperationPrint(mlirModuleGetOperation(module), collectToBuffer, text);
  printf("run pipeline: %d split: %d\n", mlirLogicalResultIsSuccess(r),
         strstr(text, "matmul_grad") == NULL);
  r = mlirDistRunPassPipeline(module, mlirStringRefCreateFromCString(
                                          "dist-overlap-report{format=xml}"));
  printf("failing pass: %d\n", mlirLogicalResultIsSuccess(r));
  r = mlirDistRunPassPipeline(module,
                              mlirStringRefCreateFromCString("bogus-pass"));
  printf("bad pipeline: %d\n", mlirLogicalResultIsSuccess(r));
  mlirModuleDestroy(module);

  /* Completion of a function annotated on its arguments only: the
     row-parallel product stays partial, and the check passes after it. */
  const char *marked =
      "#mesh = #dist.mesh<shape = [2]>\n"
      "func.func @f(%x: tensor<8x8xf32, #dist.tensor<#mesh, [-1, 0]>>,\n"
      "             %w: tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>)\n"
      "    -> tensor<8x8xf32> attributes {dist.complete} {\n"
      "  %y = dist.matmul %x, %w : tensor<8x8xf32, #dist.tensor<#mesh, [-1, "
      "0]>>, tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>> -> "
      "tensor<8x8xf32>\n"
      "  return %y : tensor<8x8xf32>\n"
      "}\n";
  module = mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(marked));
  r = mlirDistRunPassPipeline(module,
                              mlirStringRefCreateFromCString(
                                  "dist-complete,dist-verify-distributions"));
  text[0] = 0;
  mlirOperationPrint(mlirModuleGetOperation(module), collectToBuffer, text);
  printf("completed: %d partial: %d\n", mlirLogicalResultIsSuccess(r),
         strstr(text, "-> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], "
                      "partial = [0 : sum]>>") != NULL);
  mlirModuleDestroy(module);
}

// A C program that registers dist through its dialect handle alone (and
// the upstream dialects it uses) gets the upstream ops' distribution rules
// too: the handle registers what mlirDistRegisterDialects does.
// CHECK-LABEL: testDialectHandle
// CHECK: checked through the handle: 1
// CHECK: loaded through the handle: 1
static void testDialectHandle(void) {
  printf("testDialectHandle\n");
  const char *program =
      "#mesh = #dist.mesh<shape = [2]>\n"
      "func.func @c(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>)\n"
      "    -> tensor<32xf32, #dist.tensor<#mesh, [0]>> {\n"
      "  %y = tensor.collapse_shape %x [[0, 1]]\n"
      "      : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>\n"
      "      into tensor<32xf32, #dist.tensor<#mesh, [0]>>\n"
      "  return %y : tensor<32xf32, #dist.tensor<#mesh, [0]>>\n"
      "}\n";
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__dist__(), registry);
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__func__(), registry);
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__tensor__(), registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirContextAttachDiagnosticHandler(ctx, printDiagnostic, NULL, NULL);
  mlirDistRegisterAllPasses();
  MlirModule module =
      mlirDistModuleCreateParse(ctx, mlirStringRefCreateFromCString(program),
                                mlirStringRefCreateFromCString("handle.mlir"));
  MlirLogicalResult r = mlirDistRunPassPipeline(
      module, mlirStringRefCreateFromCString("dist-verify-distributions"));
  printf("checked through the handle: %d\n", mlirLogicalResultIsSuccess(r));
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);

  /* Loading the dialect into a context that has no registry for it. */
  ctx = mlirContextCreate();
  mlirContextAttachDiagnosticHandler(ctx, printDiagnostic, NULL, NULL);
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__dist__(), ctx);
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__func__(), ctx);
  module =
      mlirDistModuleCreateParse(ctx, mlirStringRefCreateFromCString(program),
                                mlirStringRefCreateFromCString("handle.mlir"));
  r = mlirDistRunPassPipeline(
      module, mlirStringRefCreateFromCString("dist-verify-distributions"));
  printf("loaded through the handle: %d\n", mlirLogicalResultIsSuccess(r));
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
}

// The distribution check from C: the call under a condition on
// the coordinate fails with its located error and the call chain; the same
// program without the condition passes.
// CHECK-LABEL: testVerifyDistributions
// CHECK: diagnostic: 'func.call' op calls a function that issues collectives over mesh axes [0], under a condition that differs along mesh axis 0 (mp)
// CHECK: checked divergent: 0
// CHECK-NOT: diagnostic
// CHECK: checked straight: 1
static void testVerifyDistributions(MlirContext ctx) {
  printf("testVerifyDistributions\n");
  const char *head =
      "#mesh = #dist.mesh<shape = [2], names = [\"mp\"]>\n"
      "!p = tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>\n"
      "!r = tensor<4xf32, #dist.tensor<#mesh, [-1]>>\n"
      "func.func private @sync(%p: !p) -> !r {\n"
      "  %r = dist.allreduce %p on #mesh axes = [0] reduce = sum : !p -> !r\n"
      "  return %r : !r\n"
      "}\n";
  const char *divergent = "func.func @f(%p: !p) {\n"
                          "  %c = dist.process_coord #mesh axis = 0\n"
                          "  %c0 = arith.constant 0 : index\n"
                          "  %first = arith.cmpi eq, %c, %c0 : index\n"
                          "  scf.if %first {\n"
                          "    %r = func.call @sync(%p) : (!p) -> !r\n"
                          "  }\n"
                          "  return\n"
                          "}\n";
  const char *straight = "func.func @f(%p: !p) -> !r {\n"
                         "  %r = func.call @sync(%p) : (!p) -> !r\n"
                         "  return %r : !r\n"
                         "}\n";
  const char *bodies[] = {divergent, straight};
  const char *labels[] = {"divergent", "straight"};
  for (int i = 0; i < 2; ++i) {
    char program[2048];
    snprintf(program, sizeof(program), "%s%s", head, bodies[i]);
    MlirModule module =
        mlirDistModuleCreateParse(ctx, mlirStringRefCreateFromCString(program),
                                  mlirStringRefCreateFromCString("check.mlir"));
    if (mlirModuleIsNull(module)) {
      printf("parse failed\n");
      return;
    }
    MlirLogicalResult r = mlirDistVerifyDistributions(module);
    printf("checked %s: %d\n", labels[i], mlirLogicalResultIsSuccess(r));
    mlirModuleDestroy(module);
  }
}

// CHECK-LABEL: testConversionPasses
// CHECK: lowered: 1
// CHECK: mpi.allreduce
// CHECK-NOT: dist.
// CHECK: done
static void testConversionPasses(MlirContext ctx) {
  printf("testConversionPasses\n");
  MlirModule module = parseStep(ctx);
  if (mlirModuleIsNull(module))
    return;
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  mlirOpPassManagerAddOwnedPass(opm,
                                mlirCreateDistConversionConvertDistToLinalg());
  mlirOpPassManagerAddOwnedPass(opm,
                                mlirCreateDistConversionConvertDistToMPI());
  runPrintAndDestroy(pm, module, "lowered");
  printf("done\n");
}

/* `dist-capi-test parse FILE`: parses FILE (text or bytecode) as an
 * embedder would, from bytes in memory, and says how many functions it has;
 * test/Tools/bytecode.test drives it. */
static int parseFile(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    printf("cannot open %s\n", path);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *data = malloc(size > 0 ? (size_t)size : 1);
  size_t read = fread(data, 1, (size_t)size, f);
  fclose(f);
  MlirContext ctx = createContext();
  MlirModule module =
      mlirDistModuleCreateParse(ctx, mlirStringRefCreate(data, read),
                                mlirStringRefCreateFromCString(path));
  free(data);
  int status = 1;
  if (!mlirModuleIsNull(module)) {
    int functions = 0;
    for (MlirOperation op =
             mlirBlockGetFirstOperation(mlirModuleGetBody(module));
         !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
      ++functions;
    printf("parsed %ld bytes: %d top-level ops\n", size, functions);
    mlirModuleDestroy(module);
    status = 0;
  } else {
    printf("parse failed\n");
  }
  mlirContextDestroy(ctx);
  return status;
}

// CHECK-LABEL: testRedistribution
// [0, 1] -> [1, 0] on [2, 4] for 8x16 f32: never the whole tensor.
// CHECK: step dist.all_gather axis 0 sum 64 B: #dist.tensor<#dist.mesh<shape = [2, 4]>, [-1, 1]>
// CHECK-NEXT: step dist.all_to_all axis 1 sum 96 B: #dist.tensor<#dist.mesh<shape = [2, 4]>, [1, -1]>
// CHECK-NEXT: step dist.all_slice axis 0 sum 0 B: #dist.tensor<#dist.mesh<shape = [2, 4]>, [1, 0]>
// CHECK-NEXT: planned: 1 steps 3
// CHECK-NEXT: to itself: 1 steps 0
// CHECK-NEXT: diagnostic: mlirDistPlanReshard: 'tensor<4x4xf32, #dist.tensor<#dist.mesh<shape = [2, 4]>, [0, 1]>>' and 'tensor<8x8xf32, #dist.tensor<#dist.mesh<shape = [2, 4]>, [-1, -1]>>' hold different global tensors
// CHECK-NEXT: other global: 0
// CHECK-NEXT: diagnostic: mlirDistPlanReshard: expected statically shaped #dist.tensor types, got 'tensor<8x16xf32>' and
// CHECK-NEXT: plain: 0
// CHECK-NEXT: step dist.allreduce axis 0 (axes 0 1) sum 896 B: #dist.tensor<#dist.mesh<shape = [2, 4]>, [-1, -1]>
// CHECK-NEXT: partial over both: 1 steps 1
// The transpose of an all-gather, on a partial-sum cotangent:
// CHECK: %[[T:.*]] = dist.reduce_scatter %arg1 on {{.*}} axes = [1] reduce = sum
// CHECK-NEXT: return %[[T]]
// CHECK-NEXT: }
// CHECK-NEXT: transposed: 1
// CHECK-NEXT: diagnostic: mlirDistBuildTranspose: 'func.return' is not a redistribution
// CHECK-NEXT: of a return: 0
// CHECK-NEXT: diagnostic: 'dist.all_gather' op requires attribute 'axes'
// CHECK-NEXT: diagnostic: mlirDistBuildTranspose: 'dist.all_gather' does not verify
// CHECK-NEXT: of a bare op: 0
static void countStep(const MlirDistReshardStep *step, void *userData) {
  ++*(int *)userData;
  printf("step %.*s axis %" PRId64, (int)step->opName.length, step->opName.data,
         step->axis);
  if (step->numAxes != 1) {
    printf(" (axes");
    for (intptr_t i = 0; i < step->numAxes; ++i)
      printf(" %" PRId64, step->axes[i]);
    printf(")");
  }
  printf(" %.*s %" PRId64 " B: ",
         (int)mlirDistReductionKindGetName(step->reduction).length,
         mlirDistReductionKindGetName(step->reduction).data, step->bytes);
  mlirAttributePrint(step->to, printToStdout, NULL);
  printf("\n");
}

static void testRedistribution(MlirContext ctx) {
  printf("testRedistribution\n");
  int64_t meshShape[] = {2, 4};
  MlirAttribute mesh = mlirDistMeshAttrGet(ctx, 2, meshShape, 0, NULL, 0, NULL);
  int64_t rowsCols[] = {0, 1}, colsRows[] = {1, 0}, none[] = {-1, -1};
  MlirType f32 = mlirF32TypeGet(ctx);
  int64_t local[] = {4, 4}, swapped[] = {2, 8}, global[] = {8, 16},
          other[] = {8, 8};
  MlirType from = mlirRankedTensorTypeGet(
      2, local, f32, mlirDistTensorAttrGet(mesh, 2, rowsCols, 0, NULL, NULL));
  MlirType to = mlirRankedTensorTypeGet(
      2, swapped, f32, mlirDistTensorAttrGet(mesh, 2, colsRows, 0, NULL, NULL));
  int steps = 0;
  MlirLogicalResult planned = mlirDistPlanReshard(from, to, countStep, &steps);
  printf("planned: %d steps %d\n", mlirLogicalResultIsSuccess(planned), steps);
  steps = 0;
  planned = mlirDistPlanReshard(from, from, countStep, &steps);
  printf("to itself: %d steps %d\n", mlirLogicalResultIsSuccess(planned),
         steps);
  MlirType whole = mlirRankedTensorTypeGet(
      2, other, f32, mlirDistTensorAttrGet(mesh, 2, none, 0, NULL, NULL));
  printf("other global: %d\n", mlirLogicalResultIsSuccess(mlirDistPlanReshard(
                                   from, whole, countStep, &steps)));
  MlirType plain =
      mlirRankedTensorTypeGet(2, global, f32, mlirAttributeGetNull());
  printf("plain: %d\n", mlirLogicalResultIsSuccess(mlirDistPlanReshard(
                            plain, whole, countStep, &steps)));

  /* A sum pending over both axes: one allreduce over the whole mesh. */
  int64_t partialAxes[] = {0, 1};
  MlirDistReductionKind sums[] = {MlirDistReductionSum, MlirDistReductionSum};
  MlirType partial = mlirRankedTensorTypeGet(
      2, global, f32,
      mlirDistTensorAttrGet(mesh, 2, none, 2, partialAxes, sums));
  MlirType replicated = mlirRankedTensorTypeGet(
      2, global, f32, mlirDistTensorAttrGet(mesh, 2, none, 0, NULL, NULL));
  steps = 0;
  planned = mlirDistPlanReshard(partial, replicated, countStep, &steps);
  printf("partial over both: %d steps %d\n",
         mlirLogicalResultIsSuccess(planned), steps);

  const char *source =
      "#mesh = #dist.mesh<shape = [2, 4]>\n"
      "func.func @backward(%x: tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>,\n"
      "    %g: tensor<8x16xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : "
      "sum]>>)\n"
      "    -> tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>> {\n"
      "  %y = dist.all_gather %x on #mesh axes = [1]\n"
      "      : tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>\n"
      "      -> tensor<8x16xf32, #dist.tensor<#mesh, [0, -1]>>\n"
      "  return %x : tensor<8x4xf32, #dist.tensor<#mesh, [0, 1]>>\n"
      "}\n";
  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(source));
  if (mlirModuleIsNull(module))
    return;
  MlirOperation func = mlirBlockGetFirstOperation(mlirModuleGetBody(module));
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  MlirOperation gather = mlirBlockGetFirstOperation(body);
  MlirOperation ret = mlirOperationGetNextInBlock(gather);
  MlirValue t =
      mlirDistBuildTranspose(gather, mlirBlockGetArgument(body, 1), ret);
  if (!mlirValueIsNull(t))
    mlirOperationSetOperand(ret, 0, t);
  mlirOperationPrint(func, printToStdout, NULL);
  printf("\ntransposed: %d\n", !mlirValueIsNull(t));
  t = mlirDistBuildTranspose(ret, mlirBlockGetArgument(body, 1), ret);
  printf("of a return: %d\n", !mlirValueIsNull(t));
  /* An op made generically without its attributes: refused, not read. */
  MlirOperationState state =
      mlirOperationStateGet(mlirStringRefCreateFromCString("dist.all_gather"),
                            mlirLocationUnknownGet(ctx));
  MlirValue x = mlirBlockGetArgument(body, 0);
  mlirOperationStateAddOperands(&state, 1, &x);
  MlirType resultType = mlirValueGetType(mlirOperationGetResult(gather, 0));
  mlirOperationStateAddResults(&state, 1, &resultType);
  MlirOperation bare = mlirOperationCreate(&state);
  mlirBlockInsertOwnedOperationBefore(body, ret, bare);
  t = mlirDistBuildTranspose(bare, mlirBlockGetArgument(body, 1), ret);
  printf("of a bare op: %d\n", !mlirValueIsNull(t));
  mlirModuleDestroy(module);
}

// CHECK-LABEL: testMatmulShape
// CHECK: rank 3: 2 3 5
// CHECK: transpose_x: rank 2: 3 5
// CHECK: diagnostic: mlirDistMatmulResultShape: contraction sizes differ: x has 5, y has 4
// CHECK: mismatch: -1
// CHECK: diagnostic: mlirDistMatmulResultShape: expected two ranked tensor types
// CHECK: not tensors: -1
// CHECK: null: -1
static void testMatmulShape(MlirContext ctx) {
  printf("testMatmulShape\n");
  MlirType x = mlirTypeParseGet(
      ctx, mlirStringRefCreateFromCString("tensor<2x3x4xf32>"));
  MlirType y =
      mlirTypeParseGet(ctx, mlirStringRefCreateFromCString("tensor<4x5xf32>"));
  MlirType xt =
      mlirTypeParseGet(ctx, mlirStringRefCreateFromCString("tensor<4x3xf32>"));
  int64_t shape[3] = {0, 0, 0};
  intptr_t rank = mlirDistMatmulResultShape(x, y, false, false, shape, 3);
  printf("rank %d: %d %d %d\n", (int)rank, (int)shape[0], (int)shape[1],
         (int)shape[2]);
  rank = mlirDistMatmulResultShape(xt, y, true, false, shape, 3);
  printf("transpose_x: rank %d: %d %d\n", (int)rank, (int)shape[0],
         (int)shape[1]);
  printf("mismatch: %d\n",
         (int)mlirDistMatmulResultShape(y, y, false, false, shape, 3));
  printf("not tensors: %d\n",
         (int)mlirDistMatmulResultShape(mlirF32TypeGet(ctx), y, false, false,
                                        shape, 3));
  printf("null: %d\n",
         (int)mlirDistMatmulResultShape((MlirType){NULL}, (MlirType){NULL},
                                        false, false, shape, 3));
}

// The one trace drawer: an SVG picture of a trace; the reason, and no
// picture, for a text that is not one.
// CHECK-LABEL: testRenderTraceSvg
// CHECK: <svg xmlns="http://www.w3.org/2000/svg"
// CHECK: <g class="process" data-name="rank 0">
// CHECK: <rect {{.*}} fill="#4c8bd6" {{.*}}class="compute"><title>c: 5.000 us at 0.000 us</title></rect>
// CHECK: </svg>
// CHECK-NEXT: drawn: 1
// CHECK-NEXT: not a dist trace: no 'traceEvents' array
// CHECK-NEXT: drawn: 0
// CHECK-NEXT: not a dist trace: {{.*}}
// CHECK-NEXT: drawn: 0
static void testRenderTraceSvg(void) {
  printf("testRenderTraceSvg\n");
  const char *interval = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": "
                         "\"c\", \"cat\": \"compute\", \"pid\": 0, "
                         "\"tid\": 0, \"ts\": 0, \"dur\": 5}]}";
  const char *traces[] = {interval, "{\"events\": []}", "not json"};
  for (int i = 0; i < 3; ++i) {
    MlirLogicalResult drawn = mlirDistRenderTraceSvg(
        mlirStringRefCreateFromCString(traces[i]), printToStdout, NULL);
    // The picture ends its last line; the reason does not.
    bool ok = mlirLogicalResultIsSuccess(drawn);
    printf("%sdrawn: %d\n", ok ? "" : "\n", (int)ok);
  }
}

int main(int argc, char **argv) {
  /* Unbuffered, so that a crash still shows how far the test came. */
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc == 3 && strcmp(argv[1], "parse") == 0)
    return parseFile(argv[2]);
  MlirContext ctx = createContext();
  testDialect(ctx);
  testReductionKinds();
  testMesh(ctx);
  testMeshErrors(ctx);
  testTensorDist(ctx);
  testTensorDistErrors(ctx);
  testFuture(ctx);
  testPasses(ctx);
  testDialectHandle();
  testVerifyDistributions(ctx);
  testConversionPasses(ctx);
  testRedistribution(ctx);
  testMatmulShape(ctx);
  testRenderTraceSvg();
  mlirContextDestroy(ctx);
  return 0;
}
