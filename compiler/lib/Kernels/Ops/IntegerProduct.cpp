//===- IntegerProduct.cpp - x @ W^T with 8-bit activations ---------------===//
//
// Linear's product with its input quantized to 8 bits in units of 32
// values, as llama.cpp's q8_0 activations (one scale per unit, or per
// activation_block values): the forms of IntegerProduct.h, each defined by
// a function of its own from the quantized input.
//
// The level * byte sums are integer dot products of unsigned and signed
// bytes, four at a time: AVX-512 VNNI's vpdpbusd where the target has it.
// One row starts each group's integer sum at -zero point * sum of its
// bytes, so that the sum is the levels' own product and only q4_K's and
// q5_K's minimums remain as offsets: a second pass over the row's
// multipliers for the zero point cost decode of Llama 2 7B q8_0 a fifth of
// its time. One row and many rows differ in the order of float additions,
// and in the zero point's product, exact in one row.
//
//===----------------------------------------------------------------------===//
#include "../OpRegistry.h"

#include <algorithm>

using namespace Halide;

namespace tfm::kernels {

namespace {

/// What every form is defined from: the op, its weight and operands, and
/// how the target multiplies bytes.
struct ProductSetting {
  OpDefinition &d;
  const IntegerProductOperands &in;
  int units;        // of 32 values in a row
  int subBlockSize; // of the weight's format
  Var c, r;
  /// Many rows on a target with AMX: signed levels (PieceSums::signedLevels).
  bool signedLevels;
  /// Pairs of bytes (KernelAlgorithm::bytePairs) multiply q8_0's levels as
  /// stored, signed, as AMX's tiles do: no zero point to take off.
  bool bytePairs;
  bool signedBytes;

  const StoredWeight &weight() const { return in.weight; }
  const std::string &name() const { return d.name; }
  /// Units, sub-blocks and quads past the row's read its last one, for
  /// autoschedulers' shifted tiles.
  Expr within(Expr i, int count) const { return in.oneRow ? i : clamp(i, 0, count - 1); }
};

ProductSetting settingOf(OpDefinition &d, const IntegerProductOperands &in) {
  const StoredWeight &sw = in.weight;
  bool signedLevels = !in.oneRow && d.algorithm.amx.int8;
  bool bytePairs = d.algorithm.bytePairs && !signedLevels;
  return {d,
          in,
          in.inDim / 32,
          sw.subBlockSize(),
          d.algorithm.col,
          d.algorithm.row,
          signedLevels,
          bytePairs,
          signedLevels || (bytePairs && sw.hasSignedLevels())};
}

/// The input's scale is shared by `activationBlock` values: 32, or a
/// k-quant's whole block (as llama.cpp's q8_K).
QuantizedInput quantizeInput(const ProductSetting &s) {
  Var k("k"), u("unit");
  int unitsPerScale = s.in.activationBlock / 32;
  RDom inScaleRun(0, 32 * unitsPerScale, s.name() + "_in_scale_run");
  QuantizedInput q;
  q.scale = Func(s.name() + "_act_scale");
  q.scale(u, s.r) =
      maximum(abs(s.in.input(
          s.within(u / unitsPerScale, s.units / unitsPerScale) * (32 * unitsPerScale) + inScaleRun,
          s.r))) /
      127.0f;
  Expr scale = q.scale(k / 32, s.r);
  q.quantized = Func(s.name() + "_act_bytes");
  q.quantized(k, s.r) = cast<int8_t>(
      clamp(round(s.in.input(k, s.r) * select(scale > 0.0f, 1.0f / scale, 0.0f)), -127.0f, 127.0f));
  return q;
}

/// Halide 14 finds AMX's product only as an Int(8) load widened to int32
/// times another: q8_0's levels are its stored bytes, the other formats'
/// levels less their zero point are unpacked into a Func of their own.
Func unpackSignedLevels(const ProductSetting &s) {
  const StoredWeight &sw = s.weight();
  Var e("e"), u("unit");
  Func levels(s.name() + "_levels");
  levels(e, u, s.c) = cast<int8_t>(sw.unitLevel(s.within(u, s.units), e / 4, e % 4, s.c) -
                                   cast<uint8_t>(sw.levelZeroPoint()));
  return levels;
}

/// q4_K's and q5_K's offsets, and the zero point of a form whose integer
/// sums leave it out, as one dot product over sub-blocks with the input's
/// sums of bytes.
void defineOffsets(const ProductSetting &s, QuantizedInput &q) {
  const StoredWeight &sw = s.weight();
  bool zeroPointInDots = s.in.oneRow;
  if (sw.affineCount() != 2 && (s.signedBytes || zeroPointInDots))
    return;
  Var sb("sub_block");
  RDom inSubBlock(0, s.subBlockSize, s.name() + "_in_sub_block");
  q.offsetTerms = Func(s.name() + "_act_sums");
  Expr subBlock = s.within(sb, s.in.inDim / s.subBlockSize);
  q.offsetTerms(sb, s.r) =
      q.scale(subBlock * s.subBlockSize / 32, s.r) *
      cast<float>(sum(cast<int32_t>(q.quantized(subBlock * s.subBlockSize + inSubBlock, s.r))));

  Expr inBlock = sb % sw.subBlocks(), block = sb / sw.subBlocks();
  Expr offset = sw.affineCount() == 2 ? s.in.affine(1, inBlock, block, s.c) : Expr(0.0f);
  if (!s.signedBytes && !zeroPointInDots)
    offset += -static_cast<float>(sw.levelZeroPoint()) * s.in.affine(0, inBlock, block, s.c);
  q.offsets = Func(s.name() + "_offsets");
  q.offsets(sb, s.c) = offset;
  if (!s.in.oneRow)
    q.overSubBlocks = RDom(0, s.in.inDim / s.subBlockSize, s.name() + "_sub_blocks");
}

/// A level times a byte, in int32: signed levels (AMX) as signed bytes,
/// the others as unsigned bytes.
Expr levelTimesByte(const ProductSetting &s, Expr unit, Expr group, Expr j, Expr byte,
                    Func unpackedLevels) {
  const StoredWeight &sw = s.weight();
  if (s.signedLevels) {
    Expr level = sw.hasSignedLevels() ? sw.signedUnitLevel(unit, group, j, s.c)
                                      : unpackedLevels(group * 4 + j, unit, s.c);
    return cast<int32_t>(level) * cast<int32_t>(byte);
  }
  return cast<int32_t>(cast<int16_t>(sw.unitLevel(unit, group, j, s.c)) * cast<int16_t>(byte));
}

/// One term of a pair (BytePairs): q8_0's signed levels take the bytes'
/// signs, the bytes multiply as magnitudes. The sign (-1 or 0) comes once
/// per vector of bytes, shared by every row, and flips a level in two
/// instructions (xor, subtract). A level of -128, which no quantizer
/// writes, flips to 127: saturating, not wrapping.
Expr pairTerm(const ProductSetting &s, Expr unit, Expr group, Expr j, Expr byte) {
  const StoredWeight &sw = s.weight();
  if (!sw.hasSignedLevels())
    return Internal::widening_mul(sw.unitLevel(unit, group, j, s.c), byte);
  Expr sign = byte >> 7;
  Expr level = sw.signedUnitLevel(unit, group, j, s.c);
  return Internal::widening_mul(abs(byte), Internal::saturating_sub(level ^ sign, sign));
}

/// pairDot over `args`: the forms of x86's pmaddubsw (a saturating sum of
/// two products of unsigned and signed bytes, in int16) and of pmaddwd (a
/// sum of two int16 products, in int32; pairSum), which Halide 14 emits
/// for vector reductions of exactly these forms. Without them, the 110M
/// Llama's 8-bit decode on an AVX2 AMD EPYC widened every byte to int16
/// and added adjacent lanes in shuffles (tfm-bench --rates, 3 alternating
/// runs: q8_0 133-139 -> 155-203 tok/s, Q4_K_M 126-151 -> 173-217).
void definePairs(const ProductSetting &s, BytePairs &pairs, std::vector<Var> args, Expr unit,
                 Expr group, Expr j, Expr byte) {
  pairs.pairDot = Func(s.name() + "_pair_dot");
  pairs.pairDot(args) = cast<int16_t>(0);
  pairs.pairDot(args) =
      Internal::saturating_add(pairs.pairDot(args), pairTerm(s, unit, group, j, byte));
}

Expr pairSum(Expr pairs) { return Internal::widening_mul(pairs, cast<int16_t>(1)); }

/// The lanes both one-row forms sum into. q4_K's and q5_K's offsets start
/// them, sub-blocks 8i + g in lane g, so that a schedule computes them with
/// the lanes, from the multipliers and offsets it decoded for them, and
/// adds them across lanes with the rest: a second update of the product
/// looped over the columns again and decoded them again (Llama 2 7B Q4_K_M
/// decode with 8-bit activations, 4.6 -> 5.2 tok/s on a Sapphire Rapids
/// VM). Their blocks have 8 sub-blocks.
RowLanes startRowLanes(const ProductSetting &s, const QuantizedInput &q) {
  RowLanes lanes;
  Var g = lanes.group = Var("group");
  Expr lanesStart = 0.0f;
  if (q.offsets.defined()) {
    RDom overSubBlocks(0, s.in.inDim / s.subBlockSize / 8, s.name() + "_sub_blocks_of_lanes");
    Expr subBlock = overSubBlocks * 8 + g;
    lanes.offsetDot = Func(s.name() + "_offset_dot");
    lanes.offsetDot(g, s.c, s.r) = 0.0f;
    lanes.offsetDot(g, s.c, s.r) += q.offsets(subBlock, s.c) * q.offsetTerms(subBlock, s.r);
    lanesStart = lanes.offsetDot(g, s.c, s.r);
  }
  lanes.lanes = Func(s.name() + "_lanes");
  lanes.lanes(g, s.c, s.r) = lanesStart;
  lanes.overGroups = RDom(0, 8, s.name() + "_groups");
  return lanes;
}

/// One row's pairs of a unit: one index of the unit's values, so that a
/// vector of pairs loads its levels as one run rather than a byte at a
/// time.
BytePairs rowPairs(const ProductSetting &s, const QuantizedInput &q, RDom inPair) {
  Var h("pair"), u("unit");
  BytePairs pairs{Func(), inPair};
  Expr e = h * 2 + inPair;
  definePairs(s, pairs, {h, u, s.c, s.r}, u, e / 4, e % 4, q.quantized(u * 32 + e, s.r));
  return pairs;
}

/// RowBlockSums (IntegerProduct.h).
RowBlockSums defineRowBlockSums(const ProductSetting &s, const QuantizedInput &q, RowLanes lanes,
                                BytePairs pairs) {
  const StoredWeight &sw = s.weight();
  RowBlockSums sums{std::move(lanes), std::move(pairs)};
  Var g = sums.row.group, h("pair"), u("unit");
  int zeroPoint = s.signedBytes ? 0 : sw.levelZeroPoint();
  int unitsPerBlock = sw.subBlocks() * s.subBlockSize / 32;
  // q6_K's zero point taken off each pair sum in int16 (the pair's bytes
  // times 32, at most 8128 in magnitude, once per call), so that the
  // difference multiplies its sub-block's scale as it widens.
  if (zeroPoint) {
    sums.zeroPointPairs = Func(s.name() + "_zero_point_pairs");
    sums.zeroPointPairs(h, u, s.r) =
        cast<int16_t>(zeroPoint) * (cast<int16_t>(q.quantized(u * 32 + h * 2, s.r)) +
                                    cast<int16_t>(q.quantized(u * 32 + h * 2 + 1, s.r)));
  }
  Var sb("sub_block"), b("block");
  sums.subScales = Func(s.name() + "_sub_scales");
  // q6_K's scales as bytes: a unit's two (8 lanes each) widen from a byte
  // shuffle (vpshufb, vpmovsxbw), where as int16 they took four shuffles
  // (its block loop in the 110M Llama's logits: 120 -> 110 instructions).
  // One scale per unit broadcasts best as int16.
  Type scaleType = s.subBlockSize == 16 ? Int(8) : Int(16);
  sums.subScales(sb, b, s.c) = cast(scaleType, sw.subBlockScale(0, b, sb, s.c));
  sums.inBlock = RDom({{0, 2}, {0, unitsPerBlock}}, s.name() + "_in_block");
  Expr unit = b * unitsPerBlock + sums.inBlock.y, pair = g * 2 + sums.inBlock.x;
  Expr pairSum = sums.pairs.pairDot(pair, unit, s.c, s.r);
  if (zeroPoint)
    pairSum = pairSum - sums.zeroPointPairs(pair, unit, s.r);
  sums.blockDot = Func(s.name() + "_block_dot");
  sums.blockDot(g, b, s.c, s.r) = 0;
  sums.blockDot(g, b, s.c, s.r) += Internal::widening_mul(
      pairSum, cast<int16_t>(sums.subScales(sw.unitSubBlock(unit, g), b, s.c)));
  // Each block's multiplier times its input scale, as vectors before the
  // sum (as RowUnitSums' sub-blocks').
  Func &multipliers = sums.row.multipliers;
  multipliers = Func(s.name() + "_multipliers");
  multipliers(b, s.c, s.r) = sw.blockScale(0, b, s.c) * q.scale(b * unitsPerBlock, s.r);
  sums.overBlocks = RDom(0, sw.blocks(), s.name() + "_blocks");
  sums.row.lanes(g, s.c, s.r) += cast<float>(sums.blockDot(g, sums.overBlocks, s.c, s.r)) *
                                 multipliers(sums.overBlocks, s.c, s.r);
  return sums;
}

/// RowUnitSums (IntegerProduct.h).
RowUnitSums defineRowUnitSums(const ProductSetting &s, const QuantizedInput &q, RowLanes lanes,
                              std::optional<BytePairs> pairs) {
  const StoredWeight &sw = s.weight();
  RowUnitSums sums{std::move(lanes)};
  sums.pairs = std::move(pairs);
  Var g = sums.row.group, u("unit");
  int zeroPoint = s.signedBytes ? 0 : sw.levelZeroPoint();
  sums.inGroup = RDom(0, sums.pairs ? 2 : 4, s.name() + "_in_group");
  Expr start = 0;
  if (zeroPoint) {
    RDom inQuad(0, 4, s.name() + "_in_quad");
    sums.zeroPointSums = Func(s.name() + "_zero_point_sums");
    sums.zeroPointSums(g, u, s.r) = 0;
    // Clamped: autoschedulers' shifted tiles compute quads past the row's.
    Expr quad = clamp(u * 8 + g, 0, s.in.inDim / 4 - 1);
    sums.zeroPointSums(g, u, s.r) +=
        -zeroPoint * cast<int32_t>(q.quantized(quad * 4 + inQuad, s.r));
    start = sums.zeroPointSums(g, u, s.r);
  }
  sums.unitDot = Func(s.name() + "_unit_dot");
  sums.unitDot(g, u, s.c, s.r) = start;
  if (sums.pairs)
    sums.unitDot(g, u, s.c, s.r) += pairSum(sums.pairs->pairDot(g * 2 + sums.inGroup, u, s.c, s.r));
  else
    sums.unitDot(g, u, s.c, s.r) += levelTimesByte(
        s, u, g, sums.inGroup, q.quantized(u * 32 + g * 4 + sums.inGroup, s.r), Func());
  sums.overUnits = RDom(0, s.units, s.name() + "_units");
  RVar unit = sums.overUnits.x;
  // Each sub-block's multiplier times its unit's input scale, a Func of
  // its own, so that a schedule computes a row's products as vectors
  // rather than one per unit inside the sum.
  Var sb("sub_block");
  Func &multipliers = sums.row.multipliers;
  multipliers = Func(s.name() + "_multipliers");
  multipliers(sb, s.c, s.r) = s.in.affine(0, sb % sw.subBlocks(), sb / sw.subBlocks(), s.c) *
                              q.scale(sb * s.subBlockSize / 32, s.r);
  Expr multiplier =
      multipliers(sw.unitBlock(unit) * sw.subBlocks() + sw.unitSubBlock(unit, g), s.c, s.r);
  sums.row.lanes(g, s.c, s.r) += cast<float>(sums.unitDot(g, unit, s.c, s.r)) * multiplier;
  return sums;
}

/// PieceSums (IntegerProduct.h). The bytes as quads of consecutive values,
/// rows next to each other: a vector of 16 rows' quads is one 64-byte
/// load. Without AMX, in row tiles as f32 activations
/// (KernelAlgorithm::rowTiles), the product's rows counting from the
/// call's first: a tile's quads are then one contiguous stream, where each
/// quad's rows lay a whole call's rows from the next.
PieceSums definePieceSums(const ProductSetting &s, const QuantizedInput &q, Func levels,
                          std::optional<RDom> inPair) {
  const StoredWeight &sw = s.weight();
  OpDefinition &d = s.d;
  PieceSums sums;
  sums.signedLevels = s.signedLevels;
  sums.levels = levels;
  Var j("j"), quad("quad"), piece("piece"), u("unit");
  sums.quads = Func(s.name() + "_act_quads");
  Expr byteOfQuad = s.within(quad, s.in.inDim / 4) * 4 + j;
  int tile = d.algorithm.activationRowTile;
  bool relativeRows = !sums.signedLevels;
  if (relativeRows) {
    Var i("i"), t("tile");
    sums.quads(j, i, quad, t) = q.quantized(byteOfQuad, d.algorithm.firstRow() + t * tile + i);
  } else {
    sums.quads(j, s.r, quad) = q.quantized(byteOfQuad, s.r);
  }
  auto rowQuad = [&](Expr j, Expr quad) -> Expr {
    return relativeRows ? sums.quads(j, s.r % tile, quad, s.r / tile) : sums.quads(j, s.r, quad);
  };
  Expr row = relativeRows ? s.r + d.algorithm.firstRow() : Expr(s.r);
  int pieceGroups = std::min(s.subBlockSize, 32) / 4;
  sums.inPiece = RDom({{0, inPair ? 2 : 4}, {0, pieceGroups}}, s.name() + "_in_piece");
  Expr group = piece * pieceGroups + sums.inPiece.y;
  sums.pieceDot = Func(s.name() + "_piece_dot");
  sums.pieceDot(piece, s.c, s.r, u) = 0;
  if (inPair) {
    // A vector of rows' pairs of a quad, their bytes one run of quads.
    Var h("pair"), gr("group");
    Expr j = h * 2 + *inPair;
    sums.pairs = BytePairs{Func(), *inPair};
    definePairs(s, *sums.pairs, {h, gr, s.c, s.r, u}, u, gr, j, rowQuad(j, u * 8 + gr));
    sums.pieceDot(piece, s.c, s.r, u) +=
        pairSum(sums.pairs->pairDot(sums.inPiece.x, group, s.c, s.r, u));
  } else {
    sums.pieceDot(piece, s.c, s.r, u) +=
        levelTimesByte(s, u, group, sums.inPiece.x, rowQuad(sums.inPiece.x, u * 8 + group), levels);
  }
  sums.overPieces = RDom({{0, 32 / (4 * pieceGroups)}, {0, s.units}}, s.name() + "_pieces");
  RVar p = sums.overPieces.x, unit = sums.overPieces.y;
  Func product = s.in.product;
  product(s.c, s.r) +=
      cast<float>(sums.pieceDot(p, s.c, s.r, unit)) *
      (s.in.affine(0, sw.unitSubBlock(unit, p * pieceGroups), sw.unitBlock(unit), s.c) *
       q.scale(unit, row));
  if (q.offsets.defined())
    product(s.c, s.r) += q.offsets(q.overSubBlocks, s.c) * q.offsetTerms(q.overSubBlocks, row);
  return sums;
}

} // namespace

bool defineIntegerProduct(OpDefinition &d, const IntegerProductOperands &in) {
  ProductSetting s = settingOf(d, in);
  const StoredWeight &sw = in.weight;
  IntegerProduct ip;
  ip.input = quantizeInput(s);
  Func levels;
  if (s.signedLevels && !sw.hasSignedLevels())
    levels = unpackSignedLevels(s);
  defineOffsets(s, ip.input);
  std::optional<RDom> inPair;
  if (s.bytePairs)
    inPair = RDom(0, 2, d.name + "_in_pair");
  Func product = in.product;
  product(s.c, s.r) = 0.0f;
  bool relativeRows = false;
  if (in.oneRow) {
    RowLanes lanes = startRowLanes(s, ip.input);
    std::optional<BytePairs> pairs;
    if (inPair)
      pairs = rowPairs(s, ip.input, *inPair);
    // One row of a block whose activations share one scale, on a target
    // multiplying pairs of bytes: the block's units summed in integers,
    // as llama.cpp's q4_K, q5_K and q6_K dot products on AVX2 do.
    int unitsPerBlock = sw.subBlocks() * s.subBlockSize / 32;
    bool blockSums =
        pairs && sw.hasIntegerSubBlockScales() && in.activationBlock / 32 == unitsPerBlock;
    RowLanes row = lanes; // handles of the Funcs the form goes on to define
    if (blockSums)
      ip.sums = defineRowBlockSums(s, ip.input, std::move(lanes), std::move(*pairs));
    else
      ip.sums = defineRowUnitSums(s, ip.input, std::move(lanes), std::move(pairs));
    product(s.c, s.r) += row.lanes(row.overGroups, s.c, s.r);
  } else {
    PieceSums sums = definePieceSums(s, ip.input, levels, inPair);
    relativeRows = !sums.signedLevels;
    ip.sums = std::move(sums);
  }
  d.result.integer = ip;
  return relativeRows;
}

std::vector<Func> IntegerProduct::placedFuncs() const {
  std::vector<Func> all{input.scale, input.quantized, input.offsetTerms};
  auto addPairs = [&](const std::optional<BytePairs> &pairs) {
    if (pairs)
      all.push_back(pairs->pairDot);
  };
  auto addLanes = [&](const RowLanes &row) {
    all.insert(all.end(), {row.offsetDot, row.lanes, row.multipliers});
  };
  if (const auto *unitSums = std::get_if<RowUnitSums>(&sums)) {
    addLanes(unitSums->row);
    all.insert(all.end(), {unitSums->zeroPointSums, unitSums->unitDot});
    addPairs(unitSums->pairs);
  } else if (const auto *blockSums = std::get_if<RowBlockSums>(&sums)) {
    addLanes(blockSums->row);
    all.insert(all.end(), {blockSums->pairs.pairDot, blockSums->zeroPointPairs,
                           blockSums->subScales, blockSums->blockDot});
  } else if (const auto *pieceSums = std::get_if<PieceSums>(&sums)) {
    all.insert(all.end(), {pieceSums->quads, pieceSums->pieceDot, pieceSums->levels});
    addPairs(pieceSums->pairs);
  }
  all.erase(std::remove_if(all.begin(), all.end(), [](const Func &f) { return !f.defined(); }),
            all.end());
  return all;
}

} // namespace tfm::kernels
