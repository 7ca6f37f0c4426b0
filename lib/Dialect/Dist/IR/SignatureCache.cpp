//===- SignatureCache.cpp - checks remembered by op signature -------------===//

#include "dist/Dialect/Dist/IR/SignatureCache.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"

#include <cstring>

using namespace mlir;
using namespace mlir::dist;

bool SignatureCache::contains(ArrayRef<const void *> key) {
  llvm::sys::SmartScopedReader<true> lock(mutex);
  return succeeded.contains(key);
}

void SignatureCache::insert(ArrayRef<const void *> key) {
  llvm::sys::SmartScopedWriter<true> lock(mutex);
  // A bound on what a program of ever new signatures can make it keep.
  if (succeeded.size() >= (1u << 20)) {
    succeeded.clear();
    storage.Reset();
  }
  if (succeeded.contains(key))
    return;
  const void **copy = storage.Allocate<const void *>(key.size());
  llvm::copy(key, copy);
  succeeded.insert(ArrayRef<const void *>(copy, key.size()));
}

SmallVector<const void *, 16>
dist::opSignature(Operation *op, SignatureKind kind, bool withProperties) {
  auto word = [](uintptr_t v) { return reinterpret_cast<const void *>(v); };
  SmallVector<const void *, 16> key;
  key.push_back(word(static_cast<uintptr_t>(kind)));
  key.push_back(op->getName().getAsOpaquePointer());
  key.push_back(word(op->getNumOperands()));
  for (Type t : op->getOperandTypes())
    key.push_back(t.getAsOpaquePointer());
  for (Type t : op->getResultTypes())
    key.push_back(t.getAsOpaquePointer());
  if (!withProperties)
    return key;
  // The bytes as words, the last one zero-padded. Padding inside the
  // properties may differ between equal ones: a missed hit, never a false
  // one.
  int size = op->getPropertiesStorageSize();
  const char *bytes = op->getPropertiesStorage().as<const char *>();
  key.push_back(word(size));
  for (int at = 0; at < size; at += sizeof(uintptr_t)) {
    uintptr_t w = 0;
    std::memcpy(&w, bytes + at, std::min<size_t>(sizeof(uintptr_t), size - at));
    key.push_back(word(w));
  }
  return key;
}

LogicalResult
dist::checkOncePerSignature(Operation *op,
                            llvm::function_ref<LogicalResult()> check) {
  auto *dialect = dyn_cast_or_null<DistDialect>(op->getDialect());
  if (!dialect)
    return check();
  SmallVector<const void *, 16> key =
      opSignature(op, SignatureKind::OpVerifier, /*withProperties=*/true);
  SignatureCache &cache = dialect->getSignatureCache();
  if (cache.contains(key))
    return success();
  if (failed(check()))
    return failure();
  cache.insert(key);
  return success();
}
