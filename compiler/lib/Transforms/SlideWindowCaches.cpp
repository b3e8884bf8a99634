//===- SlideWindowCaches.cpp - window-sized caches for windowed layers ----===//
#include "CacheReferences.h"
#include "tfm/Dialect/TfmOps.h"
#include "tfm/Transforms/Passes.h"
#include "tfm/common/Targets.h"

namespace tfm {
#define GEN_PASS_DEF_TFMSLIDEWINDOWCACHES
#include "tfm/Transforms/Passes.h.inc"
} // namespace tfm

using namespace mlir;

namespace tfm {
namespace {

/// The window every reader of a cache reads it with: the widest window of
/// the attention ops it feeds, none when any reads it whole or it is passed
/// to anything but attention and stores.
std::optional<int64_t> readersWindow(ArrayRef<KvCacheOp> refs) {
  int64_t widest = 0;
  for (KvCacheOp ref : refs)
    for (Operation *user : ref->getUsers()) {
      if (isa<KvStoreOp>(user))
        continue;
      auto attention = dyn_cast<AttentionOp>(user);
      if (!attention || attention.getWindow() == 0)
        return std::nullopt;
      widest = std::max(widest, static_cast<int64_t>(attention.getWindow()));
    }
  if (widest == 0)
    return std::nullopt;
  return widest;
}

struct SlideWindowCachesPass : public impl::TfmSlideWindowCachesBase<SlideWindowCachesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A GPU library's caches live on the device, where moving their rows
    // would be a device copy of overlapping ranges: they hold every position.
    auto target = module->getAttrOfType<StringAttr>(attrs::kTarget);
    if (target && targetDevice(target.getValue()) != TargetDevice::Cpu)
      return;
    auto chunk = module->getAttrOfType<IntegerAttr>(attrs::kPrefillChunk);
    if (!chunk)
      return;
    auto refs = cacheReferences(module);
    Builder b(&getContext());
    for (auto decl : module.getOps<CacheDeclOp>()) {
      auto type = cast<MemRefType>(decl.getType());
      SmallVector<KvCacheOp> &uses = refs[decl.getSymNameAttr()];
      if (isSlidingCache(type) || passedToLaunch(uses))
        continue;
      std::optional<int64_t> window = readersWindow(uses);
      if (!window)
        continue;
      // A call of up to a chunk's rows at position pos reads from pos -
      // window + 1 and writes to pos + rows - 1.
      int64_t rows = *window - 1 + chunk.getInt();
      if (rows >= type.getDimSize(0))
        continue;
      setCacheType(decl, uses,
                   cacheBufferType(type.getElementType(), rows, type.getDimSize(1),
                                   isTransposedCache(type), /*sliding=*/true));
      decl.setWindowAttr(b.getI64IntegerAttr(*window));
    }
  }
};

} // namespace
} // namespace tfm
