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

#include <functional>
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

struct ScheduleSet {
  std::string name;
  std::string summary;
  std::function<void(ScheduleContext &)> apply;
};

/// The schedule sets, the default (fastest measured) first.
const std::vector<ScheduleSet> &scheduleSets();

} // namespace tfm::kernels

#endif // TFM_KERNELS_SCHEDULES_H
