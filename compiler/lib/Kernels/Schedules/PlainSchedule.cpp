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
      for (Halide::Func f : v.integer->placedFuncs())
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
