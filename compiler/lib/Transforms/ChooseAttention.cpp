//===- ChooseAttention.cpp - each attention op's algorithm ----------------===//
#include "tfm/Dialect/TfmOps.h"
#include "tfm/Transforms/Passes.h"
#include "tfm/common/Targets.h"

namespace tfm {
#define GEN_PASS_DEF_TFMCHOOSEATTENTION
#include "tfm/Transforms/Passes.h.inc"
} // namespace tfm

using namespace mlir;

namespace tfm {
namespace {

/// The default: one softmax over all keys (key_tile 0). FlashAttention's
/// tiles of 64, measured against it on a Zen 4 with 2 threads (the 110M
/// Llama, tfm-bench --depth 0,1024,4096): prefill 1044 against 877 tok/s at
/// depth 0, but 583 against 592 at 1024 and 215 against 248 at 4096; its
/// flash-decoding 68, 47 and 29 tok/s against 98, 69 and 41. A row block's
/// scores still fit in L2 at these lengths, and decode's tiles in parallel
/// read the key cache twice.
constexpr int64_t kDefaultKeyTile = 0;

/// A GPU's default: tiles of 64. The gpu schedule holds a block's scores
/// in shared memory, which all the keys outgrow past a few thousand
/// (48 KiB a block); a tile's do not.
constexpr int64_t kGpuKeyTile = 64;

/// The default for the module's target.
int64_t defaultKeyTile(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  auto target = module ? module->getAttrOfType<StringAttr>(attrs::kTarget) : StringAttr();
  bool gpu = target && targetDevice(target.getValue()) != TargetDevice::Cpu;
  return gpu ? kGpuKeyTile : kDefaultKeyTile;
}

struct ChooseAttentionPass : public impl::TfmChooseAttentionBase<ChooseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t wanted = keyTile < 0 ? defaultKeyTile(getOperation()) : int64_t(keyTile);
    getOperation().walk([&](AttentionOp op) {
      if (op.getKeyTile() != 0 || wanted == 0)
        return;
      // A tile longer than the cache is one tile of all of it.
      int64_t rows = cast<MemRefType>(op.getKeyCache().getType()).getDimSize(0);
      op.setKeyTile(std::min(wanted, rows));
    });
  }
};

} // namespace
} // namespace tfm
