//===- FuseNormLinear.cpp - a norm + the linears that read it -------------===//
#include "FusionRegions.h"
#include "tfm/Transforms/Passes.h"

namespace tfm {
#define GEN_PASS_DEF_TFMFUSENORMLINEAR
#include "tfm/Transforms/Passes.h.inc"
} // namespace tfm

using namespace mlir;

namespace tfm {
namespace {

struct FuseNormLinearPass
    : public impl::TfmFuseNormLinearBase<FuseNormLinearPass> {
  void runOnOperation() override {
    SmallVector<Operation *> norms;
    getOperation().walk([&](Operation *op) {
      if (isa<RmsNormOp, LayerNormOp>(op) && !op->getParentOfType<FusionOp>())
        norms.push_back(op);
    });
    for (Operation *norm : norms) {
      if (norm->use_empty() ||
          !llvm::all_of(norm->getUsers(), [](Operation *user) {
            return isa<LinearOp>(user) && !user->getParentOfType<FusionOp>();
          }))
        continue;
      SmallVector<Operation *> group{norm};
      for (Operation *user : norm->getUsers())
        if (!llvm::is_contained(group, user))
          group.push_back(user);
      // The final norm of prefill reads one selected row; selecting it in the
      // same kernel saves a launch and an arena buffer.
      if (auto lastRow = norm->getOperand(0).getDefiningOp<LastRowOp>())
        if (lastRow->hasOneUse())
          group.push_back(lastRow);
      wrapInFusion(group);
    }
  }
};

} // namespace
} // namespace tfm
