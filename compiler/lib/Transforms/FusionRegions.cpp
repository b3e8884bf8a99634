//===- FusionRegions.cpp - Building and growing tfm.fusion regions --------===//
#include "FusionRegions.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace tfm {
namespace {

/// Leaf ops (weights, cache layers) have no operands and no effects, so they
/// can move up to wherever a region needs them.
bool isMovableLeaf(Operation *op) {
  return op && op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         isMemoryEffectFree(op);
}

/// Checks that `moving` can be placed right before `target` (both in one
/// block, target first): every operand defined outside `inside` comes before
/// `target` or is a leaf we can hoist (collected in `leavesToHoist`), and if
/// `moving` has memory effects nothing in between has any.
bool canMoveBefore(Operation *moving, Operation *target,
                   const llvm::SmallPtrSetImpl<Operation *> &inside,
                   llvm::SetVector<Operation *> &leavesToHoist) {
  for (Value operand : moving->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (!def || inside.contains(def) || def->getBlock() != target->getBlock())
      continue;
    if (def == target || target->isBeforeInBlock(def)) {
      if (!isMovableLeaf(def))
        return false;
      leavesToHoist.insert(def);
    }
  }
  if (isMemoryEffectFree(moving))
    return true;
  for (Operation *it = target; it && it != moving; it = it->getNextNode())
    if (!inside.contains(it) && !isMemoryEffectFree(it) &&
        !leavesToHoist.contains(it))
      return false;
  return true;
}

/// Makes the fusion's results exactly the body values used outside it.
/// Callers first point outside users at the body values directly.
FusionOp rebuildResults(RewriterBase &rewriter, FusionOp fusion) {
  Block &body = fusion.getBody().front();
  SmallVector<Value> escaping;
  for (Operation &op : body.without_terminator())
    for (Value result : op.getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !fusion->isAncestor(user);
          }))
        escaping.push_back(result);

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(fusion);
  auto rebuilt = FusionOp::create(rewriter, fusion.getLoc(), ValueRange(escaping).getTypes());
  rewriter.inlineRegionBefore(fusion.getBody(), rebuilt.getBody(), rebuilt.getBody().end());
  Block &newBody = rebuilt.getBody().front();
  rewriter.eraseOp(newBody.getTerminator());
  rewriter.setInsertionPointToEnd(&newBody);
  YieldOp::create(rewriter, fusion.getLoc(), escaping);
  for (auto [value, result] : llvm::zip(escaping, rebuilt.getResults()))
    rewriter.replaceUsesWithIf(value, result, [&](OpOperand &use) {
      return !rebuilt->isAncestor(use.getOwner());
    });
  rewriter.eraseOp(fusion);
  return rebuilt;
}

} // namespace

FusionOp wrapInFusion(RewriterBase &rewriter, ArrayRef<Operation *> ops) {
  if (ops.empty())
    return nullptr;
  Block *block = ops.front()->getBlock();
  if (llvm::any_of(ops, [&](Operation *op) { return op->getBlock() != block; }))
    return nullptr;
  SmallVector<Operation *> ordered(ops.begin(), ops.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  Operation *first = ordered.front();
  llvm::SmallPtrSet<Operation *, 8> inside(ordered.begin(), ordered.end());
  llvm::SetVector<Operation *> leavesToHoist;
  for (Operation *op : ordered)
    if (!canMoveBefore(op, first, inside, leavesToHoist))
      return nullptr;
  for (Operation *leaf : leavesToHoist)
    rewriter.moveOpBefore(leaf, first);

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(first);
  auto fusion = FusionOp::create(rewriter, first->getLoc(), TypeRange());
  Block *body = rewriter.createBlock(&fusion.getBody());
  rewriter.setInsertionPointToEnd(body);
  auto yield = YieldOp::create(rewriter, first->getLoc(), ValueRange());
  for (Operation *op : ordered)
    rewriter.moveOpBefore(op, yield);
  return rebuildResults(rewriter, fusion);
}

FusionOp absorbIntoFusion(RewriterBase &rewriter, FusionOp fusion, Operation *op) {
  if (op->getBlock() != fusion->getBlock() || !fusion->isBeforeInBlock(op))
    return nullptr;
  llvm::SmallPtrSet<Operation *, 2> inside;
  inside.insert(fusion);
  llvm::SetVector<Operation *> leavesToHoist;
  if (!canMoveBefore(op, fusion, inside, leavesToHoist))
    return nullptr;
  for (Operation *leaf : leavesToHoist)
    rewriter.moveOpBefore(leaf, fusion);

  // Outside users read the body values directly until the rebuild.
  YieldOp yield = fusion.getYield();
  for (auto [result, yielded] : llvm::zip(fusion.getResults(), yield.getValues()))
    rewriter.replaceAllUsesWith(result, yielded);
  rewriter.moveOpBefore(op, yield);
  return rebuildResults(rewriter, fusion);
}

} // namespace tfm
