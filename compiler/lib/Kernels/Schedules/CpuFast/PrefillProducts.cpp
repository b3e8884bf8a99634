//===- PrefillProducts.cpp - Matrix products of many rows -----------------===//
#include "CpuFast.h"

#include <algorithm>

using namespace Halide;

namespace tfm::kernels::cpufast {

namespace {

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
/// (PieceSums::signedLevels) or bf16 pairs (Value::bf16Pairs), in a
/// kernel whose tiles are whole (`cols` at least a tile).
bool multipliesInAmxTiles(const Value &lin, int cols) {
  const PieceSums *pieces = lin.integer ? std::get_if<PieceSums>(&lin.integer->sums) : nullptr;
  bool tileForm = (pieces && pieces->signedLevels) || lin.bf16Pairs.defined();
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
             divisorAtMost(static_cast<int>(weightOf(a, lin).shape[1] / 2), kBf16StepsPerProduct))
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
  PieceSums &pieces = std::get<PieceSums>(lin.integer->sums);
  Func dot = pieces.pieceDot, sums = dot.in(lin.product);
  Var piece = dot.args()[0], unit = dot.args()[3];
  Var ri("ri"), ci("ci");
  sums.compute_at(lin.product, pieces.overPieces.x)
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
      .reorder(pieces.inPiece.x, ri, ci, pieces.inPiece.y, a.row, a.col, piece, unit)
      .atomic()
      .vectorize(pieces.inPiece.x)
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
  QuantizedInput &input = lin.integer->input;
  PieceSums &pieces = std::get<PieceSums>(lin.integer->sums);
  int lanes = ctx.vectorLanes;
  Var rvo("rvo"), rvi("rvi");
  // The input quantized once per call; scales and sums stored by row, as
  // the tile reads a vector of rows of them at a time.
  for (Func f : {input.scale, input.offsetTerms})
    if (f.defined())
      f.compute_root()
          .reorder_storage(a.row, f.args()[0])
          .vectorize(f.args()[0], lanes, TailStrategy::GuardWithIf)
          .parallel(a.row);
  input.quantized.compute_root().vectorize(input.quantized.args()[0], lanes).parallel(a.row);
  pieces.quads.compute_root()
      .vectorize(pieces.quads.args()[0])
      .parallel(pieces.quads.args().back());
  // The column block's multipliers and offsets, and levels where they are
  // unpacked, once for all its row tiles.
  lin.subBlockAffine.compute_at(out, co);
  if (pieces.levels.defined())
    pieces.levels.compute_at(out, co).vectorize(pieces.levels.args()[0]);

  // Whole vectors of rows, no tail: rows past the call's read its last row
  // (Ops/Linear.cpp), and the output's tiles store only the call's.
  Func prod = lin.product;
  Stage scaled = prod.update(0);
  scaled.split(a.row, rvo, rvi, lanes, TailStrategy::RoundUp)
      .reorder(rvi, rvo, a.col, pieces.overPieces.x, pieces.overPieces.y)
      .vectorize(rvi)
      .unroll(rvo)
      .unroll(a.col);
  // A block's units unrolled, as in decode (scheduleUnitSumMatvec): the
  // k-quants' nibble and high-bit positions are then constants.
  const StoredWeight &weight = *weightOf(a, lin).stored;
  int unitsPerBlock = weight.subBlocks() * weight.subBlockSize() / 32;
  if (unitsPerBlock > 1 && !amxTiles) {
    RVar blockOfUnits("block_of_units"), unitInBlock("unit_in_block");
    scaled.split(pieces.overPieces.y, blockOfUnits, unitInBlock, unitsPerBlock).unroll(unitInBlock);
  }
  if (input.offsets.defined())
    prod.update(1)
        .split(a.row, rvo, rvi, lanes, TailStrategy::RoundUp)
        .reorder(rvi, rvo, a.col, input.overSubBlocks.x)
        .vectorize(rvi)
        .unroll(rvo)
        .unroll(a.col);
  if (amxTiles) {
    scheduleAmxTileDot(ctx, lin);
    return;
  }

  Func dot = pieces.pieceDot;
  Var piece = dot.args()[0], unit = dot.args()[3];
  dot.compute_at(prod, pieces.overPieces.x)
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
      .reorder(pieces.inPiece.x, rvi, rvo, a.col, pieces.inPiece.y, piece, unit)
      .atomic()
      .vectorize(pieces.inPiece.x)
      .vectorize(rvi)
      .unroll(rvo)
      .unroll(a.col);
  // With pairs of bytes, a vector of rows' pairs of a quad per step of
  // the tile, summed into the step's pieceDot lanes (pmaddwd).
  if (pieces.pairs)
    schedulePairDot(*pieces.pairs, LoopLevel(dot, rvo), lanes);
}

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

} // namespace

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
  bool amxTiles = std::any_of(linears.begin(), linears.end(),
                              [&](const Value *lin) { return multipliesInAmxTiles(*lin, cols); });
  int colTile = amxTiles ? kAmxTile : std::min(params.matmulColumns, cols);
  int rowTile =
      amxTiles ? kAmxTile : matmulRowVectors(lanes, params.matmulColumns, integer) * lanes;
  // The 8-bit products and AMX's tiles keep their own tile
  // (scheduleIntegerMatmul, scheduleBf16TileProduct).
  int groupTiles = integer || amxTiles ? 1 : std::clamp(cols / colTile, 1, params.matmulGroupTiles);
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
      scheduleIntegerMatmul(ctx, out, co, *lin, colTile, rowTile, multipliesInAmxTiles(*lin, cols));
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

} // namespace tfm::kernels::cpufast
