//===- CpuFastSchedule.cpp - Vectorised, multi-threaded CPU schedule ------===//
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
#include "Schedules.h"

#include "../OpRegistry.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

using namespace Halide;
using namespace tfm::kernels;

namespace {

/// Ops reached from an output through inlined elementwise ops that need a
/// placement of their own.
struct Anchors {
  std::set<int> linears;
  std::set<int> computedAlone; // linears read across tiles (readsOtherColumns)
  int attention = -1;
};

void collectAnchors(KernelAlgorithm &a, int index, Anchors &out, bool acrossTiles = false) {
  Value &v = a.values[index];
  if (!v.op)
    return;
  switch (opRecord(v.op->kind()).placement) {
  case Placement::Projection:
    out.linears.insert(index);
    if (acrossTiles)
      out.computedAlone.insert(index);
    return;
  case Placement::Attention:
    out.attention = index;
    return;
  case Placement::RowNormalization:
  case Placement::Gather:
    return; // materialised or gathered on their own
  case Placement::Inline:
    break;
  }
  for (int operand : v.op->operands)
    collectAnchors(a, operand, out, acrossTiles || v.readsOtherColumns);
}

/// The weight a projection reads.
const Value &weightOf(const KernelAlgorithm &a, const Value &linear) {
  return a.values[linear.op->operands[1]];
}

/// Whether the projection decodes its weight as it reads it (f16, bf16, a
/// block format).
bool decodesWeight(const KernelAlgorithm &a, const Value &linear) {
  const Value &w = weightOf(a, linear);
  return w.stored && w.stored->encoding() != tfm::ElementEncoding{};
}

/// Whether the projection reads its weight in a block format (its
/// reduction is then element, sub-block, block: StoredWeight.h).
bool blockedWeight(const Value &linear) { return linear.reduction.dimensions() > 1; }

/// Largest count of lanes <= `lanes` that divides `n`, so reductions need no
/// guarded tail.
int lanesDividing(int n, int lanes) {
  while (lanes > 1 && n % lanes != 0)
    lanes /= 2;
  return lanes;
}

/// A matrix-vector product reads its weights once per step, from memory,
/// and a core's own misses with the hardware prefetcher keep too few of
/// their lines in flight: each iteration of `loop` (one of the row's
/// `iterationsPerRow`) prefetches the weight some bytes further on, past
/// the row's end into the next rows (the rows are contiguous; a prefetch
/// past the buffer's end does not fault).
///
/// A block format's rows are prefetched `prefetchBytes` and at least two
/// rows ahead. On an Intel Sapphire Rapids VM a C loop over the 110M
/// Llama's q8_0 weights read 7.2 GB/s per core without prefetches and 18
/// with one per block 6.5 KiB ahead, the rate it reaches with the weights
/// in L2. Decode with 4 KiB (tfm-bench --rates, 3 runs): 110M q8_0 122 ->
/// 168 tok/s, f16 78 -> 100, Q4_K_M 148 -> 188; Llama 2 7B q8_0 2.3 ->
/// 2.55. Its file cached in 2 MiB pages, 7B ran at 2.9 with 4 KiB and 3.05
/// with two of its rows (8.5 KiB).
///
/// A 16-bit float row (f16, bf16) is prefetched `prefetchHalfBytes` ahead,
/// nearer: on a 2-core AMD EPYC (Zen 3) with the weights in 2 MiB pages,
/// a C loop of f16 row dot products read 30.4 GB/s with prefetches 4 KiB
/// ahead and 34.5 with 1 KiB (f32 rows, none: 39.3; medians of 15), and
/// the 110M Llama's f16 decode went from 129-131 to 140-141 tok/s with
/// 1 KiB, 134 with 3 KiB, 136 with 2 KiB, 138 with 512 bytes (7
/// alternating tfm-bench --rates runs each), while q8_0's and Q4_K_M's
/// 8-bit decode lost 6-12% with their blocks 1 KiB ahead. Llama 2 7B's f16
/// decode (rows of 8 KiB, before prefetched two rows ahead) read 26-30
/// GB/s with 16 KiB, 26-31 with 4 KiB, 29-33 with 2 KiB and 31-35 with 1
/// KiB (4 alternating tfm-bench runs each).
///
/// Halide 14 steps through a prefetched region 64 elements at a time, not
/// 64 bytes: each iteration here reads one line or less of 16-bit elements,
/// or a block's level bytes, a line at a time from the first
/// (decodeAffineAsVectors prefetches the k-quants' scales, which lie
/// outside them). The back end makes them prefetcht0 (PrefetchLocality.h).
void prefetchWeightAhead(Stage stage, const KernelAlgorithm &a, const Value &lin, VarOrRVar loop,
                         int iterationsPerRow, const CpuFastParams &params) {
  if (params.prefetchBytes <= 0)
    return;
  const Value &weight = weightOf(a, lin);
  int64_t rowBytes = weight.stored->encoding().bytes(weight.shape[1]);
  int64_t ahead = blockedWeight(lin) ? std::max<int64_t>(params.prefetchBytes, 2 * rowBytes)
                                     : params.prefetchHalfBytes;
  int64_t iterations = (ahead * iterationsPerRow + rowBytes - 1) / rowBytes;
  stage.prefetch(weight.image, loop, loop, static_cast<int>(iterations),
                 PrefetchBoundStrategy::NonFaulting);
}

/// A matrix-vector product's row of sub-block multipliers and offsets
/// decoded together, as vectors, before its dot product (one at a time
/// they cost as much as the values). Its loads reach every cache line of
/// the row at once, ahead of the dot product: on an Intel Sapphire Rapids
/// VM, decoding one-scale-per-block formats inside the dot product instead
/// left its loads waiting on memory one block at a time, and decode of
/// Llama 2 7B q8_0 ran at 1.14 tok/s against 1.91 with the vectors (the
/// 110M Llama's q8_0 at 65-72 against 116-121). An AMD Zen 4 VM measured
/// the other way for 7B's long rows (3.1 inside, 2.45 as vectors), and
/// the same way for the 110M's; the target string cannot tell the two
/// apart (both run avx512_sapphirerapids). (The same Sapphire Rapids VM,
/// with prefetches, now decodes 8-bit products of two one-scale blocks
/// a step faster inside the step: scheduleIntegerMatvec.)
void decodeAffineAsVectors(ScheduleContext &ctx, const CpuFastParams &params,
                           const KernelAlgorithm &a, Value &lin) {
  const StoredWeight &weight = *weightOf(a, lin).stored;
  Func affine = lin.subBlockAffine;
  Var i = affine.args()[0], sub = affine.args()[1], block = affine.args()[2];
  affine.compute_at(lin.product, a.col).unroll(i);
  if (weight.subBlocks() > 1) {
    // The multipliers in one run and the offsets in another: q4_K's and
    // q5_K's dot products read each as a vector without shuffles (the 7B
    // Llama's q4_K column loop: 297 -> 229 instructions). The 110M
    // Llama's Q4_K_M with 8-bit activations, one thread, cache-resident
    // (tools/bench_kernels.py --threads 1 --prompt 1 --decode 32, two runs
    // of 7 rounds): decode_ffn_in 0.221 -> 0.190 and 0.287 -> 0.236 ms;
    // Llama 2 7B's decode, from memory, stayed within the machine's noise
    // (4.13 -> 4.07 tok/s, 6 alternating rounds).
    affine.reorder_storage(sub, i, block)
        .vectorize(sub, lanesDividing(weight.subBlocks(), ctx.vectorLanes));
    // The dot product prefetches a k-quant block's level bytes a line at a
    // time from their first, and misses a line where their last bytes and
    // the next block's scales share one (q4_K's 144-byte blocks: one line
    // in 9). The scales, prefetched here as they are decoded, fill the
    // gap. Decode with 8-bit activations (tfm-bench --rates, 3 alternating
    // runs): Llama 2 7B Q4_K_M 5.15-5.25 -> 5.29-5.38 tok/s, the 110M
    // Llama's 315-324 -> 329-331; with f32 activations, whose products
    // decode more per byte, the 110M's stayed at 191-201.
    prefetchWeightAhead(affine, a, lin, block, weight.blocks(), params);
  } else {
    affine.vectorize(block, lanesDividing(weight.blocks(), ctx.vectorLanes));
  }
}

/// Pairs of products (IntegerProduct::pairDot, where the target multiplies
/// bytes in pairs) as one vector reduction (pmaddubsw) at `at`: a unit's
/// 16 pairs in decode, and in prefill with `rowLanes` rows' pairs of a
/// quad side by side. Halide 14 cannot prove a saturating sum
/// associative; no pair's sum saturates (KernelAlgorithm.h), so it is.
void schedulePairDot(IntegerProduct &ip, LoopLevel at, int rowLanes = 1) {
  if (!ip.pairDot.defined())
    return;
  Var pair = ip.pairDot.args()[0], row = ip.pairDot.args()[3];
  Stage sums = ip.pairDot.update();
  ip.pairDot.compute_at(at).reorder(pair, row).vectorize(pair);
  sums.reorder(ip.inPair.x, pair, row)
      .atomic(/*override_associativity_test=*/true)
      .vectorize(ip.inPair.x)
      .vectorize(pair);
  if (rowLanes > 1) {
    ip.pairDot.vectorize(row, rowLanes, TailStrategy::RoundUp);
    sums.vectorize(row, rowLanes, TailStrategy::RoundUp);
  }
}

/// A k-quant's matrix-vector product with 8-bit activations summed per
/// block in integers (IntegerProduct::blockDot): per column, a block's
/// units unrolled (their nibbles' shifts constants), each unit's 16 pair
/// sums widened times its sub-blocks' scales (pmaddwd) into the block's 8
/// lanes, and the lanes scaled to f32 once per block.
void scheduleBlockSumMatvec(ScheduleContext &ctx, const CpuFastParams &params,
                            const KernelAlgorithm &a, Value &lin) {
  IntegerProduct &ip = *lin.integer;
  const StoredWeight &weight = *weightOf(a, lin).stored;
  if (ip.zeroPointPairs.defined())
    ip.zeroPointPairs.compute_root().vectorize(ip.zeroPointPairs.args()[0]);
  ip.lanes.compute_at(lin.product, a.col).vectorize(ip.group);
  RVar block = ip.overBlocks.x, pairOfGroup = ip.inBlock.x, unit = ip.inBlock.y;
  Stage sums = ip.lanes.update();
  sums.reorder(ip.group, block).vectorize(ip.group);
  prefetchWeightAhead(sums, a, lin, block, weight.blocks(), params);
  ip.blockDot.compute_at(ip.lanes, block).vectorize(ip.group);
  ip.blockDot.update()
      .reorder(pairOfGroup, ip.group, unit)
      .atomic()
      .vectorize(pairOfGroup)
      .vectorize(ip.group)
      .unroll(unit);
  schedulePairDot(ip, LoopLevel(ip.blockDot, unit));
  // A block's scales as one vector (by sub-block: the lanes' bytes lie
  // next to each other; a vector across blocks gathered them a byte at a
  // time).
  ip.subScales.compute_at(lin.product, a.col)
      .vectorize(ip.subScales.args()[0], lanesDividing(weight.subBlocks(), 2 * ctx.vectorLanes));
  ip.multipliers.compute_at(lin.product, a.col)
      .vectorize(ip.multipliers.args()[0], lanesDividing(weight.blocks(), ctx.vectorLanes));
  lin.product.update(0).atomic().vectorize(ip.overGroups.x);
  if (ip.offsetDot.defined()) {
    ip.offsetDot.compute_at(lin.product, a.col).vectorize(ip.group);
    ip.offsetDot.update().vectorize(ip.group);
    decodeAffineAsVectors(ctx, params, a, lin);
  }
}

/// A matrix-vector product with 8-bit activations: per column, each unit's
/// 8 lanes of integer dot products (vpdpbusd) scaled and summed as a
/// vector (two units' 16 lanes at a time), the lanes added at the end of
/// the row; q4_K's and q5_K's offsets' dot product over
/// sub-blocks, a vector too, computed per column before them, from the
/// same decoded multipliers and offsets. Two units at a time, 110M Llama
/// with 8-bit activations (tfm-bench --rates, 3 alternating runs): Q4_K_M
/// decode 249-254 -> 257-268 tok/s, q8_0 164-176 -> 175-185.
void scheduleIntegerMatvec(ScheduleContext &ctx, const CpuFastParams &params,
                           const KernelAlgorithm &a, Value &lin) {
  IntegerProduct &ip = *lin.integer;
  const StoredWeight &weight = *weightOf(a, lin).stored;
  // The input quantized once per call.
  for (Func f : {ip.scale, ip.quantized, ip.offsetTerms})
    if (f.defined())
      f.compute_root().vectorize(f.args()[0], ctx.vectorLanes, TailStrategy::GuardWithIf);
  if (ip.zeroPointSums.defined()) {
    ip.zeroPointSums.compute_root().vectorize(ip.group);
    ip.zeroPointSums.update().vectorize(ip.group);
  }
  if (ip.blockDot.defined()) {
    scheduleBlockSumMatvec(ctx, params, a, lin);
    return;
  }
  // A block's units unrolled: their sub-block's bit positions (k-quants'
  // nibbles and q6_K's high bits) are then constants, where a shift by a
  // loop variable costs a dozen instructions on bytes.
  int unitsPerBlock = weight.subBlocks() * weight.subBlockSize() / 32;
  RVar blockOfUnits("block_of_units"), unitInBlock("unit_in_block");
  ip.lanes.compute_at(lin.product, a.col).vectorize(ip.group);
  const int64_t *units = as_const_int(ip.overUnits.x.extent());
  bool pairsInBlock = unitsPerBlock % 2 == 0;
  // Blocks of one unit (q8_0, q4_0) pair only with AVX-512: with AVX2
  // their pairs, each decoding two multipliers in the step, measured
  // no faster than one chain after the row's multipliers decoded as
  // vectors: the 110M Llama's q8_0 decode kernels took 2-17% more time
  // each (5 alternating runs, in either order; the unchanged attention
  // kernel moved 9-27% with them), Llama 2 7B q8_0 decoded 2.53 tok/s
  // against 2.72 (5 runs) after 2.59 against 2.27 (3 runs).
  bool pairsOfBlocks =
      ctx.vectorLanes >= 16 && unitsPerBlock == 1 && units && *units % 2 == 0;
  if (pairsInBlock || pairsOfBlocks) {
    // Two units side by side in 16 lanes (two of a block's, or the units
    // of two blocks of one unit each): their scaling and accumulation each
    // one AVX-512 instruction where one unit filled half, and with AVX2
    // two chains of FMAs where one chain, each FMA waiting on the last,
    // held a unit to the FMA's latency (perf annotate: the samples sat
    // on the FMAs). The 110M Llama's Q4_K_M decode kernels on an AVX2
    // AMD EPYC, one thread (tools/bench_kernels.py, 7 alternating runs):
    // 3-9% less time for five of six, the sixth equal. Llama 2 7B Q4_K_M
    // decode, 2 threads, its weights read from memory: 3.56 -> 3.97 tok/s
    // in one run of 3 rounds, equal (3.21, 3.24) in another of 5.
    RVar pairOfUnits("pair_of_units"), unitOfPair("unit_of_pair"), pairInBlock("pair_in_block");
    Var parity("parity");
    Stage sums = ip.lanes.update();
    sums.split(ip.overUnits.x, pairOfUnits, unitOfPair, 2);
    Func pairs = sums.rfactor(unitOfPair, parity);
    pairs.compute_at(lin.product, a.col).reorder(ip.group, parity).vectorize(ip.group).vectorize(
        parity);
    Stage pairSums = pairs.update();
    RVar pairLoop = pairOfUnits;
    if (pairsInBlock) {
      pairSums.split(pairOfUnits, blockOfUnits, pairInBlock, unitsPerBlock / 2)
          .reorder(ip.group, parity, pairInBlock, blockOfUnits)
          .unroll(pairInBlock);
      pairLoop = pairInBlock;
      prefetchWeightAhead(pairSums, a, lin, blockOfUnits, weight.blocks(), params);
    } else {
      pairSums.reorder(ip.group, parity, pairOfUnits);
      prefetchWeightAhead(pairSums, a, lin, pairOfUnits, weight.blocks() / 2, params);
    }
    pairSums.vectorize(ip.group).vectorize(parity);
    Var unit = ip.unitDot.args()[1];
    ip.unitDot.compute_at(pairs, pairLoop).reorder(ip.group, unit).vectorize(ip.group).unroll(
        unit, 2);
    schedulePairDot(ip, LoopLevel(pairs, pairLoop));
    ip.unitDot.update()
        .reorder(ip.inGroup.x, ip.group, unit)
        .atomic()
        .vectorize(ip.inGroup.x)
        .vectorize(ip.group)
        .unroll(unit, 2);
    ip.lanes.update().vectorize(ip.group);
  } else {
    ip.lanes.update()
        .split(ip.overUnits.x, blockOfUnits, unitInBlock, unitsPerBlock)
        .reorder(ip.group, unitInBlock, blockOfUnits)
        .vectorize(ip.group)
        .unroll(unitInBlock);
    prefetchWeightAhead(ip.lanes.update(), a, lin, blockOfUnits, weight.blocks(), params);
    ip.unitDot.compute_at(ip.lanes, unitInBlock).vectorize(ip.group);
    schedulePairDot(ip, LoopLevel(ip.lanes, unitInBlock));
    ip.unitDot.update().reorder(ip.inGroup.x, ip.group).atomic().vectorize(ip.inGroup.x).vectorize(
        ip.group);
  }
  lin.product.update(0).atomic().vectorize(ip.overGroups.x);
  if (ip.offsetDot.defined()) {
    ip.offsetDot.compute_at(lin.product, a.col).vectorize(ip.group);
    ip.offsetDot.update().vectorize(ip.group);
  }
  // Two blocks of one multiplier each a step (q8_0, q4_0): their two
  // multipliers are decoded in the step, from the line its levels start
  // in, rather than in a pass over the row's scales before it, whose
  // loads gathered each f16 a byte at a time. Llama 2 7B q8_0 decode
  // (tfm-bench --rates, 3 alternating runs) 3.20-3.31 -> 3.41-3.64
  // tok/s; the 110M Llama's q8_0 203-216 -> 200-230.
  if (pairsOfBlocks)
    return;
  decodeAffineAsVectors(ctx, params, a, lin);
  ip.multipliers.compute_at(lin.product, a.col)
      .vectorize(ip.multipliers.args()[0],
                 lanesDividing(weight.subBlocks() * weight.blocks(), ctx.vectorLanes));
}

void scheduleMatvec(ScheduleContext &ctx, const CpuFastParams &params, Func out, int cols,
                    const std::vector<Value *> &linears) {
  KernelAlgorithm &a = ctx.algorithm;
  Var task("task"), ci("ci");
  int perTask = std::min(params.matvecColumns, cols);
  out.split(a.col, task, ci, perTask, TailStrategy::ShiftInwards).parallel(task);
  for (Value *lin : linears) {
    lin->product.compute_at(out, task);
    if (lin->integer) {
      scheduleIntegerMatvec(ctx, params, a, *lin);
      continue;
    }
    // Each column's reduction is one contiguous dot product; LLVM vectorises
    // it with several accumulators (Halide allows reassociating floats).
    // Its f32 rows stream at the rate of memory without prefetches (110M
    // Llama: 50 tok/s, 22 GB/s; 47 with them).
    if (!decodesWeight(a, *lin))
      continue;
    // A weight decoded as it is read (f16, bf16, a block format): a vector
    // of partial sums across a run of elements (a sub-block: its bytes load
    // as one vector), summed at the end of the row. LLVM vectorises the f32
    // loop well by itself, but a decoding loop only at half width with two
    // accumulators.
    // The row's serial loop: over blocks, or over runs of a plain row.
    RVar run = lin->reduction.x, loop = blockedWeight(*lin) ? lin->reduction.z : RVar("rest");
    int iterationsPerRow = blockedWeight(*lin) ? weightOf(a, *lin).stored->blocks() : 0;
    if (!blockedWeight(*lin)) {
      run = RVar("run");
      int rowLength = static_cast<int>(weightOf(a, *lin).shape[1]);
      int runLength = lanesDividing(rowLength, 2 * ctx.vectorLanes);
      lin->product.update().split(lin->reduction.x, loop, run, runLength);
      iterationsPerRow = rowLength / runLength;
    }
    const StoredWeight &weight = *weightOf(a, *lin).stored;
    Var lane("lane"), subLane("sub_lane");
    Stage sums = lin->product.update();
    if (blockedWeight(*lin) && weight.subBlocks() > 1) {
      // The k-quants' sub-blocks of 16 or 32 values: one vector of partial
      // sums per sub-block of a block, so that 8 or 16 independent chains
      // of FMAs hide their latency (one chain, its next FMA waiting on the
      // last, ran q6_K's rows at a quarter of the FMA rate).
      RVar subBlock = lin->reduction.y;
      Func partial = sums.rfactor({{run, lane}, {subBlock, subLane}});
      partial.compute_at(lin->product, a.col).vectorize(lane).unroll(subLane);
      partial.update()
          .reorder(lane, subLane, lin->reduction.z)
          .vectorize(lane)
          .unroll(subLane);
      prefetchWeightAhead(partial.update(), a, *lin, loop, iterationsPerRow, params);
      // The chains' vectors added together before one sum across lanes:
      // a sum across lanes per chain (16 for q6_K) cost more instructions
      // than the row's dot product itself.
      Var lanesOfChains("lanes_of_chains");
      Func summedChains = sums.rfactor(run, lanesOfChains);
      summedChains.compute_at(lin->product, a.col).vectorize(lanesOfChains);
      summedChains.update().vectorize(lanesOfChains).unroll(subBlock);
      sums.atomic().vectorize(run);
    } else {
      Func partial = sums.rfactor(run, lane);
      partial.compute_at(lin->product, a.col).vectorize(lane);
      partial.update().vectorize(lane);
      prefetchWeightAhead(partial.update(), a, *lin, loop, iterationsPerRow, params);
      // The lanes summed as a tree of vector adds, not one after another
      // (a chain of 32 dependent adds per column took a third of the time).
      sums.atomic().vectorize(run);
    }
    if (blockedWeight(*lin))
      decodeAffineAsVectors(ctx, params, a, *lin);
  }
}

/// Largest divisor of `n` that is at most `limit`.
int divisorAtMost(int n, int limit) {
  for (int d = std::min(n, limit); d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

/// Schedules `f`, stored contiguously along `y`, as a transpose of
/// `source`, stored contiguously along `x`: lanes x lanes blocks loaded
/// along x and stored along y, the block transposed in registers instead of
/// gathered or scattered element by element. The blocks run in parallel
/// along y's blocks, or along `across` (a dimension outside both).
void transposeInBlocks(Func f, Func source, Var x, Var y, int lanes,
                       std::optional<Var> across = std::nullopt) {
  Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
  Func block = source.in(f);
  f.tile(x, y, xo, yo, xi, yi, lanes, lanes, TailStrategy::GuardWithIf)
      .reorder(yi, xi, xo, yo)
      .vectorize(yi)
      .unroll(xi)
      .parallel(across ? *across : yo);
  // A block of constant size on the stack: sized by the tile's extent, it
  // was a heap allocation per block (a thousand per prefill call).
  block.compute_at(f, xo)
      .bound_storage(block.args()[0], lanes)
      .bound_storage(block.args()[1], lanes)
      .store_in(MemoryType::Stack)
      .vectorize(block.args()[0], lanes, TailStrategy::GuardWithIf)
      .unroll(block.args()[1], lanes, TailStrategy::GuardWithIf);
}

/// Vectors of rows in a register tile of the prefill matrix product with
/// `cols` output columns: its accumulators (cols x rowVectors), one vector
/// of activations per row vector and a broadcast weight fill the register
/// file (AVX-512's 32 zmm: 6 columns by 4; AVX2's 16 ymm: 6 by 2). With
/// 8-bit activations each accumulator has an integer twin, and the bytes,
/// the scales and the broadcast levels take four more.
int matmulRowVectors(int lanes, int cols, bool integer) {
  int registers = lanes >= 16 ? 32 : 16;
  if (integer)
    return std::max(1, (registers - 4) / (2 * cols));
  return std::max(1, (registers - 1) / (cols + 1));
}

/// Columns and rows of an AMX tile of int32 sums: 16 rows of 64 bytes.
constexpr int kAmxTile = 16;

/// Whether a prefill product multiplies in AMX tiles: signed levels
/// (IntegerProduct::signedLevels) or bf16 pairs (Value::bf16Pairs), in a
/// kernel whose tiles are whole (`cols` at least a tile).
bool multipliesInAmxTiles(const Value &lin, int cols) {
  bool tileForm = (lin.integer && lin.integer->signedLevels) || lin.bf16Pairs.defined();
  return tileForm && cols >= kAmxTile;
}

/// A bf16 input's pairs, once per call for every product reading them.
void computeBf16Pairs(Value &lin) {
  Func pairs = lin.bf16Pairs; // (j, i, pair, tile)
  Var j = pairs.args()[0], i = pairs.args()[1], tile = pairs.args()[3];
  pairs.compute_root().vectorize(j).unroll(i).parallel(tile);
}

/// The tdpbf16ps steps (a pair of values each) that the back end folds into
/// one product of 64 bytes' depth (tfm/Codegen/AmxTileProducts.h).
constexpr int kBf16StepsPerProduct = 16;

/// A prefill product of bf16 inputs (Value::bf16Pairs) for 16 columns by 16
/// rows, whose f32 sums stay in an AMX tile register for the whole row:
/// tilezero, then tdpbf16ps taking a pair of each column's weights (read in
/// place, rows of the tile operand a column apart) and the 16 rows' pairs
/// of inputs (one row of the operand) at a time, unrolled 16 pairs deep for
/// the back end to fold into one instruction of 32 pairs. The sums are
/// copied to the stack for the epilogue, rows padded to 32 as
/// scheduleAmxTileDot's are.
void scheduleBf16TileProduct(ScheduleContext &ctx, Func out, Var ro, Value &lin) {
  KernelAlgorithm &a = ctx.algorithm;
  Func prod = lin.product, sums = prod.in();
  RDom over = lin.reduction; // (j, pair)
  Var ri("ri"), ci("ci");
  RVar pairBlock("pair_block"), inPairBlock("in_pair_block");
  computeBf16Pairs(lin);
  sums.compute_at(out, ro)
      .bound_extent(a.row, kAmxTile)
      .store_in(MemoryType::Stack)
      .reorder_storage(a.row, a.col)
      .align_storage(a.row, 2 * kAmxTile)
      .reorder(a.row, a.col)
      .vectorize(a.row)
      .vectorize(a.col);
  // Inside its copy: a kernel's products (SwiGLU's two) each hold the
  // tile register in turn, as Halide 14 allows one AMX allocation at a time.
  prod.compute_at(sums, Var::outermost())
      .store_in(MemoryType::AMXTile)
      .reorder_storage(a.row, a.col)
      .tile(a.row, a.col, ri, ci, kAmxTile, kAmxTile)
      .vectorize(ri)
      .vectorize(ci);
  prod.update()
      .tile(a.row, a.col, ri, ci, kAmxTile, kAmxTile, TailStrategy::GuardWithIf)
      .split(over.y, pairBlock, inPairBlock,
             divisorAtMost(static_cast<int>(weightOf(a, lin).shape[1] / 2),
                           kBf16StepsPerProduct))
      .reorder(over.x, ri, ci, inPairBlock, pairBlock, a.row, a.col)
      .atomic()
      .vectorize(over.x)
      .vectorize(ri)
      .vectorize(ci)
      .unroll(inPairBlock);
}

/// Each piece's integer sums for the product's 16 columns by 16 rows in an
/// AMX tile register: tilezero, then tdpbssd taking 4 bytes of depth of the
/// columns' levels (q8_0's read in place, the other formats' unpacked once
/// per block of columns) and of 16 rows' quads at a time. Halide 14
/// matches a tile product of no more depth per instruction (a split of the
/// piece's 32 bytes by 16, 32 or 64 fails: "Store to AMX tile allocation
/// of a non-tile value"); the back end folds a piece's 8 (q6_K's pieces of
/// 16: 4) into one (tfm/Codegen/AmxTileProducts.h). The sums are then
/// stored to the stack for the f32 scaling, through a copy whose rows are
/// padded to 32 sums: a dense 16 x 16 block's index is one flat ramp, which
/// Halide 14 does not turn into a tile store. Computing two units' tiles before scaling
/// either, for the tile products to overlap, measured the same.
void scheduleAmxTileDot(ScheduleContext &ctx, Value &lin) {
  KernelAlgorithm &a = ctx.algorithm;
  IntegerProduct &ip = *lin.integer;
  Func dot = ip.pieceDot, sums = dot.in(lin.product);
  Var piece = dot.args()[0], unit = dot.args()[3];
  Var ri("ri"), ci("ci");
  sums.compute_at(lin.product, ip.overPieces.x)
      .store_in(MemoryType::Stack)
      .reorder_storage(a.row, a.col, piece, unit)
      .align_storage(a.row, 2 * kAmxTile)
      .reorder(a.row, a.col, piece, unit)
      .vectorize(a.row)
      .vectorize(a.col);
  dot.compute_at(sums, unit)
      .store_in(MemoryType::AMXTile)
      .reorder_storage(a.row, a.col, piece, unit)
      .tile(a.row, a.col, ri, ci, kAmxTile, kAmxTile)
      .vectorize(ri)
      .vectorize(ci);
  dot.update()
      .tile(a.row, a.col, ri, ci, kAmxTile, kAmxTile, TailStrategy::GuardWithIf)
      .reorder(ip.inPiece.x, ri, ci, ip.inPiece.y, a.row, a.col, piece, unit)
      .atomic()
      .vectorize(ip.inPiece.x)
      .vectorize(ri)
      .vectorize(ci);
}

/// A prefill matrix product with 8-bit activations in its register tile:
/// for each unit's pieces, the integer sums of a vector of rows per
/// column (vpdpbusd: 16 rows' quads of bytes against one column's quad of
/// levels, broadcast; or an AMX tile of them), then scaled into the f32
/// accumulators.
void scheduleIntegerMatmul(ScheduleContext &ctx, Func out, Var co, Value &lin, int colTile,
                           int rowTile, bool amxTiles) {
  KernelAlgorithm &a = ctx.algorithm;
  IntegerProduct &ip = *lin.integer;
  int lanes = ctx.vectorLanes;
  Var rvo("rvo"), rvi("rvi");
  // The input quantized once per call; scales and sums stored by row, as
  // the tile reads a vector of rows of them at a time.
  for (Func f : {ip.scale, ip.offsetTerms})
    if (f.defined())
      f.compute_root()
          .reorder_storage(a.row, f.args()[0])
          .vectorize(f.args()[0], lanes, TailStrategy::GuardWithIf)
          .parallel(a.row);
  ip.quantized.compute_root().vectorize(ip.quantized.args()[0], lanes).parallel(a.row);
  ip.quads.compute_root().vectorize(ip.quads.args()[0]).parallel(ip.quads.args().back());
  // The column block's multipliers and offsets, and levels where they are
  // unpacked, once for all its row tiles.
  lin.subBlockAffine.compute_at(out, co);
  if (ip.levels.defined())
    ip.levels.compute_at(out, co).vectorize(ip.levels.args()[0]);

  // Whole vectors of rows, no tail: rows past the call's read its last row
  // (Ops/Linear.cpp), and the output's tiles store only the call's.
  Func prod = lin.product;
  Stage scaled = prod.update(0);
  scaled.split(a.row, rvo, rvi, lanes, TailStrategy::RoundUp)
      .reorder(rvi, rvo, a.col, ip.overPieces.x, ip.overPieces.y)
      .vectorize(rvi)
      .unroll(rvo)
      .unroll(a.col);
  // A block's units unrolled, as in decode (scheduleIntegerMatvec): the
  // k-quants' nibble and high-bit positions are then constants.
  const StoredWeight &weight = *weightOf(a, lin).stored;
  int unitsPerBlock = weight.subBlocks() * weight.subBlockSize() / 32;
  if (unitsPerBlock > 1 && !amxTiles) {
    RVar blockOfUnits("block_of_units"), unitInBlock("unit_in_block");
    scaled.split(ip.overPieces.y, blockOfUnits, unitInBlock, unitsPerBlock).unroll(unitInBlock);
  }
  if (ip.offsets.defined())
    prod.update(1)
        .split(a.row, rvo, rvi, lanes, TailStrategy::RoundUp)
        .reorder(rvi, rvo, a.col, ip.overSubBlocks.x)
        .vectorize(rvi)
        .unroll(rvo)
        .unroll(a.col);
  if (amxTiles) {
    scheduleAmxTileDot(ctx, lin);
    return;
  }

  Func dot = ip.pieceDot;
  Var piece = dot.args()[0], unit = dot.args()[3];
  dot.compute_at(prod, ip.overPieces.x)
      .bound_storage(a.col, colTile)
      .bound_storage(a.row, rowTile)
      .store_in(MemoryType::Stack)
      .reorder_storage(a.row, a.col, piece, unit)
      .split(a.row, rvo, rvi, lanes, TailStrategy::RoundUp)
      .vectorize(rvi)
      .unroll(rvo)
      .unroll(a.col);
  dot.update()
      .split(a.row, rvo, rvi, lanes, TailStrategy::RoundUp)
      .reorder(ip.inPiece.x, rvi, rvo, a.col, ip.inPiece.y, piece, unit)
      .atomic()
      .vectorize(ip.inPiece.x)
      .vectorize(rvi)
      .unroll(rvo)
      .unroll(a.col);
  // With pairs of bytes, a vector of rows' pairs of a quad per step of
  // the tile, summed into the step's pieceDot lanes (pmaddwd).
  schedulePairDot(ip, LoopLevel(dot, rvo), lanes);
}

/// The activations that prefill products read (Value::activations), by
/// name: the kernel lays each out in row tiles once for all of them,
/// whichever outputs they feed (the q, k and v of an attention input read
/// one normalised input).
using ActivationReaders = std::map<std::string, Func>;

/// The most bytes of decoded f16 or bf16 weights a prefill matrix product's
/// task keeps for all its row tiles: half a Zen 3's L2.
constexpr int64_t kDecodedWeightsPerTask = 256 * 1024;

/// The reduction steps of a prefill product's depth block
/// (CpuFastParams::matmulDepth): a divisor of its outermost reduction loop
/// (elements, or blocks of a block format, at least one), so the blocks
/// need no guarded tail; all of them for a depth of 0.
int depthBlockSteps(const KernelAlgorithm &a, const Value &lin, int depth) {
  const Value &w = weightOf(a, lin);
  int steps = blockedWeight(lin) ? w.stored->blocks() : static_cast<int>(w.shape[1]);
  if (depth <= 0)
    return steps;
  if (!blockedWeight(lin))
    return divisorAtMost(steps, depth);
  const StoredWeight &sw = *w.stored;
  return divisorAtMost(steps, std::max(1, depth / (sw.subBlocks() * sw.subBlockSize())));
}

/// A prefill matrix product. The output is computed in tasks of a group of
/// register tiles' columns by a tile of rows. Within a task, the reduction
/// may run in depth blocks (CpuFastParams::matmulDepth), each block
/// visiting every tile of the group, so that a block's activations stay in
/// L1 for all the group's columns. That paid (110M Llama prefill on
/// Sapphire Rapids: f16 1350 -> 1460 tok/s, q8_0 1430 -> 1520) while a tile
/// of rows lay a whole call's rows apart at each step. Read in row tiles
/// (KernelAlgorithm::rowTiles), a tile's activations are one contiguous
/// stream, and the whole reduction at once is faster (110M Llama f32 on an
/// AVX2 Zen 3, medians of 7 alternating tfm-bench runs, three runs: depth
/// blocks of 128 642, of 256 671-698, of 768 683-729, whole 741-760
/// tok/s). Groups of 2, 4 and 8 tiles measured the same.
/// Each tile's sums over a block are a register tile of their own (an
/// rfactor over the blocks), added into the group's products after it.
void scheduleMatmul(ScheduleContext &ctx, const CpuFastParams &params, Func out, bool transposed,
                    int cols, const std::vector<Value *> &linears, ActivationReaders &readers) {
  KernelAlgorithm &a = ctx.algorithm;
  int lanes = ctx.vectorLanes;
  bool integer = std::any_of(linears.begin(), linears.end(),
                             [](const Value *lin) { return lin->integer.has_value(); });
  bool amxTiles = std::any_of(linears.begin(), linears.end(), [&](const Value *lin) {
    return multipliesInAmxTiles(*lin, cols);
  });
  int colTile = amxTiles ? kAmxTile : std::min(params.matmulColumns, cols);
  int rowTile =
      amxTiles ? kAmxTile : matmulRowVectors(lanes, params.matmulColumns, integer) * lanes;
  // The 8-bit products and AMX's tiles keep their own tile
  // (scheduleIntegerMatmul, scheduleBf16TileProduct).
  int groupTiles =
      integer || amxTiles ? 1 : std::clamp(cols / colTile, 1, params.matmulGroupTiles);
  int groupCols = colTile * groupTiles;
  Var co("co"), ci("ci"), ro("ro"), ri("ri"), rvo("rvo"), rvi("rvi");
  out.split(a.col, co, ci, groupCols, TailStrategy::ShiftInwards)
      .split(a.row, ro, ri, rowTile, TailStrategy::GuardWithIf)
      .parallel(co);
  if (transposed) // a transposed cache: rows are contiguous
    out.split(ri, rvo, rvi, lanes, TailStrategy::GuardWithIf)
        .reorder(rvi, rvo, ci, ro, co)
        .vectorize(rvi);
  else { // a row's columns at a time: rows lie a whole row stride apart
    out.reorder(ci, ri, ro, co).vectorize(ci);
    if (groupTiles == 1) // one tile's few columns: its rows unrolled too
      out.unroll(ri);
  }

  // Activations are read in row tiles, a vector of rows per reduction step
  // (tileActivations). Every tile computes its whole tile of rows,
  // the last one too (bound_extent): rows past the call's read its last row
  // (Ops/Linear.cpp), and the output stores only the call's. A last tile of
  // the call's rows alone, of a variable extent, ran with its accumulators
  // in memory, and a tail of under 16 rows with a scalar row loop (a
  // 3-token prefill of the 110M Llama in q8_0 took 566 ms, now 79).
  for (Value *lin : linears) {
    Func prod = lin->product;
    if (lin->bf16Pairs.defined() && multipliesInAmxTiles(*lin, cols)) {
      scheduleBf16TileProduct(ctx, out, ro, *lin);
      continue;
    }
    // Rows counted from the call's first, aligned to its activations' row
    // tiles: each vector of rows is one contiguous load of them.
    if (lin->relativeRows)
      prod.align_bounds(a.row, a.activationRowTile);
    prod.compute_at(out, ro)
        .bound_extent(a.row, rowTile)
        .bound_storage(a.col, groupCols)
        .bound_storage(a.row, rowTile)
        .store_in(MemoryType::Stack)
        .reorder_storage(a.row, a.col)
        .split(a.row, rvo, rvi, lanes, TailStrategy::RoundUp)
        .vectorize(rvi);
    if (lin->integer) {
      scheduleIntegerMatmul(ctx, out, co, *lin, colTile, rowTile,
                            multipliesInAmxTiles(*lin, cols));
      continue;
    }
    if (lin->bf16Pairs.defined()) { // fewer columns than a tile: vectors of rows
      computeBf16Pairs(*lin);
      prod.update()
          .split(a.row, rvo, rvi, lanes, TailStrategy::RoundUp)
          .reorder(rvi, rvo, a.col, lin->reduction.x, lin->reduction.y)
          .vectorize(rvi)
          .unroll(rvo);
      continue;
    }
    // The accumulators of a register tile: a constant-size block, so that
    // LLVM keeps it in registers. Each weight element is broadcast from its
    // row as the reduction walks along it: the weights are read in place,
    // never repacked.
    Func tile = prod;
    Stage update = prod.update();
    int outerIndex = lin->reduction.dimensions() - 1;
    RVar depth = lin->reduction[outerIndex];
    if (groupTiles > 1) {
      RVar block("depth_block");
      depth = RVar("in_depth_block");
      update.split(lin->reduction[outerIndex], block, depth,
                   depthBlockSteps(a, *lin, params.matmulDepth));
      Var u("u"), tileOfGroup("tile_of_group"), inTile("in_tile");
      tile = update.rfactor(block, u);
      prod.update()
          .split(a.col, tileOfGroup, inTile, colTile)
          .split(a.row, rvo, rvi, lanes, TailStrategy::RoundUp)
          .reorder(rvi, rvo, inTile, tileOfGroup, block)
          .vectorize(rvi)
          .unroll(rvo)
          .unroll(inTile);
      if (lin->relativeRows)
        tile.align_bounds(a.row, a.activationRowTile);
      tile.compute_at(prod, tileOfGroup)
          .bound_extent(a.row, rowTile)
          .bound_storage(a.col, colTile)
          .bound_storage(a.row, rowTile)
          .store_in(MemoryType::Stack)
          .reorder_storage(a.row, a.col, u)
          .split(a.row, rvo, rvi, lanes, TailStrategy::RoundUp)
          .vectorize(rvi);
      update = tile.update();
    }
    std::vector<VarOrRVar> order = {rvi, rvo, a.col};
    update.split(a.row, rvo, rvi, lanes, TailStrategy::RoundUp);
    if (blockedWeight(*lin)) {
      // Each sub-block's columns decoded once per row tile, as vectors.
      for (int i = 0; i < outerIndex; ++i)
        order.push_back(lin->reduction[i]);
      order.push_back(depth);
      lin->decodedWeights.compute_at(tile, lin->reduction.y)
          .vectorize(lin->decodedWeights.args()[0]);
    } else if (decodesWeight(a, *lin)) {
      // f16, bf16: a task's columns decoded once for all its row tiles
      // where they fit in L2 beside the activations (110M Llama f16
      // prefill, medians of 7 alternating tfm-bench runs on an AVX2
      // Zen 3: 652 -> 700 tok/s); else a run of each column once per
      // row tile, as vectors (one at a time, each broadcast weight cost a
      // dozen scalar operations).
      int depthSteps = static_cast<int>(weightOf(a, *lin).shape[1]);
      Func decoded = lin->decodedWeights;
      if (int64_t(groupCols) * depthSteps * 4 <= kDecodedWeightsPerTask) {
        order.push_back(depth);
        decoded.compute_at(out, co).vectorize(decoded.args()[0], lanes);
      } else {
        RVar run("run"), rest("rest");
        int steps = groupTiles > 1 ? depthBlockSteps(a, *lin, params.matmulDepth) : depthSteps;
        update.split(depth, rest, run, lanesDividing(steps, 2 * lanes));
        order.push_back(run);
        order.push_back(rest);
        decoded.compute_at(tile, rest).vectorize(decoded.args()[0]);
      }
    } else {
      order.push_back(depth);
    }
    update.reorder(order).vectorize(rvi).unroll(rvo).unroll(a.col);
    readers[lin->activations.name()] = lin->activations;
  }
}

/// Each activation that prefill products read, laid out in row tiles
/// (KernelAlgorithm::rowTiles) once per call for all of them: transposed in
/// blocks, the tiles in parallel.
void tileActivations(KernelAlgorithm &a, const ActivationReaders &readers, int lanes) {
  for (const auto &[name, activations] : readers) {
    Func tiles = a.rowTiles.at(name);
    Var i = tiles.args()[0], k = tiles.args()[1], tile = tiles.args()[2];
    tiles.compute_root();
    transposeInBlocks(tiles, activations, k, i, lanes, tile);
  }
}

/// Orders an attention stage's loops as `loops`, innermost first, the
/// first being its vector loop. With `shareGroup` the heads of a KV group
/// (grouped-query attention) go right outside the vector loop, unrolled:
/// each key or value vector is then loaded once for all the group's heads.
void orderSharingGroup(Stage stage, const AttentionFuncs &at, bool shareGroup,
                       std::vector<VarOrRVar> loops) {
  if (shareGroup) {
    Var kvHead("kv_head"), inGroup("in_group");
    stage.split(at.h, kvHead, inGroup, at.groupSize, TailStrategy::GuardWithIf).unroll(inGroup);
    loops.insert(loops.begin() + 1, inGroup);
  }
  stage.reorder(loops);
}

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
void scheduleKeyTiles(ScheduleContext &ctx, Func out, AttentionFuncs &at, Var where,
                      bool singleRow, bool shareGroup) {
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
  bool shareGroup =
      at.groupSize > 1 && at.groupSize <= 8 && (!singleRow || at.keyTile > 0);
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

/// A value of one row: decode, or the last row of a prefill. Cache outputs
/// are judged by the value written, not by the cache's shape.
bool isSingleRow(const Value &v) { return v.shape.size() == 2 && v.shape[0] == 1; }

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

  std::vector<Anchors> anchors(a.outputs.size());
  // Linears computed on their own: read by several outputs, or across
  // tiles; counted as two readers.
  std::map<int, int> readers; // linear -> how many outputs read it
  ActivationReaders activationReaders;
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    collectAnchors(a, a.outputValues[i], anchors[i]);
    for (int index : anchors[i].linears)
      readers[index] += anchors[i].computedAlone.count(index) ? 2 : 1;
  }
  for (auto [index, count] : readers) {
    if (count < 2)
      continue;
    Value &lin = a.values[index];
    lin.func.compute_root();
    scheduleProjections(ctx, params, lin.func, static_cast<int>(lin.shape.back()),
                        isSingleRow(lin), false, {&lin}, activationReaders);
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
      if (readers[index] == 1)
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
