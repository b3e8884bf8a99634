//===- FuseEpilogues.cpp - row-wise consumers join their producer ---------===//
#include "FusionRegions.h"
#include "tfm/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tfm {
#define GEN_PASS_DEF_TFMFUSEEPILOGUES
#include "tfm/Transforms/Passes.h.inc"
} // namespace tfm

using namespace mlir;

namespace tfm {
namespace {

bool inFusion(Operation *op) { return op->getParentOfType<FusionOp>() != nullptr; }

/// A projection without a norm before it, or an embedding (which learned
/// positions follow), starts a region of its own.
struct WrapFusionRoot : public OpTraitRewritePattern<OpTrait::FusionRoot> {
  using Base::Base;

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (inFusion(op))
      return failure();
    return success(static_cast<bool>(wrapInFusion(rewriter, {op})));
  }
};

/// An epilogue joins the latest region in its block that produces one of
/// its operands.
struct AbsorbEpilogue : public OpTraitRewritePattern<OpTrait::Epilogue> {
  using Base::Base;

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (inFusion(op))
      return failure();
    FusionOp latest;
    for (Value operand : op->getOperands()) {
      auto fusion = operand.getDefiningOp<FusionOp>();
      if (fusion && fusion->getBlock() == op->getBlock() &&
          (!latest || latest->isBeforeInBlock(fusion)))
        latest = fusion;
    }
    if (!latest)
      return rewriter.notifyMatchFailure(op, "no operand comes from a region");
    return success(static_cast<bool>(absorbIntoFusion(rewriter, latest, op)));
  }
};

struct FuseEpiloguesPass : public impl::TfmFuseEpiloguesBase<FuseEpiloguesPass> {
  void runOnOperation() override {
    // Kernel functions are fused already: their ops are one kernel each.
    if (!getOperation()->hasAttr(attrs::kEntry))
      return;
    RewritePatternSet patterns(&getContext());
    patterns.add<WrapFusionRoot, AbsorbEpilogue>(&getContext());
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
} // namespace tfm
