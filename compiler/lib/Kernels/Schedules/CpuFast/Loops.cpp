//===- Loops.cpp - Loop shapes the fast schedule's parts share ------------===//
#include "CpuFast.h"

#include <algorithm>

using namespace Halide;

namespace tfm::kernels::cpufast {

const Value &weightOf(const KernelAlgorithm &a, const Value &linear) {
  return a.values[linear.op->operands[1]];
}

bool decodesWeight(const KernelAlgorithm &a, const Value &linear) {
  const Value &w = weightOf(a, linear);
  return w.stored && w.stored->encoding() != tfm::ElementEncoding{};
}

bool blockedWeight(const Value &linear) { return linear.reduction.dimensions() > 1; }

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

/// Schedules `f`, stored contiguously along `y`, as a transpose of
/// `source`, stored contiguously along `x`: lanes x lanes blocks loaded
/// along x and stored along y, the block transposed in registers instead of
/// gathered or scattered element by element. The blocks run in parallel
/// along y's blocks, or along `across` (a dimension outside both).
void transposeInBlocks(Func f, Func source, Var x, Var y, int lanes, std::optional<Var> across) {
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

/// Pairs of products (BytePairs, where the target multiplies bytes in
/// pairs) as one vector reduction (pmaddubsw) at `at`: a unit's
/// 16 pairs in decode, and in prefill with `rowLanes` rows' pairs of a
/// quad side by side. Halide 14 cannot prove a saturating sum
/// associative; no pair's sum saturates (KernelAlgorithm.h), so it is.
void schedulePairDot(BytePairs &pairs, LoopLevel at, int rowLanes) {
  Func dot = pairs.pairDot;
  Var pair = dot.args()[0], row = dot.args()[3];
  Stage sums = dot.update();
  dot.compute_at(at).reorder(pair, row).vectorize(pair);
  sums.reorder(pairs.inPair.x, pair, row)
      .atomic(/*override_associativity_test=*/true)
      .vectorize(pairs.inPair.x)
      .vectorize(pair);
  if (rowLanes > 1) {
    dot.vectorize(row, rowLanes, TailStrategy::RoundUp);
    sums.vectorize(row, rowLanes, TailStrategy::RoundUp);
  }
}

} // namespace tfm::kernels::cpufast
