//===- ChooseCacheLayouts.cpp - each cache laid out for its reader --------===//
#include "CacheReferences.h"
#include "tfm/Dialect/TfmOps.h"
#include "tfm/Transforms/Passes.h"
#include "tfm/common/Targets.h"

#include "mlir/IR/SymbolTable.h"

namespace tfm {
#define GEN_PASS_DEF_TFMCHOOSECACHELAYOUTS
#include "tfm/Transforms/Passes.h.inc"
} // namespace tfm

using namespace mlir;

namespace tfm {
namespace {

struct ChooseCacheLayoutsPass : public impl::TfmChooseCacheLayoutsBase<ChooseCacheLayoutsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto target = module->getAttrOfType<StringAttr>(attrs::kTarget);
    bool gpu = target && targetDevice(target.getValue()) != TargetDevice::Cpu;
    auto refs = cacheReferences(module);
    for (auto decl : module.getOps<CacheDeclOp>()) {
      SmallVector<KvCacheOp> &uses = refs[decl.getSymNameAttr()];
      bool readAsKeys = false;
      for (KvCacheOp ref : uses)
        for (OpOperand &use : ref->getUses())
          if (auto attention = dyn_cast<AttentionOp>(use.getOwner()))
            readAsKeys |= use.getOperandNumber() == attention.getKeyCacheMutable().getOperandNumber();
      // Kernel signatures already fix an outlined cache's layout; any other
      // cache keeps the one it was declared with (rows from the builder, or
      // a hand-written choice). A GPU's keys stay in rows: the window a call
      // writes then starts on a row, which OpenCL's sub-buffers need
      // aligned, where a transposed cache's starts at any element.
      if (passedToLaunch(uses) || !readAsKeys || gpu)
        continue;
      auto type = cast<MemRefType>(decl.getType());
      MemRefType chosen = cacheBufferType(type.getElementType(), type.getDimSize(0),
                                          type.getDimSize(1), /*transposed=*/true,
                                          isSlidingCache(type));
      if (chosen != type)
        setCacheType(decl, uses, chosen);
    }
  }
};

} // namespace
} // namespace tfm
