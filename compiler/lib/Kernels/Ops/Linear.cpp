//===- Linear.cpp - x @ W^T (+ bias) --------------------------------------===//
#include "../OpRegistry.h"

#include <algorithm>

using namespace Halide;

namespace tfm::kernels {

namespace {

/// `x` as a product of many rows reads it: a row past the call's reads its
/// last row, so that a schedule may compute whole vectors and tiles of rows
/// (the extra ones are never stored). One Func per activation, shared by
/// every product that reads it, so a schedule can transpose it once.
Func clampedRows(OpDefinition &d, const Value &x) {
  Func &clamped = d.algorithm.clampedRows[x.func.name()];
  if (clamped.defined())
    return clamped;
  const Value *rows = d.algorithm.tokenRowsInput();
  if (!rows)
    d.fail("a product over many rows needs a token-rows input");
  Expr first = d.algorithm.firstRow();
  Expr count = rows->image.dim(rows->image.dimensions() - 1).extent();
  Var k("k");
  clamped = Func(x.func.name() + "_rows");
  clamped(k, d.algorithm.row) = x.func(k, clamp(d.algorithm.row, first, first + count - 1));
  return clamped;
}

/// `input` (clampedRows, or its bf16 rounding) in tiles of rows from the
/// call's first (KernelAlgorithm::rowTiles), one Func per activation as
/// clampedRows.
Func rowTiles(OpDefinition &d, Func input) {
  Func &tiles = d.algorithm.rowTiles[input.name()];
  if (!tiles.defined()) {
    Var i("i"), k("k"), tile("tile");
    tiles = Func(input.name() + "_tiles");
    tiles(i, k, tile) =
        input(k, d.algorithm.firstRow() + tile * d.algorithm.activationRowTile + i);
  }
  return tiles;
}

/// `input` rounded to bf16 and widened back (bf16_input), one Func per
/// activation as clampedRows, so that a schedule rounds it once for every
/// product that reads it.
Func roundedToBf16(OpDefinition &d, Func input) {
  Func &rounded = d.algorithm.bf16Rounded[input.name()];
  if (!rounded.defined()) {
    Var k("k");
    rounded = Func(input.name() + "_bf16");
    rounded(k, d.algorithm.row) = cast<float>(cast(BFloat(16), input(k, d.algorithm.row)));
  }
  return rounded;
}

/// x @ W^T of bf16 inputs for many rows on a target with AMX's bf16 tiles:
/// tdpbf16ps multiplies pairs of consecutive values, a pair of each
/// column's weights (read in place) by a pair of each row's inputs. The
/// rounded input is laid out as pairs in tiles of 16 rows from the call's
/// first row (Value::bf16Pairs): a tile's 16 rows of one pair are one
/// 64-byte row of the tile operand, and the next pair's the next 64 bytes,
/// so that the back end's folded product reads its 32 pairs as one 1 KiB
/// block (with the row tile's pairs a variable distance apart, LLVM 14
/// computed the addresses as vectors, which the fold cannot follow).
/// Halide 14 finds the tile product only as an f32 widening of a bf16 load
/// times another. Returns the reduction, (j, pair).
RDom defineBf16PairProduct(OpDefinition &d, const Value &x, const Value &w, int inDim,
                           Func product) {
  Var c = d.algorithm.col, r = d.algorithm.row;
  Expr first = d.algorithm.firstRow();
  Func &pairs = d.algorithm.bf16Pairs[x.func.name()];
  if (!pairs.defined()) {
    Var j("j"), inTile("in_tile"), pair("pair"), tile("tile");
    pairs = Func(x.func.name() + "_bf16_pairs");
    pairs(j, inTile, pair, tile) =
        cast(BFloat(16), clampedRows(d, x)(pair * 2 + j, first + tile * 16 + inTile));
  }
  RDom over({{0, 2}, {0, inDim / 2}}, d.name + "_pairs");
  Expr at = r - first;
  // The weight read where it is multiplied, never as a Func of its own: an
  // autoscheduler's sliding window over one (Adams2019's, stored per pair
  // and computed per value) read the weight before its rows' start.
  product(c, r) = 0.0f;
  product(c, r) += w.stored->at(over.y * 2 + over.x, c) *
                   cast<float>(pairs(over.x, at % 16, over.y, at / 16));
  d.result.bf16Pairs = pairs;
  return over;
}

/// x @ W^T with the input quantized to 8 bits in units of 32 values
/// (IntegerProduct, KernelAlgorithm.h), as llama.cpp's q8_0 activations
/// (one scale per unit, or per `activationBlock` values):
/// with W's value m * (level - zero point) + offset per sub-block and x's
/// scale * byte per unit,
///   sum_k W x = sum_units scale * sum_k m * level * byte
///             + sum_sub-blocks (offset - zero point * m) * scale * sum bytes.
/// The level * byte sums are integer dot products of unsigned and signed
/// bytes, four at a time: AVX-512 VNNI's vpdpbusd where the target has it.
/// Many rows on a target with AMX tiles take the levels less their zero
/// point as signed bytes instead (q8_0's as stored): AMX multiplies signed
/// by signed (tdpbssd), and only q4_K's and q5_K's minimums are offsets.
/// One row sums each unit's 8 groups of 4 as 8 lanes, scaled and summed
/// over the units as a vector; many rows sum a unit's pieces of one
/// multiplier (the whole unit, or q6_K's two sub-blocks of 16) for a vector
/// of rows at once. One row starts each group's integer sum at
/// -zero point * sum of its bytes, so that the sum is the levels' own
/// product and only q4_K's and q5_K's minimums remain as offsets: a second
/// pass over the row's multipliers for the zero point cost decode of
/// Llama 2 7B q8_0 a fifth of its time. The two differ in the order of
/// float additions, and in the zero point's product, exact in one row.
/// Returns whether the product's rows count from the call's first
/// (Value::relativeRows).
bool defineIntegerProduct(OpDefinition &d, Func input, bool oneRow, const StoredWeight &sw,
                          int inDim, int activationBlock, Func affine, Func product) {
  Var c = d.algorithm.col, r = d.algorithm.row, k("k");
  bool relativeRows = false;
  IntegerProduct ip;
  Var g = ip.group = Var("group"), u("unit"), sb("sub_block");
  int units = inDim / 32, subBlockSize = sw.subBlockSize();

  // Units, sub-blocks and quads past the row's read its last one, for
  // autoschedulers' shifted tiles.
  auto within = [&](Expr i, int count) { return oneRow ? i : clamp(i, 0, count - 1); };
  // The input's scale is shared by `activationBlock` values: 32, or a
  // k-quant's whole block (as llama.cpp's q8_K). One row of such a block
  // on a target multiplying pairs of bytes then sums the block's units in
  // integers, each unit's pair sums times its sub-blocks' integer scales
  // in the instruction that widens them (blockDot, pmaddwd), and scales
  // the sum to f32 once per block, as llama.cpp's q4_K, q5_K and q6_K dot
  // products on AVX2 do.
  int unitsPerBlock = sw.subBlocks() * subBlockSize / 32;
  int unitsPerScale = activationBlock / 32;
  bool blockSums = oneRow && d.algorithm.bytePairs && sw.hasIntegerSubBlockScales() &&
                   unitsPerScale == unitsPerBlock;
  RDom inScaleRun(0, 32 * unitsPerScale, d.name + "_in_scale_run");
  ip.scale = Func(d.name + "_act_scale");
  ip.scale(u, r) = maximum(abs(input(
                       within(u / unitsPerScale, units / unitsPerScale) * (32 * unitsPerScale) +
                           inScaleRun,
                       r))) /
                   127.0f;
  Expr scale = ip.scale(k / 32, r);
  ip.quantized = Func(d.name + "_act_bytes");
  ip.quantized(k, r) = cast<int8_t>(
      clamp(round(input(k, r) * select(scale > 0.0f, 1.0f / scale, 0.0f)), -127.0f, 127.0f));
  // Many rows on a target with AMX: the levels less their zero point times
  // the signed bytes (tdpbssd multiplies signed by signed), so that only
  // q4_K's and q5_K's minimums remain as offsets. Halide 14 finds AMX's
  // product only as an Int(8) load widened to int32 times another: q8_0's
  // levels are its stored bytes, the others' are unpacked into `levels`.
  ip.signedLevels = !oneRow && d.algorithm.amx.int8;
  if (ip.signedLevels && !sw.hasSignedLevels()) {
    Var e("e");
    ip.levels = Func(d.name + "_levels");
    ip.levels(e, u, c) =
        cast<int8_t>(sw.unitLevel(within(u, units), e / 4, e % 4, c) -
                     cast<uint8_t>(sw.levelZeroPoint()));
  }
  // Pairs of bytes (KernelAlgorithm::bytePairs) multiply q8_0's levels as
  // stored, signed, as AMX's tiles do: no zero point to take off.
  bool bytePairs = d.algorithm.bytePairs && !ip.signedLevels;
  bool signedBytes = ip.signedLevels || (bytePairs && sw.hasSignedLevels());
  bool zeroPointInDots = oneRow;
  if (sw.affineCount() == 2 || (!signedBytes && !zeroPointInDots)) {
    RDom inSubBlock(0, subBlockSize, d.name + "_in_sub_block");
    ip.offsetTerms = Func(d.name + "_act_sums");
    Expr subBlock = within(sb, inDim / subBlockSize);
    ip.offsetTerms(sb, r) =
        ip.scale(subBlock * subBlockSize / 32, r) *
        cast<float>(sum(cast<int32_t>(ip.quantized(subBlock * subBlockSize + inSubBlock, r))));

    Expr inBlock = sb % sw.subBlocks(), block = sb / sw.subBlocks();
    Expr offset = sw.affineCount() == 2 ? affine(1, inBlock, block, c) : Expr(0.0f);
    if (!signedBytes && !zeroPointInDots)
      offset += -static_cast<float>(sw.levelZeroPoint()) * affine(0, inBlock, block, c);
    ip.offsets = Func(d.name + "_offsets");
    ip.offsets(sb, c) = offset;
    if (!oneRow)
      ip.overSubBlocks = RDom(0, inDim / subBlockSize, d.name + "_sub_blocks");
  }

  auto levelTimesByte = [&](Expr unit, Expr group, Expr j, Expr byte) {
    if (ip.signedLevels) {
      Expr level = sw.hasSignedLevels() ? sw.signedUnitLevel(unit, group, j, c)
                                        : ip.levels(group * 4 + j, unit, c);
      return cast<int32_t>(level) * cast<int32_t>(byte);
    }
    return cast<int32_t>(cast<int16_t>(sw.unitLevel(unit, group, j, c)) * cast<int16_t>(byte));
  };
  // With bytePairs: pairDot, the forms of x86's pmaddubsw (a saturating
  // sum of two products of unsigned and signed bytes, in int16) and of
  // pmaddwd (a sum of two int16 products, in int32; here by 1), which
  // Halide 14 emits for vector reductions of exactly these forms. q8_0's
  // signed levels take the bytes' signs, the bytes multiply as magnitudes.
  // Without them, the 110M Llama's 8-bit decode on an AVX2 AMD EPYC
  // widened every byte to int16 and added adjacent lanes in shuffles
  // (tfm-bench --rates, 3 alternating runs: q8_0 133-139 -> 155-203 tok/s,
  // Q4_K_M 126-151 -> 173-217).
  if (bytePairs)
    ip.inPair = RDom(0, 2, d.name + "_in_pair");
  auto pairTerm = [&](Expr unit, Expr group, Expr j, Expr byte) {
    if (!sw.hasSignedLevels())
      return Internal::widening_mul(sw.unitLevel(unit, group, j, c), byte);
    // The byte's magnitude times the level with the byte's sign: the sign
    // (-1 or 0) comes once per vector of bytes, shared by every row, and
    // flips a level in two instructions (xor, subtract). A level of -128,
    // which no quantizer writes, flips to 127: saturating, not wrapping.
    Expr sign = byte >> 7;
    Expr level = sw.signedUnitLevel(unit, group, j, c);
    return Internal::widening_mul(abs(byte), Internal::saturating_sub(level ^ sign, sign));
  };
  auto definePairs = [&](std::vector<Var> args, Expr unit, Expr group, Expr j, Expr byte) {
    ip.pairDot = Func(d.name + "_pair_dot");
    ip.pairDot(args) = cast<int16_t>(0);
    ip.pairDot(args) = Internal::saturating_add(ip.pairDot(args), pairTerm(unit, group, j, byte));
  };
  auto pairSum = [](Expr pairs) { return Internal::widening_mul(pairs, cast<int16_t>(1)); };
  product(c, r) = 0.0f;
  if (oneRow) {
    // q4_K's and q5_K's offsets start the lanes, sub-blocks 8i + g in
    // lane g, so that a schedule computes them with the lanes, from the
    // multipliers and offsets it decoded for them, and adds them across
    // lanes with the rest: a second update of the product looped over the
    // columns again and decoded them again (Llama 2 7B Q4_K_M decode with
    // 8-bit activations, 4.6 -> 5.2 tok/s on a Sapphire Rapids VM). Their
    // blocks have 8 sub-blocks.
    Expr lanesStart = 0.0f;
    if (ip.offsets.defined()) {
      ip.overSubBlocks = RDom(0, inDim / subBlockSize / 8, d.name + "_sub_blocks_of_lanes");
      Expr subBlock = ip.overSubBlocks * 8 + g;
      ip.offsetDot = Func(d.name + "_offset_dot");
      ip.offsetDot(g, c, r) = 0.0f;
      ip.offsetDot(g, c, r) += ip.offsets(subBlock, c) * ip.offsetTerms(subBlock, r);
      lanesStart = ip.offsetDot(g, c, r);
    }
    ip.lanes = Func(d.name + "_lanes");
    ip.lanes(g, c, r) = lanesStart;
    ip.overGroups = RDom(0, 8, d.name + "_groups");
    int zeroPoint = signedBytes ? 0 : sw.levelZeroPoint();
    Var h("pair");
    if (bytePairs) {
      // One index of the unit's values, so that a vector of pairs loads
      // its levels as one run rather than a byte at a time.
      Expr e = h * 2 + ip.inPair;
      definePairs({h, u, c, r}, u, e / 4, e % 4, ip.quantized(u * 32 + e, r));
    }
    if (blockSums) {
      // q6_K's zero point taken off each pair sum in int16 (the pair's
      // bytes times 32, at most 8128 in magnitude, once per call), so that
      // the difference multiplies its sub-block's scale as it widens.
      if (zeroPoint) {
        ip.zeroPointPairs = Func(d.name + "_zero_point_pairs");
        ip.zeroPointPairs(h, u, r) =
            cast<int16_t>(zeroPoint) * (cast<int16_t>(ip.quantized(u * 32 + h * 2, r)) +
                                        cast<int16_t>(ip.quantized(u * 32 + h * 2 + 1, r)));
      }
      Var s("sub_block"), b("block");
      ip.subScales = Func(d.name + "_sub_scales");
      // q6_K's scales as bytes: a unit's two (8 lanes each) widen from a
      // byte shuffle (vpshufb, vpmovsxbw), where as int16 they took four
      // shuffles (its block loop in the 110M Llama's logits: 120 -> 110
      // instructions). One scale per unit broadcasts best as int16.
      Type scaleType = subBlockSize == 16 ? Int(8) : Int(16);
      ip.subScales(s, b, c) = cast(scaleType, sw.subBlockScale(0, b, s, c));
      ip.inBlock = RDom({{0, 2}, {0, unitsPerBlock}}, d.name + "_in_block");
      Expr unit = b * unitsPerBlock + ip.inBlock.y, pair = g * 2 + ip.inBlock.x;
      Expr pairSum = ip.pairDot(pair, unit, c, r);
      if (zeroPoint)
        pairSum = pairSum - ip.zeroPointPairs(pair, unit, r);
      ip.blockDot = Func(d.name + "_block_dot");
      ip.blockDot(g, b, c, r) = 0;
      ip.blockDot(g, b, c, r) += Internal::widening_mul(
          pairSum, cast<int16_t>(ip.subScales(sw.unitSubBlock(unit, g), b, c)));
      // Each block's multiplier times its input scale, as vectors before
      // the sum (as the sub-blocks' below).
      ip.multipliers = Func(d.name + "_multipliers");
      ip.multipliers(b, c, r) = sw.blockScale(0, b, c) * ip.scale(b * unitsPerBlock, r);
      ip.overBlocks = RDom(0, sw.blocks(), d.name + "_blocks");
      ip.lanes(g, c, r) += cast<float>(ip.blockDot(g, ip.overBlocks, c, r)) *
                           ip.multipliers(ip.overBlocks, c, r);
    } else {
      ip.inGroup = RDom(0, bytePairs ? 2 : 4, d.name + "_in_group");
      Expr start = 0;
      if (zeroPoint) {
        RDom inQuad(0, 4, d.name + "_in_quad");
        ip.zeroPointSums = Func(d.name + "_zero_point_sums");
        ip.zeroPointSums(g, u, r) = 0;
        // Clamped: autoschedulers' shifted tiles compute quads past the row's.
        Expr quad = clamp(u * 8 + g, 0, inDim / 4 - 1);
        ip.zeroPointSums(g, u, r) +=
            -zeroPoint * cast<int32_t>(ip.quantized(quad * 4 + inQuad, r));
        start = ip.zeroPointSums(g, u, r);
      }
      ip.unitDot = Func(d.name + "_unit_dot");
      ip.unitDot(g, u, c, r) = start;
      if (bytePairs)
        ip.unitDot(g, u, c, r) += pairSum(ip.pairDot(g * 2 + ip.inGroup, u, c, r));
      else
        ip.unitDot(g, u, c, r) +=
            levelTimesByte(u, g, ip.inGroup, ip.quantized(u * 32 + g * 4 + ip.inGroup, r));
      ip.overUnits = RDom(0, units, d.name + "_units");
      RVar unit = ip.overUnits.x;
      // Each sub-block's multiplier times its unit's input scale, a Func of
      // its own, so that a schedule computes a row's products as vectors
      // rather than one per unit inside the sum.
      Var s("sub_block");
      ip.multipliers = Func(d.name + "_multipliers");
      ip.multipliers(s, c, r) = affine(0, s % sw.subBlocks(), s / sw.subBlocks(), c) *
                                ip.scale(s * subBlockSize / 32, r);
      Expr multiplier = ip.multipliers(
          sw.unitBlock(unit) * sw.subBlocks() + sw.unitSubBlock(unit, g), c, r);
      ip.lanes(g, c, r) += cast<float>(ip.unitDot(g, unit, c, r)) * multiplier;
    }
    product(c, r) += ip.lanes(ip.overGroups, c, r);
  } else {
    // The bytes as quads of consecutive values, rows next to each other:
    // a vector of 16 rows' quads is one 64-byte load. Without AMX, in row
    // tiles as f32 activations (KernelAlgorithm::rowTiles), the product's
    // rows counting from the call's first: a tile's quads are then one
    // contiguous stream, where each quad's rows lay a whole call's rows
    // from the next.
    Var j("j"), quad("quad"), piece("piece");
    ip.quads = Func(d.name + "_act_quads");
    Expr byteOfQuad = within(quad, inDim / 4) * 4 + j;
    int tile = d.algorithm.activationRowTile;
    relativeRows = !ip.signedLevels;
    if (relativeRows) {
      Var i("i"), t("tile");
      ip.quads(j, i, quad, t) = ip.quantized(byteOfQuad, d.algorithm.firstRow() + t * tile + i);
    } else {
      ip.quads(j, r, quad) = ip.quantized(byteOfQuad, r);
    }
    auto rowQuad = [&](Expr j, Expr quad) -> Expr {
      return relativeRows ? ip.quads(j, r % tile, quad, r / tile) : ip.quads(j, r, quad);
    };
    Expr row = relativeRows ? r + d.algorithm.firstRow() : Expr(r);
    int pieceGroups = std::min(subBlockSize, 32) / 4;
    ip.inPiece = RDom({{0, bytePairs ? 2 : 4}, {0, pieceGroups}}, d.name + "_in_piece");
    Expr group = piece * pieceGroups + ip.inPiece.y;
    ip.pieceDot = Func(d.name + "_piece_dot");
    ip.pieceDot(piece, c, r, u) = 0;
    if (bytePairs) {
      // A vector of rows' pairs of a quad, their bytes one run of quads.
      Var h("pair"), gr("group");
      Expr j = h * 2 + ip.inPair;
      definePairs({h, gr, c, r, u}, u, gr, j, rowQuad(j, u * 8 + gr));
      ip.pieceDot(piece, c, r, u) += pairSum(ip.pairDot(ip.inPiece.x, group, c, r, u));
    } else {
      ip.pieceDot(piece, c, r, u) +=
          levelTimesByte(u, group, ip.inPiece.x, rowQuad(ip.inPiece.x, u * 8 + group));
    }
    ip.overPieces = RDom({{0, 32 / (4 * pieceGroups)}, {0, units}}, d.name + "_pieces");
    RVar p = ip.overPieces.x, unit = ip.overPieces.y;
    product(c, r) += cast<float>(ip.pieceDot(p, c, r, unit)) *
                     (affine(0, sw.unitSubBlock(unit, p * pieceGroups), sw.unitBlock(unit), c) *
                      ip.scale(unit, row));
    if (ip.offsets.defined())
      product(c, r) += ip.offsets(ip.overSubBlocks, c) * ip.offsetTerms(ip.overSubBlocks, row);
  }
  d.result.integer = ip;
  return relativeRows;
}

} // namespace

void defineLinear(OpDefinition &d) {
  Value &x = d.operand(0), &w = d.operand(1);
  int inDim = static_cast<int>(w.shape[1]);
  Var c = d.algorithm.col, r = d.algorithm.row;
  bool oneRow = x.shape[0] == 1;
  bool bf16Input = d.attrs<LinearAttrs>().bf16Input;
  Func input = oneRow ? x.func : clampedRows(d, x);
  Func product(d.name + "_product");
  RDom over;
  // An f32 product of many rows reads its activations in row tiles, and
  // its rows count from the call's first (Value::relativeRows): row r is
  // lane r % tile of tile r / tile, which Halide simplifies to a vector's
  // contiguous lanes where a schedule aligns the product's rows to tiles
  // (from a row offset by the first, it could not, and gathered).
  bool relativeRows = false;
  auto activation = [&](Func in, Expr k) -> Expr {
    if (oneRow)
      return in(k, r);
    relativeRows = true;
    int tile = d.algorithm.activationRowTile;
    return rowTiles(d, in)(r % tile, k, r / tile);
  };
  // The weight's decoded values are a Func of their own, so that a schedule
  // can decode a tile of them once for many rows.
  if (w.stored && w.stored->isBlocked()) {
    // Element, sub-block, block: each sub-block's multiplier and offset are
    // invariants of its inner loop, and its bytes are contiguous.
    const StoredWeight &sw = *w.stored;
    Var e("e"), s("s"), b("b"), i("i");
    Func affine(d.name + "_affine"); // (i, sub-block, block, col)
    Expr map = sw.affine(0, b, s, c);
    if (sw.affineCount() == 2)
      map = select(i == 0, map, sw.affine(1, b, s, c));
    affine(i, s, b, c) = map;
    Func decoded(d.name + "_decoded");
    decoded(e, s, b, c) = sw.at(b, s, e, c, [&](int index) { return affine(index, s, b, c); });
    d.result.subBlockAffine = affine;
    over = RDom({{0, sw.subBlockSize()}, {0, sw.subBlocks()}, {0, sw.blocks()}}, d.name + "_k");
    d.result.decodedWeights = decoded;
    if (d.attrs<LinearAttrs>().activationBlock > 0) {
      relativeRows = defineIntegerProduct(d, input, oneRow, sw, inDim,
                                          static_cast<int>(d.attrs<LinearAttrs>().activationBlock),
                                          affine, product);
    } else {
      Expr k = (over.z * sw.subBlocks() + over.y) * sw.subBlockSize() + over.x;
      product(c, r) = 0.0f;
      product(c, r) += activation(input, k) * decoded(over.x, over.y, over.z, c);
    }
  } else if (bf16Input && !oneRow && d.algorithm.amx.bf16 && inDim % 2 == 0) {
    over = defineBf16PairProduct(d, x, w, inDim, product);
  } else {
    if (bf16Input)
      input = roundedToBf16(d, input);
    Var k("k");
    Func decoded(d.name + "_decoded");
    decoded(k, c) = w.func(k, c);
    over = RDom(0, inDim, d.name + "_k");
    product(c, r) = 0.0f;
    product(c, r) += activation(input, over) * decoded(over, c);
    d.result.decodedWeights = decoded;
  }
  Func f(d.name);
  Expr productRow = relativeRows ? r - d.algorithm.firstRow() : Expr(r);
  if (d.op.operands.size() > 2) {
    Value &bias = d.operand(2);
    if (bias.shape != std::vector<int64_t>{w.shape[0]})
      d.fail("bias has " + std::to_string(bias.shape.empty() ? 0 : bias.shape[0]) +
             " entries, expected " + std::to_string(w.shape[0]) + " (one per output column)");
    f(c, r) = product(c, productRow) + bias.func(c);
  } else {
    f(c, r) = product(c, productRow);
  }
  d.result.func = f;
  d.result.reduction = over;
  d.result.product = product;
  d.result.relativeRows = relativeRows;
  d.result.activations = input;
}

} // namespace tfm::kernels
