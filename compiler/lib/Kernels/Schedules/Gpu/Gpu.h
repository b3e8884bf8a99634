//===- Gpu.h - The parts of the GPU schedule --------------------*- C++ -*-===//
//
// scheduleGpu (Dispatch.cpp) finds what each output of a kernel reads and
// hands it to the part for its form, as the CPU schedule does: products of
// one row and of many (Products.cpp), attention (Attention.cpp), and every
// other Func one GPU thread per point (Threads.cpp). The same schedule
// serves Halide's CUDA and OpenCL back ends; only the warp shuffles of
// gpu-warp (GpuParams::warpShuffles) are CUDA's alone.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_SCHEDULES_GPU_GPU_H
#define TFM_KERNELS_SCHEDULES_GPU_GPU_H

#include "../Schedules.h"

#include <vector>

namespace tfm::kernels::gpu {

// Threads.cpp

/// Every stage of `f` one GPU thread per point of its pure variables:
/// blocks of `threads` along the first, the others (fused beyond three)
/// across blocks. Guarded, so no point outside what is needed is computed.
void threadPerPoint(Halide::Func f, int threads);
/// The same for one stage whose pure variables are `vars`, innermost first.
void threadPerPoint(Halide::Stage stage, std::vector<Halide::Var> vars, int threads);
/// The extent of a reduction variable whose bounds are constants.
int constantExtent(const Halide::RVar &r);

// Products.cpp

/// Decode: the single-row output `out` in blocks of columns, each column's
/// product summed by a warp of lanes reading consecutive weights.
void scheduleMatvec(ScheduleContext &ctx, const GpuParams &params, Halide::Func out,
                    const std::vector<Value *> &linears);
/// Prefill: the output `out` of token rows in tiles of columns by rows, the
/// products reading their weights and activations through shared memory.
void scheduleMatmul(ScheduleContext &ctx, const GpuParams &params, Halide::Func out,
                    const std::vector<Value *> &linears);

// Attention.cpp

/// Attention feeding `out`: a block per head and row, its threads across
/// the head dimension, the scores of the keys (all, or a tile at a time)
/// in shared memory; a `singleRow` one's key tiles in blocks of their own
/// (split-K).
void scheduleAttention(ScheduleContext &ctx, const GpuParams &params, Halide::Func out,
                       Value &attention, bool singleRow);

} // namespace tfm::kernels::gpu

#endif // TFM_KERNELS_SCHEDULES_GPU_GPU_H
