//===- QuantizeActivations.cpp - linear inputs: f32, 8-bit or bf16 --------===//
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
    getOperation().walk([&](LinearOp op) {
      if (op.getActivationBlock() != 0 || op.getBf16Input())
        return;
      Type element = cast<RankedTensorType>(op.getWeight().getType()).getElementType();
      std::optional<ElementEncoding> encoding = weightEncoding(element);
      if (block != 0 && encoding && encoding->block)
        op.setActivationBlock(std::max(block.getValue(), blockLayout(*encoding->block).blockElements));
      else if (bf16 && element.isBF16())
        op.setBf16Input(true);
    });
  }
};

} // namespace
} // namespace tfm
