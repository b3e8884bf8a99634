//===- FuseEpilogues.cpp - row-wise consumers join their producer ---------===//
#include "FusionRegions.h"
#include "tfm/Program/Program.h"
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

/// The terms `op` would unfold to at the end of `fusion` (kMaxKernelTerms):
/// 1 for itself and for every value from outside the region, and each
/// region op's own terms per operand it reads.
int64_t termsInRegion(FusionOp fusion, Operation *op) {
  llvm::DenseMap<Value, int64_t> terms;
  auto count = [&](Operation *o) {
    int64_t sum = 1;
    for (Value operand : o->getOperands())
      sum = std::min(sum + terms.lookup_or(operand, 1), kMaxKernelTerms + 1);
    return sum;
  };
  for (Operation &inner : fusion.getBody().front().without_terminator())
    for (Value result : inner.getResults())
      terms[result] = count(&inner);
  // The op reads the fusion's results, which are its yielded values.
  for (auto [result, yielded] : llvm::zip(fusion.getResults(), fusion.getYield().getValues()))
    terms[result] = terms.lookup_or(yielded, 1);
  return count(op);
}

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
    // A full region takes no more: the epilogue stays a kernel of its own.
    // Each absorption rebuilds the region, and Halide's compile time grows
    // faster than a kernel's size: bounded regions keep both linear.
    if (latest.getBody().front().getOperations().size() > kMaxKernelOps)
      return rewriter.notifyMatchFailure(op, "the region holds the most ops a kernel may");
    if (termsInRegion(latest, op) > kMaxKernelTerms)
      return rewriter.notifyMatchFailure(op, "joined, it would unfold to too many terms");
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
