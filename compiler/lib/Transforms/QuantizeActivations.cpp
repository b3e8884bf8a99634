//===- QuantizeActivations.cpp - each linear op's input: f32 or 8-bit -----===//
#include "tfm/Dialect/TfmOps.h"
#include "tfm/Transforms/Passes.h"

namespace tfm {
#define GEN_PASS_DEF_TFMQUANTIZEACTIVATIONS
#include "tfm/Transforms/Passes.h.inc"
} // namespace tfm

using namespace mlir;

namespace tfm {
namespace {

struct QuantizeActivationsPass
    : public impl::TfmQuantizeActivationsBase<QuantizeActivationsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (block == 0)
      return;
    getOperation().walk([&](LinearOp op) {
      auto weight = cast<RankedTensorType>(op.getWeight().getType());
      if (op.getActivationBlock() == 0 && isa<BlocksType>(weight.getElementType()))
        op.setActivationBlock(block);
    });
  }
};

} // namespace
} // namespace tfm
