//===- ScheduleSets.cpp - The Halide schedule behind each schedule name ---===//
#include "Schedules.h"

#include "tfm/Program/ScheduleNames.h"

#include <cstring>

using namespace tfm::kernels;

namespace {

ScheduleSet fast(const char *name, CpuFastParams params) {
  return {name, [params](ScheduleContext &ctx) { scheduleCpuFast(ctx, params); }};
}

} // namespace

const std::vector<ScheduleSet> &tfm::kernels::scheduleSets() {
  static const std::vector<ScheduleSet> sets = {
      fast("fast", {}),
      fast("fast-mv32", {32, 6, 16}),
      fast("fast-mv128", {128, 6, 16}),
      fast("fast-c4", {64, 4, 16}),
      fast("fast-c8", {64, 8, 16}),
      fast("fast-attn8", {64, 6, 8}),
      fast("fast-attn32", {64, 6, 32}),
      fast("fast-k256", {64, 6, 16, 256}),
      fast("fast-pf0", {64, 6, 16, 128, 4, 0}),
      fast("fast-pf8k", {64, 6, 16, 128, 4, 8192}),
      {"plain", schedulePlain},
      {"adams2019", scheduleAdams2019},
      {"li2018", scheduleLi2018},
      {"mullapudi2016", scheduleMullapudi2016},
  };
  return sets;
}

const ScheduleSet *tfm::kernels::findScheduleSet(const std::string &name) {
  for (const ScheduleSet &set : scheduleSets())
    if (name == set.name)
      return &set;
  return nullptr;
}

namespace {

int vectorLanes(const Halide::Target &t) {
  if (t.has_feature(Halide::Target::AVX512))
    return 16;
  if (t.has_feature(Halide::Target::AVX))
    return 8;
  return 4;
}

} // namespace

Halide::Pipeline tfm::kernels::scheduleKernel(const ScheduleSet &set, const Kernel &kernel,
                                              KernelAlgorithm &algorithm,
                                              const Halide::Target &target) {
  ScheduleContext ctx{kernel, algorithm, Halide::Pipeline(algorithm.outputs), target,
                      vectorLanes(target)};
  set.apply(ctx);
  return ctx.pipeline;
}
