//===- Attention.cpp - Attention, a GPU block per head and row -----------===//
//
// Each block computes one head of one row: its threads run across the
// keys for the scores and weights (kept in shared memory) and across the
// head dimension for the value mix, reading each value row's consecutive
// elements together. The row's maximum and the weights' sum are one
// value each, computed by one thread. With key tiles (FlashAttention, the
// GPU's default: tfm-choose-attention) the block goes through the tiles in
// order, holding one tile's scores at a time, and merges them with an
// online softmax: shared memory stays the size of a tile, whatever the
// context. Decode, one row of a few heads, would leave most of a GPU idle
// that way: there the tiles are split among blocks (split-K, as
// flash-decoding), a block per tile and KV head computing the tile's
// summary for the group's heads, reading each key and value once for them
// (grouped-query attention), then a block per head merging the summaries.
//
//===----------------------------------------------------------------------===//
#include "Gpu.h"

#include "../AttentionGroups.h"

using namespace Halide;

namespace tfm::kernels::gpu {

namespace {

/// `f` over the keys of a block's row (all, or a tile's) at `where`: its
/// threads across the keys, in rounds of `threads`. With `shareGroup`, a
/// block holding a KV group's heads, its reduction over the head
/// dimension (the scores') reads each key element once for all of them.
void acrossKeys(const AttentionFuncs &at, Func f, LoopLevel where, int threads,
                bool shareGroup = false) {
  f.compute_at(where);
  for (int i = -1; i < f.num_update_definitions(); ++i) {
    Stage stage = i < 0 ? Stage(f) : f.update(i);
    Var round("round"), thread("thread");
    stage.split(at.s, round, thread, threads, TailStrategy::GuardWithIf).gpu_threads(thread);
    if (i >= 0)
      orderSharingGroup(stage, at, shareGroup, {at.overDim.x, thread, round}, 0);
  }
}

/// `f` over the head dimension at `where`, a thread per element. With
/// `shareGroup`, its reduction over the keys (the value mix) reads each
/// value element once for all of a KV group's heads.
void acrossHeadDim(const AttentionFuncs &at, Func f, RVar keys, LoopLevel where,
                   bool shareGroup = false) {
  f.compute_at(where).gpu_threads(at.d);
  for (int i = 0; i < f.num_update_definitions(); ++i) {
    f.update(i).gpu_threads(at.d);
    orderSharingGroup(f.update(i), at, shareGroup, {keys, at.d}, 0);
  }
}

} // namespace

void scheduleAttention(ScheduleContext &ctx, const GpuParams &params, Func out,
                       Value &attention, bool singleRow) {
  KernelAlgorithm &a = ctx.algorithm;
  AttentionFuncs &at = attention.attention;
  Var head("head"), inHead("in_head");
  out.split(a.col, head, inHead, at.headDim, TailStrategy::GuardWithIf)
      .gpu_blocks(head, a.row)
      .gpu_threads(inHead);
  LoopLevel block(out, head);
  if (at.keyTile == 0) {
    acrossKeys(at, at.dot, block, params.threads);
    acrossKeys(at, at.weight, block, params.threads);
    at.maxScore.compute_at(block);
    at.denom.compute_at(block);
    acrossHeadDim(at, at.mixed, at.overKeys.x, block);
    return;
  }
  // The tiles in order, a serial loop of the block around the threads of
  // each tile's work.
  RVar tile = at.overTiles.x;
  at.merged.compute_at(block).gpu_threads(at.d);
  at.merged.update().reorder(at.d, tile, at.h, a.row).gpu_threads(at.d);
  LoopLevel inTile(at.merged, tile);
  bool shareGroup = false;
  if (singleRow) {
    // Split-K: every tile's summary at once, a block per tile and KV head
    // (the heads of a group together, reading each key and value element
    // once), before the merge, which reads them from global memory.
    Var kvHead("kv_head"), inGroup("in_group");
    at.tileSummary.compute_root()
        .split(at.h, kvHead, inGroup, at.groupSize, TailStrategy::GuardWithIf)
        .reorder(at.d, inGroup, at.t, kvHead, a.row)
        .gpu_blocks(at.t, kvHead)
        .gpu_threads(at.d);
    inTile = LoopLevel(at.tileSummary, at.t);
    shareGroup = at.groupSize > 1;
  }
  acrossKeys(at, at.dot, inTile, params.threads, shareGroup);
  acrossKeys(at, at.weight, inTile, params.threads);
  // Halide sizes shared memory for every tile at once, from bounds of the
  // tile's keys over the tile loop whose clamps it cannot follow: the
  // whole context. A tile's keys are at most a tile.
  at.dot.bound_storage(at.s, at.keyTile);
  at.weight.bound_storage(at.s, at.keyTile);
  at.maxScore.compute_at(inTile);
  at.denom.compute_at(inTile);
  acrossHeadDim(at, at.mixed, at.inTile.x, inTile, shareGroup);
}

} // namespace tfm::kernels::gpu
