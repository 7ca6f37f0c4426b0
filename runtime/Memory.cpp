//===- Memory.cpp - keep freed buffers for the next step ------------------===//
//
// A lowered step allocates its buffers and frees them at its end, and the
// next step asks for the same sizes again. glibc's malloc serves large
// requests with fresh mmaps and trims its heap on free, so every step's
// buffers were new pages the kernel faulted in and zeroed: 9,000 page
// faults per process and step of the runtime benchmark's large MLP (with
// its buffers freed). Served from the heap and never trimmed, the second
// step faults none.
//
//===----------------------------------------------------------------------===//

#include "RuntimeSupport.h"

#include <malloc.h>

void dist_runtime::keepFreedMemory() {
  static const bool done = [] {
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    return true;
  }();
  (void)done;
}

namespace {
/// For libdist_runtime.so, loaded into mlir-runner; a native executable's
/// main calls keepFreedMemory itself (a static archive's constructor would
/// not be linked).
[[maybe_unused]] __attribute__((constructor)) void atLoad() {
  dist_runtime::keepFreedMemory();
}
} // namespace
