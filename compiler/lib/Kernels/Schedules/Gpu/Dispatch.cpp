//===- Dispatch.cpp - The GPU schedule, output by output ------------------===//
//
// As on the CPU, each output of a kernel is tiled and the ops it reads are
// computed inside its tiles, but the tiles are GPU blocks and threads:
//  * a projection feeding a single-row output (decode) is a matrix-vector
//    product, a warp of lanes per column (Products.cpp);
//  * a projection feeding token rows (prefill) is a matrix product in
//    tiles through shared memory (Products.cpp);
//  * elementwise epilogues (bias, RoPE, SiLU·mul, GELU, residual adds,
//    column slices) are inlined into the output's threads;
//  * a projection that several outputs read, or that an op reads across
//    columns (half-split RoPE), is computed on its own first;
//  * norms are materialised before the projections, their row statistics
//    a thread per row, and tables of position alone (RoPE's) once per call;
//  * attention is a block per head and row, decode's key tiles split among
//    blocks (Attention.cpp);
//  * gathers, copies and plain elementwise outputs are a thread per point.
//
//===----------------------------------------------------------------------===//
#include "Gpu.h"

#include "../../OpRegistry.h"
#include "../KernelAnchors.h"

#include <set>
#include <string>

using namespace Halide;
using namespace tfm::kernels;
using namespace tfm::kernels::gpu;

namespace {

/// Tiles `out` and computes the projections `linears` inside its tiles.
void scheduleProjections(ScheduleContext &ctx, const GpuParams &params, Func out, bool singleRow,
                         const std::vector<Value *> &linears) {
  if (singleRow)
    scheduleMatvec(ctx, params, out, linears);
  else
    scheduleMatmul(ctx, params, out, linears);
}

} // namespace

void tfm::kernels::scheduleGpu(ScheduleContext &ctx, const GpuParams &params) {
  KernelAlgorithm &a = ctx.algorithm;
  std::set<std::string> tables; // one table may serve several ops (RoPE of q and k)
  for (Value &v : a.values)
    for (Func f : v.positionTables)
      if (tables.insert(f.name()).second) {
        f.compute_root();
        threadPerPoint(f, params.threads);
      }

  for (Value &v : a.values) {
    if (!v.op || opRecord(v.op->kind()).placement != Placement::RowNormalization)
      continue;
    for (Func f : v.rowStats) {
      f.compute_root();
      threadPerPoint(f, params.threads);
    }
    v.func.compute_root();
    threadPerPoint(v.func, params.threads);
  }

  KernelAnchors found = findAnchors(a);
  for (const auto &reader : found.readers) {
    if (!found.computedAlone(reader.first))
      continue;
    Value &lin = a.values[reader.first];
    lin.func.compute_root();
    scheduleProjections(ctx, params, lin.func, isSingleRow(lin), {&lin});
  }

  for (size_t i = 0; i < a.outputs.size(); ++i) {
    Func out = a.outputs[i];
    const Anchors &anchors = found.perOutput[i];
    if (anchors.attention >= 0) {
      Value &attention = a.values[anchors.attention];
      scheduleAttention(ctx, params, out, attention, isSingleRow(attention));
      continue;
    }
    std::vector<Value *> linears;
    for (int index : anchors.linears)
      if (!found.computedAlone(index))
        linears.push_back(&a.values[index]);
    if (linears.empty())
      threadPerPoint(out, params.threads);
    else
      scheduleProjections(ctx, params, out, isSingleRow(a.values[a.outputValues[i]]), linears);
  }
}
