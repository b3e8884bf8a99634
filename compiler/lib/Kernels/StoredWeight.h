//===- StoredWeight.h - A weight read in its file's format -------*- C++ -*-===//
//
// Kernels read weights where the runtime mapped them, in the format of the
// weight file: f32, f16, bf16, or one of GGUF's block formats
// (tfm/common/BlockQuant.h). A StoredWeight is the buffer a kernel binds for
// one weight and the f32 value of each element, decoded from that buffer
// in registers; nothing is converted ahead of the kernel.
//
// Block formats are addressed by block, sub-block and element, the
// structure their scales follow: a reduction over a row walks
//   k = (block * subBlocks + subBlock) * subBlockSize + element
// so that the scales of a sub-block are loop invariants of its elements
// and the elements' bytes are contiguous for vector loads.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_STOREDWEIGHT_H
#define TFM_KERNELS_STOREDWEIGHT_H

#include "tfm/common/ElementEncoding.h"

#include "Halide.h"

#include <functional>
#include <string>

namespace tfm::kernels {

/// How a kernel holds f16 and bf16 values: as Halide's types (the CPU's
/// back end widens them), or as their bits in u16, converted with integer
/// operations. GPU kernels take the bits: Halide 14's OpenCL back end
/// declares f16 buffers as `half`, which needs cl_khr_fp16 (POCL lacks it),
/// and its CUDA back end aborts inside LLVM on bf16.
enum class SixteenBitFloats { HalideTypes, IntegerBits };

/// The element type of the buffer holding values of `encoding`: f32, f16,
/// bf16 (u16 for both with IntegerBits), or bytes for a block format (i8
/// for q8_0, whose levels are signed bytes; u8 for the others).
Halide::Type storedElementType(const ElementEncoding &encoding,
                               SixteenBitFloats sixteen = SixteenBitFloats::HalideTypes);

/// The f32 value of the f16 whose bits `bits` (u16) holds, exactly.
Halide::Expr halfBitsToFloat(Halide::Expr bits);
/// The f32 value of the bf16 whose bits `bits` (u16) holds, exactly.
Halide::Expr bfloat16BitsToFloat(Halide::Expr bits);
/// The f32 value of a stored f16 or bf16 element `stored` (of either
/// storedElementType), widened.
Halide::Expr widenSixteenBits(Halide::Expr stored, DType type);
/// `value` (f32) rounded to the nearest f16 or bf16, ties to even, as it
/// is stored under `sixteen`: infinities and NaNs kept, f16 overflow to
/// infinity, f16 subnormals exact.
Halide::Expr narrowToSixteenBits(Halide::Expr value, DType type, SixteenBitFloats sixteen);

class StoredWeight {
public:
  /// `image` holds rows of `rowLength` values as `encoding` stores them;
  /// `reads` is what the kernel reads of it: the image itself, or its
  /// values with the edge repeated past its bounds (InputReads).
  StoredWeight(Halide::ImageParam image, Halide::Func reads, ElementEncoding encoding,
               int rowLength);

  const ElementEncoding &encoding() const { return encoding_; }
  bool isBlocked() const { return encoding_.block.has_value(); }

  /// The value of column `k` of row `n` (a vector: element `k`).
  Halide::Expr at(Halide::Expr k, Halide::Expr n) const;
  /// The value of element `e` of sub-block `s` of block `b` of row `n`.
  Halide::Expr at(Halide::Expr b, Halide::Expr s, Halide::Expr e, Halide::Expr n) const;
  /// The same, with the sub-block's affine map (affine(i, b, s, n) for i
  /// below affineCount()) taken from `subBlockAffine(i)`: a schedule may
  /// then decode a row's maps apart, as vectors, instead of one per
  /// sub-block inside the dot product.
  Halide::Expr at(Halide::Expr b, Halide::Expr s, Halide::Expr e, Halide::Expr n,
                  const std::function<Halide::Expr(int)> &subBlockAffine) const;

  /// Every block format stores value = multiplier * level (+ offset) with
  /// one multiplier (and offset) per sub-block: affineCount() is 2 for
  /// q4_k and q5_k, which have offsets, else 1 (0 for a plain type).
  int affineCount() const;
  /// The multiplier (i = 0) or offset (i = 1) of sub-block `s` of block `b`.
  Halide::Expr affine(int i, Halide::Expr b, Halide::Expr s, Halide::Expr n) const;
  /// The k-quants (q4_K, q5_K, q6_K) store a sub-block's multiplier and
  /// offset as an integer per sub-block (6-bit for q4_K and q5_K, int8 for
  /// q6_K; subBlockScale, as Int(32)) times an f16 per block (blockScale,
  /// negated for the offset): affine() is their product. Integer dot
  /// products sum a block's sub-blocks in integers with them.
  bool hasIntegerSubBlockScales() const;
  Halide::Expr blockScale(int i, Halide::Expr b, Halide::Expr n) const;
  Halide::Expr subBlockScale(int i, Halide::Expr b, Halide::Expr s, Halide::Expr n) const;
  /// The integer level of element `e` of sub-block `s` of block `b`, as f32.
  Halide::Expr level(Halide::Expr b, Halide::Expr s, Halide::Expr e, Halide::Expr n) const;

  /// Integer dot products (8-bit activations, Ops/IntegerProduct.cpp) read a
  /// block-format row in units of 32 values, each unit as 8 groups of 4:
  /// level(b, s, e) = unitLevel(...) - levelZeroPoint(), where unitLevel
  /// is the stored integer as an unsigned byte (q8_0's signed bytes offset
  /// by 128), for value 4 * group + j of unit `unit` of row `n`.
  Halide::Expr unitLevel(Halide::Expr unit, Halide::Expr group, Halide::Expr j,
                         Halide::Expr n) const;
  int levelZeroPoint() const;
  /// q8_0 only: its level as the signed byte it is stored as (an Int(8)
  /// load, level() without the offset), for products of two signed bytes.
  bool hasSignedLevels() const;
  Halide::Expr signedUnitLevel(Halide::Expr unit, Halide::Expr group, Halide::Expr j,
                               Halide::Expr n) const;
  /// The sub-block (within its block) and block of value 4 * group of a
  /// unit: a unit lies in one sub-block of 32, or spans two of 16.
  Halide::Expr unitSubBlock(Halide::Expr unit, Halide::Expr group) const;
  Halide::Expr unitBlock(Halide::Expr unit) const;

  /// A row as blocks of sub-blocks (1 sub-block of the whole row for a
  /// plain type).
  int subBlockSize() const { return subBlockSize_; }
  int subBlocks() const { return subBlocks_; }
  int blocks() const { return blocks_; }

private:
  /// The stored integer of value `e` (of 32) of unit `unit` of block `b`
  /// (q8_0's signed byte + 128), computed in `type`: what level() (in
  /// int32, whose shifts x86 has) and unitLevel() (in bytes) read.
  Halide::Expr storedLevel(Halide::Expr b, Halide::Expr unit, Halide::Expr e, Halide::Expr n,
                           Halide::Type type) const;
  int unitsPerBlock() const;
  /// Throws, naming the weight, unless its format has integer sub-block
  /// multipliers (i = 0) or offsets (i = 1): only the k-quants, and of
  /// them only q4_K and q5_K have offsets.
  void requireSubBlockScale(int i) const;
  /// The stored byte at `offset`, as UInt(8) whatever the image's type.
  Halide::Expr unsignedByte(Halide::Expr offset, Halide::Expr n) const;
  Halide::Expr byteAt(Halide::Expr offset, Halide::Expr n) const;
  Halide::Expr halfAt(Halide::Expr offset, Halide::Expr n) const;

  Halide::ImageParam image_;
  Halide::Func reads_;
  ElementEncoding encoding_;
  int rowLength_, subBlockSize_, subBlocks_, blocks_;
};

} // namespace tfm::kernels

#endif // TFM_KERNELS_STOREDWEIGHT_H
