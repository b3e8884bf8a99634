//===- FuseNormLinear.cpp - a norm + the projections that read it ---------===//
#include "FusionRegions.h"
#include "tfm/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tfm {
#define GEN_PASS_DEF_TFMFUSENORMLINEAR
#include "tfm/Transforms/Passes.h.inc"
} // namespace tfm

using namespace mlir;

namespace tfm {
namespace {

bool inFusion(Operation *op) { return op->getParentOfType<FusionOp>() != nullptr; }

struct FuseNormWithProjections : public OpTraitRewritePattern<OpTrait::RowNormalization> {
  using Base::Base;

  LogicalResult matchAndRewrite(Operation *norm, PatternRewriter &rewriter) const override {
    if (inFusion(norm) || norm->use_empty())
      return failure();
    SmallVector<Operation *> group{norm};
    for (Operation *user : norm->getUsers()) {
      if (!user->hasTrait<OpTrait::FusionRoot>() || inFusion(user))
        return rewriter.notifyMatchFailure(norm, "a user is not a projection outside a region");
      if (!llvm::is_contained(group, user))
        group.push_back(user);
    }
    // The final norm of prefill reads one selected row; selecting it in the
    // same kernel saves a launch and an arena buffer.
    if (auto lastRow = norm->getOperand(0).getDefiningOp<LastRowOp>())
      if (lastRow->hasOneUse() && !inFusion(lastRow))
        group.push_back(lastRow);
    return success(static_cast<bool>(wrapInFusion(rewriter, group)));
  }
};

struct FuseNormLinearPass : public impl::TfmFuseNormLinearBase<FuseNormLinearPass> {
  void runOnOperation() override {
    // Kernel functions are fused already: their ops are one kernel each.
    if (!getOperation()->hasAttr(attrs::kEntry))
      return;
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseNormWithProjections>(&getContext());
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
} // namespace tfm
