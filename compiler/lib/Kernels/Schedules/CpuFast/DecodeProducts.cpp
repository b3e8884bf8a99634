//===- DecodeProducts.cpp - Matrix-vector products of one row -------------===//
#include "CpuFast.h"

#include <algorithm>

using namespace Halide;

namespace tfm::kernels::cpufast {

namespace {

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
/// a step faster inside the step: scheduleUnitSumMatvec.)
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

/// A k-quant's matrix-vector product with 8-bit activations summed per
/// block in integers (RowBlockSums, IntegerProduct.h): per column, a block's
/// units unrolled (their nibbles' shifts constants), each unit's 16 pair
/// sums widened times its sub-blocks' scales (pmaddwd) into the block's 8
/// lanes, and the lanes scaled to f32 once per block.
void scheduleBlockSumMatvec(ScheduleContext &ctx, const CpuFastParams &params,
                            const KernelAlgorithm &a, Value &lin, RowBlockSums &blockSums) {
  RowLanes &row = blockSums.row;
  const StoredWeight &weight = *weightOf(a, lin).stored;
  if (blockSums.zeroPointPairs.defined())
    blockSums.zeroPointPairs.compute_root().vectorize(blockSums.zeroPointPairs.args()[0]);
  row.lanes.compute_at(lin.product, a.col).vectorize(row.group);
  RVar block = blockSums.overBlocks.x, pairOfGroup = blockSums.inBlock.x,
       unit = blockSums.inBlock.y;
  Stage laneSums = row.lanes.update();
  laneSums.reorder(row.group, block).vectorize(row.group);
  prefetchWeightAhead(laneSums, a, lin, block, weight.blocks(), params);
  blockSums.blockDot.compute_at(row.lanes, block).vectorize(row.group);
  blockSums.blockDot.update()
      .reorder(pairOfGroup, row.group, unit)
      .atomic()
      .vectorize(pairOfGroup)
      .vectorize(row.group)
      .unroll(unit);
  schedulePairDot(blockSums.pairs, LoopLevel(blockSums.blockDot, unit));
  // A block's scales as one vector (by sub-block: the lanes' bytes lie
  // next to each other; a vector across blocks gathered them a byte at a
  // time).
  blockSums.subScales.compute_at(lin.product, a.col)
      .vectorize(blockSums.subScales.args()[0],
                 lanesDividing(weight.subBlocks(), 2 * ctx.vectorLanes));
  row.multipliers.compute_at(lin.product, a.col)
      .vectorize(row.multipliers.args()[0], lanesDividing(weight.blocks(), ctx.vectorLanes));
  lin.product.update(0).atomic().vectorize(row.overGroups.x);
  if (row.offsetDot.defined()) {
    row.offsetDot.compute_at(lin.product, a.col).vectorize(row.group);
    row.offsetDot.update().vectorize(row.group);
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
void scheduleUnitSumMatvec(ScheduleContext &ctx, const CpuFastParams &params,
                           const KernelAlgorithm &a, Value &lin, RowUnitSums &unitSums) {
  RowLanes &row = unitSums.row;
  const StoredWeight &weight = *weightOf(a, lin).stored;
  if (unitSums.zeroPointSums.defined()) {
    unitSums.zeroPointSums.compute_root().vectorize(row.group);
    unitSums.zeroPointSums.update().vectorize(row.group);
  }
  // A block's units unrolled: their sub-block's bit positions (k-quants'
  // nibbles and q6_K's high bits) are then constants, where a shift by a
  // loop variable costs a dozen instructions on bytes.
  int unitsPerBlock = weight.subBlocks() * weight.subBlockSize() / 32;
  RVar blockOfUnits("block_of_units"), unitInBlock("unit_in_block");
  row.lanes.compute_at(lin.product, a.col).vectorize(row.group);
  const int64_t *units = as_const_int(unitSums.overUnits.x.extent());
  bool pairsInBlock = unitsPerBlock % 2 == 0;
  // Blocks of one unit (q8_0, q4_0) pair only with AVX-512: with AVX2
  // their pairs, each decoding two multipliers in the step, measured
  // no faster than one chain after the row's multipliers decoded as
  // vectors: the 110M Llama's q8_0 decode kernels took 2-17% more time
  // each (5 alternating runs, in either order; the unchanged attention
  // kernel moved 9-27% with them), Llama 2 7B q8_0 decoded 2.53 tok/s
  // against 2.72 (5 runs) after 2.59 against 2.27 (3 runs).
  bool pairsOfBlocks = ctx.vectorLanes >= 16 && unitsPerBlock == 1 && units && *units % 2 == 0;
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
    Var parity("parity"), chain("chain");
    Stage laneSums = row.lanes.update();
    laneSums.split(unitSums.overUnits.x, pairOfUnits, unitOfPair, 2);
    Func pairs;
    VarOrRVar pairLoop = pairOfUnits;
    if (pairsInBlock) {
      // A block's pairs of units each summed into a vector of its own:
      // one vector for all of them was a chain of dependent FMAs, four a
      // block of q4_K or q6_K, which held the loop to the FMA's latency.
      // Llama-3.2-1B Q4_K_M with 8-bit activations, 2 threads (tfm-bench
      // --rates, 4 alternating runs): decode 49.1-50.9 -> 50.1-54.1 tok/s,
      // the last at this AMD EPYC VM's read bandwidth.
      laneSums.split(pairOfUnits, blockOfUnits, pairInBlock, unitsPerBlock / 2);
      pairs = laneSums.rfactor({{unitOfPair, parity}, {pairInBlock, chain}});
      pairs.compute_at(lin.product, a.col)
          .reorder(row.group, parity, chain)
          .vectorize(row.group)
          .vectorize(parity)
          .unroll(chain);
      pairs.update().reorder(row.group, parity, chain, blockOfUnits).unroll(chain);
      pairLoop = chain;
      prefetchWeightAhead(pairs.update(), a, lin, blockOfUnits, weight.blocks(), params);
    } else {
      pairs = laneSums.rfactor(unitOfPair, parity);
      pairs.compute_at(lin.product, a.col)
          .reorder(row.group, parity)
          .vectorize(row.group)
          .vectorize(parity);
      pairs.update().reorder(row.group, parity, pairOfUnits);
      prefetchWeightAhead(pairs.update(), a, lin, pairOfUnits, weight.blocks() / 2, params);
    }
    Stage pairSums = pairs.update();
    pairSums.vectorize(row.group).vectorize(parity);
    Var unit = unitSums.unitDot.args()[1];
    unitSums.unitDot.compute_at(LoopLevel(pairs, pairLoop))
        .reorder(row.group, unit)
        .vectorize(row.group)
        .unroll(unit, 2);
    if (unitSums.pairs)
      schedulePairDot(*unitSums.pairs, LoopLevel(pairs, pairLoop));
    unitSums.unitDot.update()
        .reorder(unitSums.inGroup.x, row.group, unit)
        .atomic()
        .vectorize(unitSums.inGroup.x)
        .vectorize(row.group)
        .unroll(unit, 2);
    row.lanes.update().vectorize(row.group);
  } else {
    row.lanes.update()
        .split(unitSums.overUnits.x, blockOfUnits, unitInBlock, unitsPerBlock)
        .reorder(row.group, unitInBlock, blockOfUnits)
        .vectorize(row.group)
        .unroll(unitInBlock);
    prefetchWeightAhead(row.lanes.update(), a, lin, blockOfUnits, weight.blocks(), params);
    unitSums.unitDot.compute_at(row.lanes, unitInBlock).vectorize(row.group);
    if (unitSums.pairs)
      schedulePairDot(*unitSums.pairs, LoopLevel(row.lanes, unitInBlock));
    unitSums.unitDot.update()
        .reorder(unitSums.inGroup.x, row.group)
        .atomic()
        .vectorize(unitSums.inGroup.x)
        .vectorize(row.group);
  }
  lin.product.update(0).atomic().vectorize(row.overGroups.x);
  if (row.offsetDot.defined()) {
    row.offsetDot.compute_at(lin.product, a.col).vectorize(row.group);
    row.offsetDot.update().vectorize(row.group);
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
  row.multipliers.compute_at(lin.product, a.col)
      .vectorize(row.multipliers.args()[0],
                 lanesDividing(weight.subBlocks() * weight.blocks(), ctx.vectorLanes));
}

/// A matrix-vector product with 8-bit activations, its input quantized
/// once per call.
void scheduleIntegerMatvec(ScheduleContext &ctx, const CpuFastParams &params,
                           const KernelAlgorithm &a, Value &lin) {
  IntegerProduct &ip = *lin.integer;
  for (Func f : {ip.input.scale, ip.input.quantized, ip.input.offsetTerms})
    if (f.defined())
      f.compute_root().vectorize(f.args()[0], ctx.vectorLanes, TailStrategy::GuardWithIf);
  if (auto *blockSums = std::get_if<RowBlockSums>(&ip.sums))
    scheduleBlockSumMatvec(ctx, params, a, lin, *blockSums);
  else
    scheduleUnitSumMatvec(ctx, params, a, lin, std::get<RowUnitSums>(ip.sums));
}

} // namespace

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
      partial.update().reorder(lane, subLane, lin->reduction.z).vectorize(lane).unroll(subLane);
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

} // namespace tfm::kernels::cpufast
