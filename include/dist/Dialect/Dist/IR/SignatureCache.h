//===- SignatureCache.h - checks remembered by op signature -----*- C++ -*-===//
//
// The verifier runs after every pass, and a training step repeats a few op
// signatures (the same types and attributes) many times: the checks that
// read nothing but an op's signature (its shapes, its distribution rule)
// succeed once per signature and are looked up after that. A check that
// fails is never remembered, so its diagnostic is always emitted.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_SIGNATURECACHE_H
#define DIST_DIALECT_DIST_IR_SIGNATURECACHE_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/RWMutex.h"

namespace mlir {
namespace dist {

/// Signatures (opaque words: an op's name, types and attributes) whose
/// checks succeeded. Owned by the dist dialect; thread-safe.
class SignatureCache {
public:
  bool contains(ArrayRef<const void *> key);
  void insert(ArrayRef<const void *> key);

private:
  llvm::sys::SmartRWMutex<true> mutex;
  llvm::BumpPtrAllocator storage;
  llvm::DenseSet<ArrayRef<const void *>> succeeded;
};

/// What kind of check a signature is for, its first word: one op has a
/// signature per kind.
enum class SignatureKind : uintptr_t { OpVerifier = 1, DistributionRule = 2 };

/// `op`'s signature for `kind`: its name and its operand and result types
/// (with their counts apart); with `withProperties`, its properties' bytes
/// too (dist ops keep their attributes there, uniqued, so equal bytes are
/// equal attributes).
SmallVector<const void *, 16> opSignature(Operation *op, SignatureKind kind,
                                          bool withProperties);

/// Runs `check` unless it already succeeded on an op of `op`'s signature;
/// remembers a success. `check` must read nothing but `op`'s types and
/// properties.
LogicalResult checkOncePerSignature(Operation *op,
                                    llvm::function_ref<LogicalResult()> check);

} // namespace dist
} // namespace mlir

#endif // DIST_DIALECT_DIST_IR_SIGNATURECACHE_H
