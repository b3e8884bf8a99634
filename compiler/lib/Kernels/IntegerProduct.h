//===- IntegerProduct.h - x @ W^T with 8-bit activations --------*- C++ -*-===//
//
// A linear op whose input is quantized to 8 bits (its activation_block)
// multiplies a block-format weight's integer levels by the input's bytes
// in integer dot products (Ops/IntegerProduct.cpp). With W's value
// m * (level - zero point) + offset per sub-block and x's scale * byte per
// unit of 32 values,
//   sum_k W x = sum_units scale * sum_k m * level * byte
//             + sum_sub-blocks (offset - zero point * m) * scale * sum bytes.
//
// The integer sums take one of three forms, each a handle of its own, so
// that a schedule sees exactly the Funcs its form defines:
//  * RowUnitSums: one row (decode), each unit's 8 groups of 4 values as 8
//    lanes (vpdpbusd, or pairs of bytes);
//  * RowBlockSums: one row of a k-quant on a target multiplying bytes in
//    pairs, a whole block's units summed in integers, as llama.cpp does on
//    AVX2;
//  * PieceSums: many rows (prefill), a unit's pieces of one multiplier for
//    a vector of rows at once, in registers or, on a target with AMX, in
//    tiles of signed levels.
// A target that multiplies bytes in pairs (x86's pmaddubsw then pmaddwd:
// AVX2, and AVX-512 without VNNI) sums BytePairs in any of them.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_INTEGERPRODUCT_H
#define TFM_KERNELS_INTEGERPRODUCT_H

#include "Halide.h"

#include <optional>
#include <variant>
#include <vector>

namespace tfm::kernels {

/// The input quantized to 8 bits in units of 32 values, each an f32 scale
/// (shared by a k-quant block's 8 units with activation_block 256) and 32
/// signed bytes; and, where the weight has offsets the integer sums leave
/// out, the sub-blocks' sums of bytes and the weight's offsets, which
/// multiply them as one dot product over sub-blocks.
struct QuantizedInput {
  Halide::Func scale;         // (unit, row): the largest |x| of the unit (or of its
                              // activation block) / 127
  Halide::Func quantized;     // (k, row): x / scale, rounded, as int8
  Halide::Func offsetTerms;   // (sub-block, row): scale * sum of the sub-block's bytes
  Halide::Func offsets;       // (sub-block, col): the weight's offset - zero point * multiplier
  Halide::RDom overSubBlocks; // the row's sub-blocks: many rows' second update of the
                              // product; in one row, offsetDot's, 8 sub-blocks a step
};

/// Pairs of levels times bytes, int16, as x86's pmaddubsw multiplies
/// unsigned by signed bytes: q8_0's bytes as their magnitudes and its
/// levels with the bytes' signs. The bytes' magnitudes are at most 127,
/// the levels of the other formats under 64 and q8_0's at most 127 (a
/// stored -128 flips to 127, saturating): a pair's sum never saturates.
struct BytePairs {
  Halide::Func pairDot; // one row: (pair, unit, col, row); many rows: (pair of the
                        // quad, group, col, row, unit)
  Halide::RDom inPair;  // the 2 values of a pair
};

/// What both one-row forms sum into: `lanes`, summed across by the
/// product's first update.
struct RowLanes {
  Halide::Var group;        // of 4 values in a unit: the vector lanes
  Halide::Func offsetDot;   // (group, col, row): offsets times offsetTerms of
                            // sub-blocks 8i + group, q4_K and q5_K only
  Halide::Func lanes;       // (group, col, row): offsetDot plus the scaled integer sums
  Halide::Func multipliers; // the weight's multipliers times the input's scales
  Halide::RDom overGroups;  // a unit's 8 groups
};

/// One row: each unit's integer sums in 8 lanes, scaled by its sub-block's
/// multiplier times its input scale (multipliers: (sub-block, col, row))
/// and summed over the units. unitDot starts at zeroPointSums, so that it
/// is the levels less their zero point times the bytes, and only q4_K's
/// and q5_K's minimums are offsets.
struct RowUnitSums {
  RowLanes row;
  Halide::Func zeroPointSums;     // (group, unit, row): -zero point * sum of 4 bytes, int32;
                                  // undefined for signed levels
  Halide::Func unitDot;           // (group, unit, col, row): 4 levels times 4 bytes, int32
  std::optional<BytePairs> pairs; // unitDot sums pairDots
  Halide::RDom inGroup;           // the 4 values of a group (with pairs, its 2 pairs)
  Halide::RDom overUnits;         // the row's units
};

/// One row of a k-quant on a target multiplying bytes in pairs: a block's
/// units summed in integers, each unit's pair sums times its sub-blocks'
/// integer scales in the instruction that widens them (pmaddwd), scaled to
/// f32 once per block by multipliers ((block, col, row): the block's scale
/// times its input scale).
struct RowBlockSums {
  RowLanes row;
  BytePairs pairs;
  Halide::Func zeroPointPairs; // (pair, unit, row): q6_K's zero point times the pair's
                               // bytes, int16; undefined for the others
  Halide::Func subScales;      // (sub-block, block, col): StoredWeight::subBlockScale,
                               // int16 (q6_K's int8)
  Halide::Func blockDot;       // (group, block, col, row): the sum over the block's units
                               // of (pairDot - zeroPointPairs) * subScales, int32
  Halide::RDom inBlock;        // (pair of the group, unit of the block)
  Halide::RDom overBlocks;     // the row's blocks
};

/// Many rows: the product's first update sums each unit's pieces (the
/// whole unit, or q6_K's two sub-blocks of 16) of a vector of rows,
/// scaled by the piece's multiplier and the rows' input scales.
struct PieceSums {
  Halide::Func quads;             // (j, i, quad, tile), rows in tiles from the call's first; with
                                  // signedLevels (j, row, quad): byte 4 * quad + j of the row
  Halide::Func pieceDot;          // (piece, col, row, unit): the piece's levels times bytes, int32
  std::optional<BytePairs> pairs; // pieceDot sums pairDots
  Halide::RDom inPiece;           // (j, group of the piece); with pairs (pair of the quad, group)
  Halide::RDom overPieces;        // (piece of a unit, unit)
  /// On a target with AMX tiles: pieceDot multiplies the weight's levels
  /// less their zero point as signed bytes (tdpbssd multiplies signed by
  /// signed), q8_0's as stored (StoredWeight::signedUnitLevel), the other
  /// formats' unpacked into `levels`. Only q4_K's and q5_K's minimums are
  /// then offsets.
  bool signedLevels = false;
  Halide::Func levels; // (e, unit, col): value e of the unit's level - zero point, int8
};

struct IntegerProduct {
  QuantizedInput input;
  std::variant<RowUnitSums, RowBlockSums, PieceSums> sums;

  /// Every Func a schedule places, for one that places them all alike
  /// (the offsets are the weight's maps, inlined wherever they are read).
  std::vector<Halide::Func> placedFuncs() const;
};

} // namespace tfm::kernels

#endif // TFM_KERNELS_INTEGERPRODUCT_H
