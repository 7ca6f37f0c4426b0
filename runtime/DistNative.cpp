//===- DistNative.cpp - what a native dist executable needs besides MPI
//----===//
//
// dist-compile links a lowered program into an executable that must run on
// a cluster without LLVM. Under mlir-runner, MLIR's runner-utils libraries
// provide printMemref* and memrefCopy; here they are provided from MLIR's
// header-only printer (so the output is byte for byte what the JIT prints)
// and a strided copy of our own. `main` calls the program's entry, which
// dist-compile renames to dist_entry in the object file.
//
//===----------------------------------------------------------------------===//

#include "RuntimeSupport.h"

#include "mlir/ExecutionEngine/RunnerUtils.h"

#include <cstdint>
#include <cstring>

extern "C" {

// Each printer in both forms: the C-interface one, and the unwrapped one a
// program gets when it declares the printer without llvm.emit_c_interface
// (as FunctionBuilder.print does).
#define DIST_PRINTER(SUFFIX, TYPE)                                             \
  void _mlir_ciface_printMemref##SUFFIX(UnrankedMemRefType<TYPE> *m) {         \
    impl::printMemRef(*m);                                                     \
  }                                                                            \
  void printMemref##SUFFIX(int64_t rank, void *descriptor) {                   \
    UnrankedMemRefType<TYPE> m = {rank, descriptor};                           \
    _mlir_ciface_printMemref##SUFFIX(&m);                                      \
  }
DIST_PRINTER(F32, float)
DIST_PRINTER(F64, double)
DIST_PRINTER(I32, int32_t)
DIST_PRINTER(I64, int64_t)
#undef DIST_PRINTER

/// The copy that bufferization's memref.copy lowers to: `src` into `dst`,
/// both of `elemSize`-byte elements, same shape, any strides.
void memrefCopy(int64_t elemSize, UnrankedMemRefType<char> *srcArg,
                UnrankedMemRefType<char> *dstArg) {
  DynamicMemRefType<char> src(*srcArg), dst(*dstArg);
  int64_t rank = src.rank;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d)
    count *= src.sizes[d];
  if (count == 0)
    return;
  char *srcBase = src.data + src.offset * elemSize;
  char *dstBase = dst.data + dst.offset * elemSize;
  // Odometer over the index space; each step adds one element's strides.
  int64_t *index = static_cast<int64_t *>(alloca(sizeof(int64_t) * (rank + 1)));
  std::memset(index, 0, sizeof(int64_t) * (rank + 1));
  int64_t srcOffset = 0, dstOffset = 0;
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(dstBase + dstOffset * elemSize, srcBase + srcOffset * elemSize,
                elemSize);
    for (int64_t d = rank - 1; d >= 0; --d) {
      srcOffset += src.strides[d];
      dstOffset += dst.strides[d];
      if (++index[d] < src.sizes[d])
        break;
      srcOffset -= src.strides[d] * src.sizes[d];
      dstOffset -= dst.strides[d] * dst.sizes[d];
      index[d] = 0;
    }
  }
}

void dist_entry(void);

} // extern "C"

int main() {
  dist_runtime::keepFreedMemory();
  dist_entry();
  return 0;
}
