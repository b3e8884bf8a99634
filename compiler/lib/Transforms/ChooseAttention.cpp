//===- ChooseAttention.cpp - each attention op's algorithm ----------------===//
#include "tfm/Dialect/TfmOps.h"
#include "tfm/Transforms/Passes.h"

namespace tfm {
#define GEN_PASS_DEF_TFMCHOOSEATTENTION
#include "tfm/Transforms/Passes.h.inc"
} // namespace tfm

using namespace mlir;

namespace tfm {
namespace {

/// The default: one softmax over all keys (key_tile 0). FlashAttention's
/// tiles were measured no faster on this project's CPUs (tfm-bench,
/// --attention flash against direct, at 128, 1024 and 4096 tokens): a row
/// block's scores fit in L2 at those lengths.
constexpr int64_t kDefaultKeyTile = 0;

struct ChooseAttentionPass : public impl::TfmChooseAttentionBase<ChooseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t wanted = keyTile < 0 ? kDefaultKeyTile : int64_t(keyTile);
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
