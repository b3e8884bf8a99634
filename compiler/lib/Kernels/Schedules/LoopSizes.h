//===- LoopSizes.h - Loop sizes that divide a kernel's extents ---*- C++ -*-===//
//
// Every extent of a kernel is a constant; a schedule splits a loop by a
// size that divides it where it can, so that no tail needs a guard. The
// CPU's and the GPU's schedules choose their vectors, tasks and lanes so.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_SCHEDULES_LOOPSIZES_H
#define TFM_KERNELS_SCHEDULES_LOOPSIZES_H

namespace tfm::kernels {

/// Largest count of lanes <= `lanes` that divides `n` (halving `lanes`),
/// so reductions need no guarded tail.
int lanesDividing(int n, int lanes);
/// Largest divisor of `n` that is at most `limit`.
int divisorAtMost(int n, int limit);

} // namespace tfm::kernels

#endif // TFM_KERNELS_SCHEDULES_LOOPSIZES_H
