//===- ScheduleNames.h - The one list of schedule names ---------*- C++ -*-===//
//
// The names a kernel's `tfm.schedule` may hold. The selection pass chooses
// among them, tfmc's --schedule accepts them, and the kernel generators
// (compiler/lib/Kernels/Schedules/ScheduleSets.cpp) give each one its
// Halide schedule. Free of MLIR and Halide: both halves include it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_PROGRAM_SCHEDULENAMES_H
#define TFM_PROGRAM_SCHEDULENAMES_H

#include <string_view>

namespace tfm {

struct ScheduleName {
  const char *name;
  const char *summary;
};

inline constexpr ScheduleName kScheduleNames[] = {
    {"fast", "vectorised, multi-threaded, tiled for CPUs"},
    {"plain", "every op at the root in serial scalar loops: obviously right"},
    {"adams2019", "Halide's Adams2019 autoscheduler: beam search over a learned cost model"},
    {"li2018", "Halide's Li2018 autoscheduler: greedy, for reductions and their gradients"},
    {"mullapudi2016", "Halide's Mullapudi2016 autoscheduler: grouping and tiling for locality"},
};

/// What a kernel without a `tfm.schedule` (selection skipped) compiles with.
inline constexpr const char kDefaultSchedule[] = "plain";

inline bool isScheduleName(std::string_view name) {
  for (const ScheduleName &s : kScheduleNames)
    if (name == s.name)
      return true;
  return false;
}

} // namespace tfm

#endif // TFM_PROGRAM_SCHEDULENAMES_H
