//===- CacheReferences.h - The tfm.kv_cache ops naming each cache -*- C++ -*-===//
//
// Shared by the passes that change a cache's type (its layout, whether it
// slides): a cache_decl and every reference to it change together.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TRANSFORMS_CACHEREFERENCES_H
#define TFM_TRANSFORMS_CACHEREFERENCES_H

#include "tfm/Dialect/TfmOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

namespace tfm {

/// The tfm.kv_cache ops of `module`, by the cache they name.
llvm::DenseMap<mlir::StringAttr, llvm::SmallVector<KvCacheOp>>
cacheReferences(mlir::ModuleOp module);

/// Gives `decl` and its references `refs` the type `type`.
void setCacheType(CacheDeclOp decl, llvm::ArrayRef<KvCacheOp> refs, mlir::MemRefType type);

/// Whether a reference is passed to a launch: the IR was outlined before,
/// and kernel signatures fix the cache's type.
bool passedToLaunch(llvm::ArrayRef<KvCacheOp> refs);

} // namespace tfm

#endif // TFM_TRANSFORMS_CACHEREFERENCES_H
