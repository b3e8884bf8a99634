//===- ScheduleSets.cpp - The Halide schedule behind each schedule name ---===//
#include "Schedules.h"

#include "tfm/Program/ScheduleNames.h"


using namespace tfm::kernels;
using tfm::Schedule;
using tfm::ScheduleDevice;
using tfm::ScheduleName;
using tfm::kScheduleNames;

namespace {

/// The fast schedule with at most one parameter changed from its default;
/// the others follow the defaults wherever they move.
std::function<void(ScheduleContext &)> fast(int CpuFastParams::*param = nullptr,
                                            int value = 0) {
  CpuFastParams params;
  if (param)
    params.*param = value;
  return [params](ScheduleContext &ctx) { scheduleCpuFast(ctx, params); };
}

/// What `schedule` does to a kernel, and how its kernels read their inputs.
ScheduleSet scheduleSetOf(const ScheduleName &schedule) {
  const char *name = schedule.name;
  ScheduleDevice device = schedule.device;
  switch (schedule.schedule) {
  case Schedule::Fast:
    return {name, device, fast()};
  case Schedule::FastMv32:
    return {name, device, fast(&CpuFastParams::matvecColumns, 32)};
  case Schedule::FastMv64:
    return {name, device, fast(&CpuFastParams::matvecColumns, 64)};
  case Schedule::FastC4:
    return {name, device, fast(&CpuFastParams::matmulColumns, 4)};
  case Schedule::FastC8:
    return {name, device, fast(&CpuFastParams::matmulColumns, 8)};
  case Schedule::FastAttn8:
    return {name, device, fast(&CpuFastParams::attentionRows, 8)};
  case Schedule::FastAttn32:
    return {name, device, fast(&CpuFastParams::attentionRows, 32)};
  case Schedule::FastK128:
    return {name, device, fast(&CpuFastParams::matmulDepth, 128)};
  case Schedule::FastK256:
    return {name, device, fast(&CpuFastParams::matmulDepth, 256)};
  case Schedule::FastPf0:
    return {name, device, fast(&CpuFastParams::prefetchBytes, 0)};
  case Schedule::FastPf8k:
    return {name, device, fast(&CpuFastParams::prefetchBytes, 8192)};
  case Schedule::FastPf16At4k:
    return {name, device, fast(&CpuFastParams::prefetchHalfBytes, 4096)};
  case Schedule::Plain:
    return {name, device, schedulePlain};
  case Schedule::Adams2019:
    return {name, device, scheduleAdams2019, InputReads::EdgeClamped};
  case Schedule::Li2018:
    return {name, device, scheduleLi2018, InputReads::EdgeClamped};
  case Schedule::Mullapudi2016:
    return {name, device, scheduleMullapudi2016, InputReads::EdgeClamped};
  case Schedule::Gpu:
    return {name, device, [](ScheduleContext &ctx) { scheduleGpu(ctx, GpuParams{}); }};
  case Schedule::GpuWarp:
    return {name, device, [](ScheduleContext &ctx) {
              GpuParams params;
              params.warpShuffles = true;
              // A half warp per column: with 32 lanes a thread summing two
              // products (gate and up) or a RoPE pair spills at the 64
              // registers Halide's runtime gives a kernel.
              params.matvecLanes = 16;
              scheduleGpu(ctx, params);
            }};
  }
  return {name, device, schedulePlain}; // unreachable: the switch names every schedule
}

} // namespace

const std::vector<ScheduleSet> &tfm::kernels::scheduleSets() {
  static const std::vector<ScheduleSet> sets = [] {
    std::vector<ScheduleSet> all;
    for (const ScheduleName &schedule : kScheduleNames)
      all.push_back(scheduleSetOf(schedule));
    return all;
  }();
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
  KernelAlgorithm algorithm =
      buildKernelAlgorithm(kernel, amx, multipliesBytePairs(target), targetVectorLanes(target),
                           set.reads, sixteenBitFloatsFor(target));
  ScheduleContext ctx{kernel, algorithm, Halide::Pipeline(algorithm.outputs), target,
                      targetVectorLanes(target)};
  set.apply(ctx);
  return {std::move(algorithm), ctx.pipeline};
}
