//===- ScheduleSets.cpp - The Halide schedule behind each schedule name ---===//
#include "Schedules.h"

#include "tfm/Program/ScheduleNames.h"

#include <cstring>

using namespace tfm::kernels;

namespace {

/// The fast schedule with at most one parameter changed from its default;
/// the others follow the defaults wherever they move.
ScheduleSet fast(const char *name, int CpuFastParams::*param = nullptr, int value = 0) {
  CpuFastParams params;
  if (param)
    params.*param = value;
  return {name, [params](ScheduleContext &ctx) { scheduleCpuFast(ctx, params); }};
}

} // namespace

const std::vector<ScheduleSet> &tfm::kernels::scheduleSets() {
  static const std::vector<ScheduleSet> sets = {
      fast("fast"),
      fast("fast-mv32", &CpuFastParams::matvecColumns, 32),
      fast("fast-mv64", &CpuFastParams::matvecColumns, 64),
      fast("fast-c4", &CpuFastParams::matmulColumns, 4),
      fast("fast-c8", &CpuFastParams::matmulColumns, 8),
      fast("fast-attn8", &CpuFastParams::attentionRows, 8),
      fast("fast-attn32", &CpuFastParams::attentionRows, 32),
      fast("fast-k128", &CpuFastParams::matmulDepth, 128),
      fast("fast-k256", &CpuFastParams::matmulDepth, 256),
      fast("fast-pf0", &CpuFastParams::prefetchBytes, 0),
      fast("fast-pf8k", &CpuFastParams::prefetchBytes, 8192),
      fast("fast-pf16-4k", &CpuFastParams::prefetchHalfBytes, 4096),
      {"plain", schedulePlain},
      {"adams2019", scheduleAdams2019, InputReads::EdgeClamped},
      {"li2018", scheduleLi2018, InputReads::EdgeClamped},
      {"mullapudi2016", scheduleMullapudi2016, InputReads::EdgeClamped},
  };
  return sets;
}

const ScheduleSet *tfm::kernels::findScheduleSet(const std::string &name) {
  for (const ScheduleSet &set : scheduleSets())
    if (name == set.name)
      return &set;
  return nullptr;
}

ScheduledKernel tfm::kernels::scheduleKernel(const ScheduleSet &set, const Kernel &kernel,
                                             const Halide::Target &target, AmxTiles amx) {
  KernelAlgorithm algorithm = buildKernelAlgorithm(kernel, amx, multipliesBytePairs(target),
                                                   targetVectorLanes(target), set.reads);
  ScheduleContext ctx{kernel, algorithm, Halide::Pipeline(algorithm.outputs), target,
                      targetVectorLanes(target)};
  set.apply(ctx);
  return {std::move(algorithm), ctx.pipeline};
}
