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
    tiles(i, k, tile) = input(k, d.algorithm.firstRow() + tile * d.algorithm.activationRowTile + i);
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
    rounded(k, d.algorithm.row) = widenSixteenBits(
        narrowToSixteenBits(input(k, d.algorithm.row), DType::BF16, d.algorithm.sixteenBitFloats),
        DType::BF16);
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
  product(c, r) +=
      w.stored->at(over.y * 2 + over.x, c) * cast<float>(pairs(over.x, at % 16, over.y, at / 16));
  d.result.bf16Pairs = pairs;
  return over;
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
      relativeRows = defineIntegerProduct(
          d, {input, sw, inDim, static_cast<int>(d.attrs<LinearAttrs>().activationBlock), oneRow,
              affine, product});
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
