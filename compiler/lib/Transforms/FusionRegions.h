//===- FusionRegions.h - Building and growing tfm.fusion regions -*- C++ -*-===//
//
// Shared by the fusion patterns. Both keep the IR valid after every step:
// ops only move when their operands dominate the new place and no op with
// memory effects is stepped over by an op that has some. Every change goes
// through the rewriter, so the greedy driver sees it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TRANSFORMS_FUSIONREGIONS_H
#define TFM_TRANSFORMS_FUSIONREGIONS_H

#include "tfm/Dialect/TfmOps.h"

#include "mlir/IR/PatternMatch.h"

namespace tfm {

/// Wraps `ops` (one block, any order) in a new tfm.fusion placed where the
/// first of them is. Returns null, changing nothing, when that move would
/// break dominance or reorder memory effects.
FusionOp wrapInFusion(mlir::RewriterBase &rewriter, llvm::ArrayRef<mlir::Operation *> ops);

/// Moves `op` (after `fusion` in the same block) to the end of the fusion's
/// body. Returns the fusion that replaces `fusion` (results change), or null,
/// changing nothing, when the move is not allowed.
FusionOp absorbIntoFusion(mlir::RewriterBase &rewriter, FusionOp fusion, mlir::Operation *op);

} // namespace tfm

#endif // TFM_TRANSFORMS_FUSIONREGIONS_H
