//===- FuseEpilogues.cpp - elementwise consumers join their producer ------===//
#include "FusionRegions.h"
#include "tfm/Transforms/Passes.h"

namespace tfm {
#define GEN_PASS_DEF_TFMFUSEEPILOGUES
#include "tfm/Transforms/Passes.h.inc"
} // namespace tfm

using namespace mlir;

namespace tfm {
namespace {

bool isEpilogue(Operation *op) {
  return isa<RopeOp, SiluOp, GeluOp, MulOp, AddOp, SliceColsOp,
             AddPositionsOp, KvStoreOp>(op);
}

/// The latest fusion in the block that produces one of op's operands.
FusionOp producingFusion(Operation *op) {
  FusionOp latest;
  for (Value operand : op->getOperands()) {
    auto fusion = operand.getDefiningOp<FusionOp>();
    if (fusion && fusion->getBlock() == op->getBlock() &&
        (!latest || latest->isBeforeInBlock(fusion)))
      latest = fusion;
  }
  return latest;
}

struct FuseEpiloguesPass
    : public impl::TfmFuseEpiloguesBase<FuseEpiloguesPass> {
  void runOnOperation() override {
    // A linear without a norm before it, and an embedding (which learned
    // positions follow), are the seeds of their own regions.
    SmallVector<Operation *> lone;
    getOperation().walk([&](Operation *op) {
      if (isa<LinearOp, EmbeddingOp>(op) && !op->getParentOfType<FusionOp>())
        lone.push_back(op);
    });
    for (Operation *op : lone)
      wrapInFusion({op});

    // Absorbing one epilogue can make the next one eligible (silu, then the
    // mul that reads it), so sweep until nothing moves.
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<Operation *> candidates;
      getOperation().walk([&](Operation *op) {
        if (isEpilogue(op) && !op->getParentOfType<FusionOp>())
          candidates.push_back(op);
      });
      for (Operation *op : candidates)
        if (FusionOp fusion = producingFusion(op))
          changed |= static_cast<bool>(absorbIntoFusion(fusion, op));
    }
  }
};

} // namespace
} // namespace tfm
