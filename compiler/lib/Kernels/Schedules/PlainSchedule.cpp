//===- PlainSchedule.cpp - The obviously right schedule ------------------===//
//
// Every op's Func is computed at the root over everything its consumers
// need, in serial scalar loops. It is the baseline the fast schedules are
// checked and timed against.
//
//===----------------------------------------------------------------------===//
#include "Schedules.h"

using namespace tfm::kernels;

void tfm::kernels::schedulePlain(ScheduleContext &ctx) {
  for (Value &v : ctx.algorithm.values) {
    if (!v.op)
      continue;
    v.func.compute_root();
    for (Halide::Func f : v.rowStats)
      f.compute_root();
    for (Halide::Func f : v.positionTables)
      f.compute_root();
    if (v.product.defined())
      v.product.compute_root();
    if (v.integer)
      for (Halide::Func f : {v.integer->scale, v.integer->quantized, v.integer->offsetTerms,
                             v.integer->zeroPointSums, v.integer->offsetDot,
                             v.integer->unitDot, v.integer->pairDot, v.integer->multipliers,
                             v.integer->lanes, v.integer->quads, v.integer->zeroPointPairs,
                             v.integer->subScales, v.integer->blockDot,
                             v.integer->pieceDot, v.integer->levels})
        if (f.defined())
          f.compute_root();
    AttentionFuncs &at = v.attention;
    if (at.dot.defined()) {
      for (Halide::Func f :
           {at.dot, at.score, at.maxScore, at.weight, at.denom, at.mixed, at.merged})
        if (f.defined())
          f.compute_root();
    }
  }
}
