//===- Attention.cpp - Attention per head, direct or in key tiles ---------===//
#include "CpuFast.h"

#include "../AttentionGroups.h"

using namespace Halide;

namespace tfm::kernels::cpufast {

namespace {

/// The value mix's update: vectors across the head dimension, `keys` the
/// reduction over keys (all of them, or a tile's).
void scheduleMix(AttentionFuncs &at, int lanes, bool shareGroup, RVar keys, bool parallelTiles) {
  Var dOuter("d_outer"), dInner("d_inner");
  Stage mix = at.mixed.update();
  mix.split(at.d, dOuter, dInner, lanesDividing(at.headDim, lanes));
  std::vector<VarOrRVar> loops{dInner, dOuter, keys};
  if (parallelTiles) // outside the reduction: one fork for all the tiles
    loops.push_back(at.t);
  orderSharingGroup(mix, at, shareGroup, loops);
  mix.vectorize(dInner);
  if (parallelTiles)
    mix.parallel(at.t);
}

/// Attention in key tiles (FlashAttention). Prefill: each task (a head, or
/// a KV group's heads, and a block of rows) merges the tiles in order,
/// computing each tile's scores, weights and sums just before merging them,
/// so no row of scores outlives its tile. Decode (flash-decoding): every
/// tile's partial softmax at once, the tiles shared out among the threads,
/// then each head merges its tiles.
void scheduleKeyTiles(ScheduleContext &ctx, Func out, AttentionFuncs &at, Var where, bool singleRow,
                      bool shareGroup) {
  KernelAlgorithm &a = ctx.algorithm;
  int lanes = ctx.vectorLanes, dLanes = lanesDividing(at.headDim, lanes);
  Var so("so"), si("si");
  RVar tile = at.overTiles.x;
  at.merged.compute_at(out, where).vectorize(at.d, dLanes);
  at.merged.update().reorder(at.d, a.row, at.h, tile).vectorize(at.d, dLanes);
  if (singleRow) {
    Var task("task");
    // Guarded: the window ends at the row's key, inside the last tile.
    for (Func f : {at.dot, at.score, at.weight})
      f.compute_root()
          .split(at.s, task, si, at.keyTile, TailStrategy::GuardWithIf)
          .parallel(task)
          .vectorize(si, lanes, TailStrategy::GuardWithIf);
    Stage dot = at.dot.update();
    dot.split(at.s, task, so, at.keyTile, TailStrategy::GuardWithIf)
        .split(so, so, si, lanes, TailStrategy::GuardWithIf);
    orderSharingGroup(dot, at, shareGroup, {si, so, a.row, task, at.overDim.x});
    dot.vectorize(si);
    at.maxScore.compute_root().parallel(at.t);
    at.maxScore.update().parallel(at.t);
    at.denom.compute_root().parallel(at.t);
    at.denom.update().parallel(at.t);
    at.mixed.compute_root().parallel(at.t).vectorize(at.d, dLanes);
    scheduleMix(at, lanes, shareGroup, at.inTile.x, true);
    return;
  }
  LoopLevel inTile(at.merged, tile);
  at.dot.compute_at(inTile).vectorize(at.s, lanes, TailStrategy::GuardWithIf);
  Stage dot = at.dot.update();
  dot.split(at.s, so, si, lanes, TailStrategy::GuardWithIf);
  orderSharingGroup(dot, at, shareGroup, {si, a.row, so, at.overDim.x});
  dot.vectorize(si);
  at.score.compute_at(inTile).vectorize(at.s, lanes, TailStrategy::GuardWithIf);
  at.maxScore.compute_at(inTile);
  at.weight.compute_at(inTile).vectorize(at.s, lanes, TailStrategy::GuardWithIf);
  at.denom.compute_at(inTile);
  at.mixed.compute_at(inTile).vectorize(at.d, dLanes);
  scheduleMix(at, lanes, shareGroup, at.inTile.x, false);
}

} // namespace

void scheduleAttention(ScheduleContext &ctx, const CpuFastParams &params, Func out,
                       Value &attention, bool singleRow) {
  KernelAlgorithm &a = ctx.algorithm;
  AttentionFuncs &at = attention.attention;
  int lanes = ctx.vectorLanes;
  Var head("head"), inHead("in_head"), task("task");
  out.split(a.col, head, inHead, at.headDim).vectorize(inHead, lanesDividing(at.headDim, lanes));
  // Grouped-query attention: a task holds the heads of a KV group, which
  // then share each key and value load; not for groups too large to unroll
  // (multi-query attention over many heads). Decode's direct algorithm
  // keeps a task per head: there are too few KV heads to balance the
  // threads (3 on 2 threads leave one idle a third of the time), and a
  // group's heads, adjacent tasks, find its keys in cache after the first.
  bool shareGroup = at.groupSize > 1 && at.groupSize <= 8 && (!singleRow || at.keyTile > 0);
  Var unit = head;
  if (shareGroup) {
    unit = Var("kv_head");
    out.split(head, unit, Var("in_group"), at.groupSize);
  }
  Var where = unit;
  if (singleRow) {
    out.parallel(unit);
  } else {
    // A task per head (or KV group) and block of rows: the block's key dot
    // products share each key-cache load (keys up to the block's last row;
    // each row then reduces over its own causal prefix).
    Var ro("ro"), ri("ri");
    out.split(a.row, ro, ri, params.attentionRows, TailStrategy::GuardWithIf)
        .reorder(inHead, ri, unit, ro)
        .fuse(unit, ro, task)
        .parallel(task);
    where = task;
  }
  if (at.keyTile > 0) {
    scheduleKeyTiles(ctx, out, at, where, singleRow, shareGroup);
    return;
  }
  Var so("so"), si("si");
  if (!singleRow && !shareGroup) {
    // Prefill: the task's scores a vector of keys at a time, for up to 16
    // of its rows, each vector's dot products summed over the head
    // dimension in registers: one key-cache load for the rows' products.
    // (Summed in memory, one key dimension at a time across all keys, the
    // 110M Llama's 128-token attention took 0.65 ms a layer, against
    // 0.27.) Rows past the call's last are computed too, from its last
    // query.
    int tileRows = std::min(params.attentionRows, 16);
    Var rowTile("row_tile"), rowInTile("row_in_tile");
    at.score.compute_at(out, where)
        .split(at.s, so, si, lanes, TailStrategy::GuardWithIf)
        .split(a.row, rowTile, rowInTile, tileRows, TailStrategy::GuardWithIf)
        .reorder(si, rowInTile, at.h, so, rowTile)
        .vectorize(si);
    at.dot.compute_at(at.score, so)
        .bound_extent(a.row, tileRows)
        .bound_storage(at.s, lanes)
        .bound_storage(at.h, 1)
        .vectorize(at.s, lanes, TailStrategy::GuardWithIf)
        .unroll(a.row);
    at.dot.update()
        .reorder(at.s, a.row, at.h, at.overDim.x)
        .vectorize(at.s, lanes, TailStrategy::GuardWithIf)
        .unroll(a.row);
  } else {
    at.dot.compute_at(out, where).vectorize(at.s, lanes, TailStrategy::GuardWithIf);
    // One key dimension at a time across all keys: a key-cache row is read
    // contiguously. (Reading all dimensions of a few keys instead walks
    // rows context * 4 bytes apart, which share L1 sets when that is a
    // multiple of 4 KiB.)
    Stage dot = at.dot.update();
    dot.split(at.s, so, si, lanes, TailStrategy::GuardWithIf);
    if (singleRow && at.headDim % 4 == 0) {
      // Four key dimensions per pass over the keys: four key-cache rows
      // read side by side, and a quarter of the loads and stores of the
      // sums.
      RVar dimGroup("dim_group"), dimInGroup("dim_in_group");
      dot.split(at.overDim.x, dimGroup, dimInGroup, 4);
      orderSharingGroup(dot, at, shareGroup, {si, dimInGroup, a.row, so, dimGroup});
      dot.unroll(dimInGroup);
    } else {
      orderSharingGroup(dot, at, shareGroup, {si, a.row, so, at.overDim.x});
    }
    dot.vectorize(si);
    at.score.compute_at(out, where).vectorize(at.s, lanes, TailStrategy::GuardWithIf);
  }
  at.maxScore.compute_at(out, where);
  at.weight.compute_at(out, where).vectorize(at.s, lanes, TailStrategy::GuardWithIf);
  at.denom.compute_at(out, where);
  at.mixed.compute_at(out, where).vectorize(at.d, lanesDividing(at.headDim, lanes));
  if (!singleRow && !shareGroup) {
    // Each value vector loaded once for 4 rows, whose sums stay in
    // registers: the head's values lie a cache row's length apart, too far
    // apart to stay in L1 for every row.
    Var dOuter("d_outer"), dInner("d_inner"), rowGroup("row_group"), inGroup("row_in_group");
    at.mixed.bound_storage(at.h, 1).bound_storage(a.row, params.attentionRows);
    at.mixed.update()
        .split(at.d, dOuter, dInner, lanesDividing(at.headDim, lanes))
        .split(a.row, rowGroup, inGroup, 4, TailStrategy::GuardWithIf)
        .reorder(dInner, dOuter, inGroup, at.overKeys.x, rowGroup)
        .vectorize(dInner)
        .unroll(dOuter)
        .unroll(inGroup);
    return;
  }
  scheduleMix(at, lanes, shareGroup, at.overKeys.x, false);
  // Decode's value rows lie a cache row's length apart, where the hardware
  // prefetchers do not run ahead of the mix (8 keys ahead gained 2.5% at
  // depth 1024 on the 110M Llama, 64 about 1% more, when Halide reached
  // only a row's first line; every line of it, PrefetchLineSteps.h: 0.356
  // -> 0.308 ms a layer, f16 cache, medians of 5 alternating runs).
  // Prefetching the key rows the same way, a few lines per step of the
  // dot products, made them slower (0.28 -> 0.37-0.42 ms): Halide issues
  // one prefetch per key of a step there, 32 per 8 keys.
  if (singleRow && params.prefetchBytes > 0)
    at.mixed.update().prefetch(a.values[attention.op->operands[2]].image, at.overKeys.x,
                               at.overKeys.x, 64, PrefetchBoundStrategy::NonFaulting);
}

} // namespace tfm::kernels::cpufast
