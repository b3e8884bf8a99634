//===- CpuFast.h - The parts of the CPU fast schedule -----------*- C++ -*-===//
//
// scheduleCpuFast (Dispatch.cpp) finds what each output of a kernel reads
// and hands it to the part for its form: matrix-vector products of one row
// (DecodeProducts.cpp), matrix products of many rows (PrefillProducts.cpp)
// and attention (Attention.cpp). Loops.cpp holds the loop shapes they
// share. Why each schedule is as it is, with the measurements behind it,
// is said where it is written.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_SCHEDULES_CPUFAST_CPUFAST_H
#define TFM_KERNELS_SCHEDULES_CPUFAST_CPUFAST_H

#include "../../OpRegistry.h"
#include "../LoopSizes.h"
#include "../Schedules.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tfm::kernels::cpufast {

// Loops.cpp

/// The weight a projection reads.
const Value &weightOf(const KernelAlgorithm &a, const Value &linear);
/// Whether the projection decodes its weight as it reads it (f16, bf16, a
/// block format).
bool decodesWeight(const KernelAlgorithm &a, const Value &linear);
/// Whether the projection reads its weight in a block format (its
/// reduction is then element, sub-block, block: StoredWeight.h).
bool blockedWeight(const Value &linear);
/// Prefetches a matrix-vector product's weight ahead of `loop`, one of
/// the row's `iterationsPerRow`.
void prefetchWeightAhead(Halide::Stage stage, const KernelAlgorithm &a, const Value &lin,
                         Halide::VarOrRVar loop, int iterationsPerRow, const CpuFastParams &params);
/// Schedules `f` as a transpose of `source` in register blocks.
void transposeInBlocks(Halide::Func f, Halide::Func source, Halide::Var x, Halide::Var y, int lanes,
                       std::optional<Halide::Var> across = std::nullopt);
/// Pairs of byte products (BytePairs) as one vector reduction at `at`.
void schedulePairDot(BytePairs &pairs, Halide::LoopLevel at, int rowLanes = 1);

// DecodeProducts.cpp

/// Tiles the single-row output `out` (`cols` columns) in parallel column
/// tasks and computes the projections `linears` inside them.
void scheduleMatvec(ScheduleContext &ctx, const CpuFastParams &params, Halide::Func out, int cols,
                    const std::vector<Value *> &linears);

// PrefillProducts.cpp

/// The activations that prefill products read (Value::activations), by
/// name: the kernel lays each out in row tiles once for all of them,
/// whichever outputs they feed (the q, k and v of an attention input read
/// one normalised input).
using ActivationReaders = std::map<std::string, Halide::Func>;

/// Tiles the output `out` of token rows in register tiles and computes the
/// projections `linears` inside them, noting the activations they read.
void scheduleMatmul(ScheduleContext &ctx, const CpuFastParams &params, Halide::Func out,
                    bool transposed, int cols, const std::vector<Value *> &linears,
                    ActivationReaders &readers);
/// Lays out each activation of `readers` in row tiles once per call.
void tileActivations(KernelAlgorithm &a, const ActivationReaders &readers, int lanes);

// Attention.cpp

/// Schedules the attention op `attention` feeding `out`, one row (decode)
/// or many.
void scheduleAttention(ScheduleContext &ctx, const CpuFastParams &params, Halide::Func out,
                       Value &attention, bool singleRow);

} // namespace tfm::kernels::cpufast

#endif // TFM_KERNELS_SCHEDULES_CPUFAST_CPUFAST_H
