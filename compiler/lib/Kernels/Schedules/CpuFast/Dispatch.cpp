//===- Dispatch.cpp - Vectorised, multi-threaded CPU schedule -------------===//
//
// Each output of a kernel is tiled, and the ops it reads are computed inside
// its tiles:
//  * a projection feeding a single-row output (decode, and the prefill head)
//    is a matrix-vector product: blocks of output columns run in parallel,
//    each column a contiguous dot product that LLVM vectorises with several
//    accumulators (measured faster than an explicit rfactor over lanes);
//    a weight decoded as it is read (f16, bf16, blocks) is prefetched a few
//    KiB ahead of the dot product, which memory latency otherwise stalls;
//  * a projection feeding token rows (prefill) is a matrix product tiled in
//    registers: a few output columns by a few vectors of rows, each step
//    a vector of rows of the activations (laid out in tiles of rows once
//    per call) times one weight broadcast from its row, so the weights are
//    read in place (f16 and bf16 decoded once per task where they fit);
//    a task's tiles take the whole reduction at once, or a depth block at
//    a time (the block's activations kept in L1 for all of them);
//  * with 8-bit activations (a linear's activation_block), decode sums each
//    unit of 32 values in 8 lanes of integer dot products, and prefill's
//    tile takes 16 rows' quads of bytes against a column's broadcast quad
//    of levels (vpdpbusd where the target has VNNI), or, on a target with
//    AMX, sums 16 columns by 16 rows in a tile register;
//  * with bf16 inputs (a linear's bf16_input) on a target with AMX's bf16
//    tiles, prefill keeps 16 columns by 16 rows of sums in a tile register
//    for the whole row, taking pairs of values (tdpbf16ps);
//  * elementwise epilogues (bias, RoPE, SiLU·mul, GELU, residual adds,
//    column slices) are inlined into the output, so their inputs never leave
//    the tile;
//  * a projection that several outputs read (GPT-2's fused QKV, sliced into
//    q, k and v), or that an op reads across tiles (half-split RoPE), is
//    computed on its own, tiled as above, and the outputs read their
//    columns from it;
//  * norms (RMSNorm, LayerNorm) are materialised before the projections,
//    their row statistics computed once per row;
//  * attention runs one head (decode) or one head and block of rows (prefill)
//    per task, vectorised across key positions (contiguous when the key cache is transposed)
//    and across the head dimension for the value mix, prefill's scores and
//    mix in register tiles of rows; under grouped-query
//    attention a task holds a KV group's heads, which share each key and
//    value load.
//
//===----------------------------------------------------------------------===//
#include "CpuFast.h"

#include "../KernelAnchors.h"

#include <map>

using namespace Halide;
using namespace tfm::kernels;
using namespace tfm::kernels::cpufast;

namespace {

/// Tiles `out` over its columns (and rows) and computes the projections it
/// reads inside the tiles.
void scheduleProjections(ScheduleContext &ctx, const CpuFastParams &params, Func out, int cols,
                         bool singleRow, bool transposed, const std::vector<Value *> &linears,
                         ActivationReaders &activationReaders) {
  if (singleRow)
    scheduleMatvec(ctx, params, out, cols, linears);
  else
    scheduleMatmul(ctx, params, out, transposed, cols, linears, activationReaders);
}

} // namespace

void tfm::kernels::scheduleCpuFast(ScheduleContext &ctx, const CpuFastParams &params) {
  KernelAlgorithm &a = ctx.algorithm;
  int lanes = ctx.vectorLanes;

  // Tables of position alone (RoPE's cosines and sines): once per call,
  // rows in parallel.
  for (Value &v : a.values)
    for (Func f : v.positionTables) {
      f.compute_root();
      if (v.shape[0] != 1)
        f.parallel(a.row);
    }

  // Norms: the row statistics once per row, then the normalised rows, all
  // materialised so projections read finished rows.
  for (Value &v : a.values) {
    if (!v.op || opRecord(v.op->kind()).placement != Placement::RowNormalization)
      continue;
    for (Func f : v.rowStats)
      f.compute_root();
    v.func.compute_root().vectorize(a.col, lanesDividing(static_cast<int>(v.shape[1]), lanes));
    if (!v.tokenRows || v.shape[0] != 1)
      v.func.parallel(a.row);
  }

  // Linears computed on their own: read by several outputs, or across
  // tiles.
  KernelAnchors found = findAnchors(a);
  const std::vector<Anchors> &anchors = found.perOutput;
  ActivationReaders activationReaders;
  for (const auto &reader : found.readers) {
    if (!found.computedAlone(reader.first))
      continue;
    Value &lin = a.values[reader.first];
    lin.func.compute_root();
    scheduleProjections(ctx, params, lin.func, static_cast<int>(lin.shape.back()), isSingleRow(lin),
                        false, {&lin}, activationReaders);
  }

  // A kernel's single-row projection outputs (decode's query, key and
  // value) share one parallel loop over column tasks instead of one each:
  // a fork and join of the threads per kernel, not per output. The 110M
  // Llama's f16 decode_attn_in went from 0.141 to 0.128 ms a call (medians
  // of 5 alternating tools/bench_kernels.py rounds).
  std::vector<Func> matvecOutputs;
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    Func out = a.outputs[i];
    const KernelParam &param = *a.outputParams[i];
    bool singleRow = isSingleRow(a.values[a.outputValues[i]]);

    if (anchors[i].attention >= 0) {
      scheduleAttention(ctx, params, out, a.values[anchors[i].attention], singleRow);
      continue;
    }
    std::vector<Value *> linears;
    for (int index : anchors[i].linears)
      if (!found.computedAlone(index))
        linears.push_back(&a.values[index]);
    int cols = static_cast<int>(param.shape.back());
    bool transposed = param.isCache && param.cacheLayout == CacheLayout::Transposed;
    if (!linears.empty()) {
      scheduleProjections(ctx, params, out, cols, singleRow, transposed, linears,
                          activationReaders);
      if (singleRow) {
        if (!matvecOutputs.empty()) // scheduleMatvec's loop over column tasks
          out.compute_with(matvecOutputs.back(), Var("task"));
        matvecOutputs.push_back(out);
      }
      continue;
    }
    // Gathers, copies and plain elementwise outputs.
    int vec = lanesDividing(cols, lanes);
    if (transposed && !singleRow) { // rows are contiguous
      transposeInBlocks(out, a.values[a.outputValues[i]].func, a.col, a.row, lanes);
      continue;
    }
    out.vectorize(a.col, vec);
    if (param.shape.size() == 2 && !singleRow)
      out.parallel(a.row);
  }
  tileActivations(a, activationReaders, lanes);
  // A bf16 input of one row rounded once per call, not in every column's
  // loop (110M Llama decode: 117 tok/s in f32, 108 rounding in the loop);
  // many rows are rounded as they are transposed.
  for (auto &[input, rounded] : a.bf16Rounded)
    for (const Value &v : a.values)
      if (v.op && isSingleRow(v) && v.activations.defined() &&
          v.activations.name() == rounded.name()) {
        rounded.compute_root().vectorize(rounded.args()[0], lanes);
        break;
      }
}
