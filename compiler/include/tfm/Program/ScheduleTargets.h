//===- ScheduleTargets.h - Which schedules a target's kernels take -*- C++ -*-===//
//
// A schedule is written for one kind of device (ScheduleNames.h); a
// target's kernels run on its device (tfm/common/Targets.h). The selection
// pass and the module's verifier refuse a schedule the target cannot run.
// MLIR's half only: it includes LLVM through Targets.h.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_PROGRAM_SCHEDULETARGETS_H
#define TFM_PROGRAM_SCHEDULETARGETS_H

#include "tfm/Program/ScheduleNames.h"
#include "tfm/common/Targets.h"

#include <string>

namespace tfm {

/// Whether kernels for `device` can run under `schedule`.
inline bool scheduleRunsOn(const ScheduleName &schedule, TargetDevice device) {
  switch (schedule.device) {
  case ScheduleDevice::Cpu:
    return device == TargetDevice::Cpu;
  case ScheduleDevice::Gpu:
    return device == TargetDevice::Cuda || device == TargetDevice::OpenCl;
  case ScheduleDevice::Cuda:
    return device == TargetDevice::Cuda;
  }
  return false;
}

/// The names of the schedules `device` runs, comma-separated.
inline std::string schedulesRunningOn(TargetDevice device) {
  std::string names;
  for (const ScheduleName &s : kScheduleNames)
    if (scheduleRunsOn(s, device))
      names += (names.empty() ? "" : ", ") + std::string(s.name);
  return names;
}

} // namespace tfm

#endif // TFM_PROGRAM_SCHEDULETARGETS_H
