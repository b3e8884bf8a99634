//===- Schedules.h - Where and how each Func of a kernel runs ---*- C++ -*-===//
//
// The schedule half of a kernel. A schedule set is a function that takes a
// kernel's algorithm (KernelAlgorithm.h) and decides, for every Func in it,
// where it is computed, how its loops are split, vectorised and run in
// parallel. It must not change what is computed.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_SCHEDULES_H
#define TFM_KERNELS_SCHEDULES_H

#include "../KernelAlgorithm.h"
#include "tfm/Program/ScheduleNames.h"

#include <functional>
#include <string>
#include <vector>

namespace tfm::kernels {

struct ScheduleContext {
  const Kernel &kernel;
  KernelAlgorithm &algorithm;
  Halide::Pipeline pipeline; // of algorithm.outputs: what is compiled
  Halide::Target target;
  int vectorLanes; // f32 lanes of the target's widest vectors
};

/// Every Func computed once, at the root, in plain loops: obviously right.
void schedulePlain(ScheduleContext &ctx);

/// The parameters of the CPU schedule; the schedule names of the "fast"
/// family (tfm/Program/ScheduleNames.h) each fix one set.
struct CpuFastParams {
  int matvecColumns = 128; // output columns per parallel task of a matrix-vector product
                           // (64 before the spinning workers of runtime/model-lib: 110M
                           // Q4_K_M 8-bit decode 257-277 -> 264-287 tok/s with 128)
  int matmulColumns = 6;  // output columns of a prefill matrix product's register tile
  int attentionRows = 16; // query rows per prefill attention task (16 against 1: 1.4 -> 0.8 ms
                          // for GPT-2 Small's 128-token attention)
  int matmulDepth = 0;    // reduction elements per depth block of a prefill matrix product
                          // (0: the whole reduction at once)
  int matmulGroupTiles = 4; // register tiles of columns per prefill matrix product task
  int prefetchBytes = 4096; // how far ahead of its reads (and at least two rows) a
                            // matrix-vector product prefetches a block format's weights (0:
                            // no weight at all, nor decode attention its value rows)
  int prefetchHalfBytes = 1024; // how far ahead it prefetches f16 and bf16 rows
};

/// Vectorised and multi-threaded for CPUs: tiled matrix-vector products for
/// single rows, register-tiled matrix products for prefill, attention per
/// head.
void scheduleCpuFast(ScheduleContext &ctx, const CpuFastParams &params);

/// The parameters of the GPU schedule (Gpu/).
struct GpuParams {
  int threads = 128;       // threads per block of elementwise loops, row statistics and keys
  int matvecColumns = 8;   // output columns per block of a decode product
  int matvecLanes = 32;    // threads summing one column's product: a warp
  int matmulColumns = 16;  // output columns of a prefill product's block tile
  int matmulRows = 16;     // output rows of a prefill product's block tile
  int matmulDepth = 16;    // reduction elements per shared-memory step of a prefill product
  bool warpShuffles = false; // a decode product's lanes added by warp shuffles (CUDA only),
                             // not through shared memory
};

/// GPU blocks and threads, for Halide's CUDA and OpenCL back ends alike.
void scheduleGpu(ScheduleContext &ctx, const GpuParams &params);

/// Halide's autoschedulers (AutoSchedules.cpp), given the kernel's exact
/// shapes as estimates.
void scheduleAdams2019(ScheduleContext &ctx);
void scheduleLi2018(ScheduleContext &ctx);
void scheduleMullapudi2016(ScheduleContext &ctx);

/// The schedule behind one name of tfm/Program/ScheduleNames.h.
struct ScheduleSet {
  const char *name;
  ScheduleDevice device;
  std::function<void(ScheduleContext &)> apply;
  /// How the kernels it schedules read their inputs: the autoschedulers'
  /// tiles may overhang a region, and read the edge clamped.
  InputReads reads = InputReads::AsStored;
};

/// Every name of kScheduleNames has one.
const std::vector<ScheduleSet> &scheduleSets();
/// The set for `name`; null for a name that is not a schedule.
const ScheduleSet *findScheduleSet(const std::string &name);

/// A kernel's algorithm and the pipeline that computes it under a schedule.
struct ScheduledKernel {
  KernelAlgorithm algorithm;
  Halide::Pipeline pipeline;
};

/// Builds `kernel`'s algorithm for `target` with the AMX tiles `amx` and
/// schedules it with `set`.
ScheduledKernel scheduleKernel(const ScheduleSet &set, const Kernel &kernel,
                               const Halide::Target &target, AmxTiles amx);

} // namespace tfm::kernels

#endif // TFM_KERNELS_SCHEDULES_H
