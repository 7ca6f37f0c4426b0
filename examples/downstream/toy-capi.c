/*===- toy-capi.c - a C program on dist's C API ---------------------------===*\
|* Builds a mesh and asks where a process sits, then parses a step and runs  *|
|* the auto-parallel pipeline on it.                                          *|
\*===----------------------------------------------------------------------===*/

#include "dist-c/Dist.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <inttypes.h>
#include <stdio.h>

static void print(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: toy-capi program.mlir\n");
    return 2;
  }
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirDistRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirDistRegisterAllPasses();

  int64_t shape[] = {2, 4};
  MlirAttribute mesh = mlirDistMeshAttrGet(ctx, 2, shape, 0, NULL, 0, NULL);
  int64_t coord[2];
  mlirDistMeshAttrGetProcessCoord(mesh, 6, coord);
  int64_t axes[] = {1};
  int64_t group[4];
  int64_t n = mlirDistMeshAttrGetProcessGroup(mesh, 6, 1, axes, group);
  printf("process 6 at (%" PRId64 ", %" PRId64 "), %" PRId64
         " in its mp group, first %" PRId64 "\n",
         coord[0], coord[1], n, group[0]);

  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  static char text[1 << 16];
  size_t size = fread(text, 1, sizeof(text) - 1, f);
  fclose(f);
  text[size] = 0;
  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreate(text, size));
  if (mlirModuleIsNull(module))
    return 1;
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  if (mlirLogicalResultIsFailure(mlirParsePassPipeline(
          mlirPassManagerGetAsOpPassManager(pm),
          mlirStringRefCreateFromCString("builtin.module(dist-auto-parallel)"),
          print, NULL)) ||
      mlirLogicalResultIsFailure(
          mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module))))
    return 1;
  mlirOperationPrint(mlirModuleGetOperation(module), print, NULL);
  printf("\n");
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return 0;
}
