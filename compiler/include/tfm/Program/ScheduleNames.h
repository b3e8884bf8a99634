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

/// Each schedule: X(Enumerator, "name", device, "summary"), the device a
/// ScheduleDevice its kernels run on. The "fast" family
/// shares one CPU schedule and varies one parameter each, named in the
/// entry: columns per matrix-vector task (mv), columns of the prefill
/// matrix product's register tile (c; its rows fill the remaining
/// registers), query rows per prefill attention task (attn), reduction
/// elements per depth block of a prefill matrix product (k), bytes a
/// matrix-vector product prefetches its weights ahead (pf; pf16 for f16
/// and bf16 rows). tfmc --tune chooses among them per kernel. tfmc's
/// --schedule help, `tfmc --list-schedules` and docs/schedules.md come
/// from this list; ScheduleSets.cpp gives each its Halide schedule in an
/// exhaustive switch.
#define TFM_SCHEDULES(X)                                                                         \
  X(Fast, "fast", Cpu,                                                                                \
    "vectorised, multi-threaded, tiled for CPUs: mv128, c6, attn16, k whole, pf4k, pf16 1k")    \
  X(FastMv32, "fast-mv32", Cpu, "fast with 32 columns per matrix-vector task")                        \
  X(FastMv64, "fast-mv64", Cpu, "fast with 64 columns per matrix-vector task")                        \
  X(FastC4, "fast-c4", Cpu, "fast with 4-column register tiles in prefill matrix products")           \
  X(FastC8, "fast-c8", Cpu, "fast with 8-column register tiles in prefill matrix products")           \
  X(FastAttn8, "fast-attn8", Cpu, "fast with 8 query rows per prefill attention task")                \
  X(FastAttn32, "fast-attn32", Cpu, "fast with 32 query rows per prefill attention task")             \
  X(FastK128, "fast-k128", Cpu, "fast with prefill matrix products summed in depth blocks of 128")    \
  X(FastK256, "fast-k256", Cpu, "fast with prefill matrix products summed in depth blocks of 256")    \
  X(FastPf0, "fast-pf0", Cpu, "fast without software prefetches of matrix-vector weights")            \
  X(FastPf8k, "fast-pf8k", Cpu, "fast with matrix-vector weights prefetched 8 KiB (and two rows) "    \
                           "ahead")                                                              \
  X(FastPf16At4k, "fast-pf16-4k", Cpu,                                                                \
    "fast with f16 and bf16 matrix-vector weights prefetched 4 KiB ahead")                       \
  X(Plain, "plain", Cpu, "every op at the root in serial scalar loops: obviously right")              \
  X(Adams2019, "adams2019", Cpu,                                                                      \
    "Halide's Adams2019 autoscheduler: beam search over a learned cost model")                   \
  X(Li2018, "li2018", Cpu, "Halide's Li2018 autoscheduler: greedy, for reductions and their "         \
                      "gradients")                                                               \
  X(Mullapudi2016, "mullapudi2016", Cpu,                                                              \
    "Halide's Mullapudi2016 autoscheduler: grouping and tiling for locality")                   \
  X(Gpu, "gpu", Gpu,                                                                             \
    "GPU threads (CUDA or OpenCL): decode products a warp of lanes per column, reduced in "      \
    "shared memory; prefill products in shared-memory tiles; attention a block per head and row")\
  X(GpuWarp, "gpu-warp", Cuda,                                                                   \
    "gpu with decode products summed by a half warp of 16 lanes per column, added by warp "      \
    "shuffles, not through shared memory (CUDA only: Halide's OpenCL back end has no gpu_lanes)")

/// Where a schedule's kernels run: the CPU's cores, a GPU through either of
/// Halide's GPU back ends, or a GPU through its CUDA back end alone.
enum class ScheduleDevice { Cpu, Gpu, Cuda };

#define TFM_SCHEDULE_ENUMERATOR(value, name, device, summary) value,
enum class Schedule { TFM_SCHEDULES(TFM_SCHEDULE_ENUMERATOR) };
#undef TFM_SCHEDULE_ENUMERATOR

struct ScheduleName {
  Schedule schedule;
  const char *name;
  ScheduleDevice device;
  const char *summary;
};

#define TFM_SCHEDULE_NAME(value, name, device, summary)                                          \
  {Schedule::value, name, ScheduleDevice::device, summary},
inline constexpr ScheduleName kScheduleNames[] = {TFM_SCHEDULES(TFM_SCHEDULE_NAME)};
#undef TFM_SCHEDULE_NAME

/// What a kernel without a `tfm.schedule` (selection skipped) compiles with.
inline constexpr const char kDefaultSchedule[] = "plain";

/// The name of `schedule`: the list is in enumerator order.
inline const char *scheduleName(Schedule schedule) {
  return kScheduleNames[static_cast<int>(schedule)].name;
}

/// The schedule named `name`, if one is.
inline const ScheduleName *findScheduleName(std::string_view name) {
  for (const ScheduleName &s : kScheduleNames)
    if (name == s.name)
      return &s;
  return nullptr;
}

inline bool isScheduleName(std::string_view name) { return findScheduleName(name) != nullptr; }

} // namespace tfm

#endif // TFM_PROGRAM_SCHEDULENAMES_H
