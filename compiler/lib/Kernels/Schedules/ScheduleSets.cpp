//===- ScheduleSets.cpp - The Halide schedule behind each schedule name ---===//
#include "Schedules.h"

#include "tfm/Program/ScheduleNames.h"

#include <cstring>

using namespace tfm::kernels;

const std::vector<ScheduleSet> &tfm::kernels::scheduleSets() {
  static const std::vector<ScheduleSet> sets = {
      {"fast", scheduleCpuFast},
      {"plain", schedulePlain},
  };
  return sets;
}

const ScheduleSet *tfm::kernels::findScheduleSet(const std::string &name) {
  for (const ScheduleSet &set : scheduleSets())
    if (name == set.name)
      return &set;
  return nullptr;
}
