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

/// The "fast" family shares one CPU schedule and varies one parameter each,
/// named in the entry: columns per matrix-vector task (mv), columns of the
/// prefill matrix product's register tile (c; its rows fill the remaining
/// registers), query rows per prefill attention task (attn), reduction
/// elements per depth block of a prefill matrix product (k), bytes a
/// matrix-vector product prefetches its weights ahead (pf; pf16 for f16
/// and bf16 rows). tfmc --tune chooses among them per kernel.
inline constexpr ScheduleName kScheduleNames[] = {
    {"fast", "vectorised, multi-threaded, tiled for CPUs: mv128, c6, attn16, k whole, pf4k, "
             "pf16 1k"},
    {"fast-mv32", "fast with 32 columns per matrix-vector task"},
    {"fast-mv64", "fast with 64 columns per matrix-vector task"},
    {"fast-c4", "fast with 4-column register tiles in prefill matrix products"},
    {"fast-c8", "fast with 8-column register tiles in prefill matrix products"},
    {"fast-attn8", "fast with 8 query rows per prefill attention task"},
    {"fast-attn32", "fast with 32 query rows per prefill attention task"},
    {"fast-k128", "fast with prefill matrix products summed in depth blocks of 128"},
    {"fast-k256", "fast with prefill matrix products summed in depth blocks of 256"},
    {"fast-pf0", "fast without software prefetches of matrix-vector weights"},
    {"fast-pf8k", "fast with matrix-vector weights prefetched 8 KiB (and two rows) ahead"},
    {"fast-pf16-4k", "fast with f16 and bf16 matrix-vector weights prefetched 4 KiB ahead"},
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
