//===- AutoSchedules.cpp - Halide's autoschedulers as schedule sets -------===//
//
// Debian's Halide 14 ships three autoschedulers as plugins: Adams2019 (beam
// search over a learned cost model), Li2018 (greedy, written for gradient
// pipelines) and Mullapudi2016 (groups stages and tiles them for locality).
// Each needs an estimate of every input's and output's extent. A kernel's
// shapes are fixed when it is compiled, so the estimates are its own shapes,
// except where a call decides the extent (estimatedRegion).
//
// The machine they plan for is the one compiling: its hardware threads and
// its last-level cache.
//
//===----------------------------------------------------------------------===//
#include "Schedules.h"

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

using namespace Halide;
using namespace tfm;
using namespace tfm::kernels;

namespace {

// Adams2019 unrolls loops it expects to have a constant extent, and in
// decode attention (keys up to the position) they do not. Halide's switch
// for this (halide/Halide#3479) is read from the environment whenever a
// pipeline is lowered: a failed unroll becomes a serial loop and a warning.
// Set before main, while the process has one thread.
[[maybe_unused]] const bool kPermitFailedUnroll = setenv("HL_PERMIT_FAILED_UNROLL", "1", 0) == 0;

/// The region of parameter `p` a call touches, (min, extent) per dimension,
/// innermost first, as the autoschedulers must see it: the autoschedulers
/// shift a tile that overhangs the end of a loop back inside it, which
/// reads before the start of a loop shorter than one tile. So an extent
/// that varies from call to call (token rows, a cache window) is estimated
/// at its smallest, one row.
Region estimatedRegion(const KernelParam &p) {
  auto rows = [&](int64_t declared) {
    return (p.tokenRows || p.isCache) ? 1 : static_cast<int>(declared);
  };
  if (p.shape.size() == 1)
    return {{0, rows(p.shape[0])}};
  return {{0, static_cast<int>(p.type.storedRowLength(p.shape[1]))}, {0, rows(p.shape[0])}};
}

void setEstimates(ScheduleContext &ctx) {
  KernelAlgorithm &a = ctx.algorithm;
  size_t input = 0, output = 0;
  for (const KernelParam &p : ctx.kernel.params) {
    Region region = estimatedRegion(p);
    if (!p.isOutput) {
      a.inputs[input++].set_estimates(region);
      continue;
    }
    Func out = a.outputs[output++];
    std::vector<Var> vars = out.args();
    for (size_t d = 0; d < vars.size(); ++d)
      out.set_estimate(vars[d], region[d].min, region[d].extent);
  }
}

uint64_t lastLevelCacheBytes() {
  // "32768K" for a 32 MiB L3.
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index3/size");
  uint64_t kib = 0;
  if (in >> kib && kib > 0)
    return kib * 1024;
  return uint64_t(16) << 20; // Halide's generic machine
}

MachineParams thisMachine() {
  // Balance: how much dearer a load from the last-level cache is than an
  // arithmetic op, Halide's generic figure.
  return MachineParams(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())),
                       lastLevelCacheBytes(), 40);
}

/// Loads `plugin` (once) and lets autoscheduler `name` schedule the kernel.
void autoSchedule(ScheduleContext &ctx, const std::string &plugin, const std::string &name) {
  // Loading a plugin registers it in a process-wide table that Halide does
  // not lock, and tfmc compiles two kernels at a time.
  static std::mutex mutex;
  static std::set<std::string> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded.insert(plugin).second)
    load_plugin(std::string(TFM_HALIDE_AUTOSCHEDULER_DIR) + "/libautoschedule_" + plugin + ".so");
  setEstimates(ctx);
  ctx.pipeline.auto_schedule(name, ctx.target, thisMachine());
}

} // namespace

void tfm::kernels::scheduleAdams2019(ScheduleContext &ctx) {
  autoSchedule(ctx, "adams2019", "Adams2019");
}

void tfm::kernels::scheduleLi2018(ScheduleContext &ctx) { autoSchedule(ctx, "li2018", "Li2018"); }

void tfm::kernels::scheduleMullapudi2016(ScheduleContext &ctx) {
  autoSchedule(ctx, "mullapudi2016", "Mullapudi2016");
}
