//===- ScheduleSets.cpp - The schedule sets a user can name --------------===//
#include "Schedules.h"

const std::vector<tfm::kernels::ScheduleSet> &tfm::kernels::scheduleSets() {
  static const std::vector<ScheduleSet> sets = {
      {"fast", "vectorised, multi-threaded, tiled (default)", scheduleCpuFast},
      {"plain", "every op at the root in serial scalar loops", schedulePlain},
  };
  return sets;
}
