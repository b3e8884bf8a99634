//===- Schedules.h - Where and how each Func of a kernel runs ---*- C++ -*-===//
//
// The schedule half of a kernel. A schedule set is a function that takes a
// kernel's algorithm (KernelAlgorithm.h) and decides, for every Func in it,
// where it is computed, how its loops are split, vectorised and run in
// parallel. It must not change what is computed.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_SCHEDULES_H
#define TFM_KERNELS_SCHEDULES_H

#include "../KernelAlgorithm.h"

#include <string>
#include <vector>

namespace tfm::kernels {

struct ScheduleContext {
  const Kernel &kernel;
  KernelAlgorithm &algorithm;
  Halide::Target target;
  int vectorLanes; // f32 lanes of the target's widest vectors
};

/// Every Func computed once, at the root, in plain loops: obviously right.
void schedulePlain(ScheduleContext &ctx);

/// Vectorised and multi-threaded for CPUs: tiled matrix-vector products for
/// single rows, register-tiled matrix products for prefill, attention per
/// head.
void scheduleCpuFast(ScheduleContext &ctx);

/// The schedule behind one name of tfm/Program/ScheduleNames.h.
struct ScheduleSet {
  const char *name;
  void (*apply)(ScheduleContext &);
};

/// Every name of kScheduleNames has one.
const std::vector<ScheduleSet> &scheduleSets();
/// The set for `name`; null for a name that is not a schedule.
const ScheduleSet *findScheduleSet(const std::string &name);

} // namespace tfm::kernels

#endif // TFM_KERNELS_SCHEDULES_H
