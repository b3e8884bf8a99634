//===- CacheReferences.cpp - The tfm.kv_cache ops naming each cache -------===//
#include "CacheReferences.h"

using namespace mlir;

namespace tfm {

llvm::DenseMap<StringAttr, SmallVector<KvCacheOp>> cacheReferences(ModuleOp module) {
  llvm::DenseMap<StringAttr, SmallVector<KvCacheOp>> refs;
  module.walk([&](KvCacheOp ref) { refs[ref.getCacheAttr().getAttr()].push_back(ref); });
  return refs;
}

void setCacheType(CacheDeclOp decl, llvm::ArrayRef<KvCacheOp> refs, MemRefType type) {
  decl.setType(type);
  for (KvCacheOp ref : refs)
    ref.getResult().setType(type);
}

bool passedToLaunch(llvm::ArrayRef<KvCacheOp> refs) {
  return llvm::any_of(refs, [](KvCacheOp ref) {
    return llvm::any_of(ref->getUsers(), [](Operation *user) { return isa<LaunchOp>(user); });
  });
}

} // namespace tfm
