//===- StoredWeight.cpp - A weight read in its file's format ---------------===//
//
// The block decoders follow the formats' definitions (BlockQuant.h), in
// ggml's byte order; tfm/common/BlockQuant.cpp's dequantizeRow is the same
// definition in scalar C++, and the kernel tests hold the two to each other.
//
//===----------------------------------------------------------------------===//
#include "StoredWeight.h"

#include <stdexcept>

using namespace Halide;
using namespace tfm;
using namespace tfm::kernels;

Type tfm::kernels::storedElementType(const ElementEncoding &encoding, SixteenBitFloats sixteen) {
  // q8_0's levels are signed bytes: AMX's tile product (tdpbssd) matches
  // only a load of Int(8), never a reinterpreted UInt(8).
  if (encoding.block)
    return *encoding.block == BlockFormat::Q8_0 ? Int(8) : UInt(8);
  switch (encoding.plain) {
  case DType::F16:
    return sixteen == SixteenBitFloats::IntegerBits ? UInt(16) : Float(16);
  case DType::BF16:
    return sixteen == SixteenBitFloats::IntegerBits ? UInt(16) : BFloat(16);
  case DType::I32:
    return Int(32);
  case DType::F32:
    break;
  }
  return Float(32);
}

StoredWeight::StoredWeight(ImageParam image, Func reads, ElementEncoding encoding,
                           int rowLength)
    : image_(image), reads_(reads), encoding_(encoding), rowLength_(rowLength) {
  subBlockSize_ = rowLength;
  subBlocks_ = 1;
  blocks_ = 1;
  if (!encoding.block)
    return;
  const BlockLayout &layout = blockLayout(*encoding.block);
  if (rowLength % layout.blockElements != 0)
    throw std::runtime_error("weight " + image.name() + ": rows of " +
                             std::to_string(rowLength) + " values are not whole " +
                             layout.name + " blocks of " +
                             std::to_string(layout.blockElements));
  // The sub-block is the run of values sharing one scale.
  switch (*encoding.block) {
  case BlockFormat::Q8_0:
  case BlockFormat::Q4_0:
  case BlockFormat::Q4_K:
  case BlockFormat::Q5_K:
    subBlockSize_ = 32;
    break;
  case BlockFormat::Q6_K:
    subBlockSize_ = 16;
    break;
  }
  subBlocks_ = static_cast<int>(layout.blockElements) / subBlockSize_;
  blocks_ = rowLength / static_cast<int>(layout.blockElements);
}

Expr StoredWeight::unsignedByte(Expr offset, Expr n) const {
  Expr stored = reads_(offset, n);
  return stored.type() == UInt(8) ? stored : cast<uint8_t>(stored);
}

Expr StoredWeight::byteAt(Expr offset, Expr n) const {
  return cast<int32_t>(unsignedByte(offset, n));
}

/// Halide 14 emulates f16 casts with about fifteen integer operations, even
/// where the CPU has F16C; this exact conversion takes about ten. Shifting
/// the sign-extended bits left by 13 puts the exponent and mantissa where an
/// f32's go and copies of the sign in bits 28..31; clearing bits 28..30
/// leaves a signed f32 that is a normal f16 times 2^-112, so one
/// multiplication rescales it (the sign rides along). An f16 subnormal would
/// pass through an f32 subnormal that way, which the kernels' flushed
/// subnormals (the driver sets FTZ and DAZ) read as zero: it is its mantissa,
/// converted as an integer, times 2^-24, with the sign put back. An all-ones
/// exponent (infinity, NaN) takes an all-ones f32 exponent, keeping the NaN
/// payload. Where the target converts f16 itself (F16C, AArch64), tfmc's
/// back end recognises these operations and emits that one instruction
/// instead (tfm/Codegen/HalfWidening.h): keep the two in step.
Expr tfm::kernels::halfBitsToFloat(Expr bits) {
  Expr shifted = cast<int32_t>(reinterpret(Int(16), cast<uint16_t>(bits))) << 13;
  Expr signedMagnitude = shifted & static_cast<int32_t>(0x8fffe000);
  Expr exponent = shifted & 0x0f800000;
  Expr normal = reinterpret(Float(32), signedMagnitude) * 5.192296858534828e+33f; // 2^112
  Expr subnormalMagnitude = cast<float>(shifted & 0x007fe000) * 7.275957614183426e-12f; // 2^-37
  Expr subnormal = reinterpret(Float(32), reinterpret(Int(32), subnormalMagnitude) |
                                              (shifted & static_cast<int32_t>(0x80000000)));
  return select(exponent == 0x0f800000, reinterpret(Float(32), signedMagnitude | 0x7f800000),
                exponent == 0, subnormal, normal);
}

Expr tfm::kernels::bfloat16BitsToFloat(Expr bits) {
  return reinterpret(Float(32), cast<uint32_t>(cast<uint16_t>(bits)) << 16);
}

Expr tfm::kernels::widenSixteenBits(Expr stored, DType type) {
  if (type == DType::F16)
    return halfBitsToFloat(reinterpret(UInt(16), stored));
  return stored.type() == UInt(16) ? bfloat16BitsToFloat(stored) : cast<float>(stored);
}

namespace {

/// A u32 constant: Halide has no operators of an Expr and an unsigned.
Expr u32(uint32_t value) { return Internal::make_const(UInt(32), value); }

/// f32 to f16 bits, ties to even, with integer operations: tfm::toHalf
/// (common/lib/HalfFloat.cpp) as a Halide expression, held to it bit for
/// bit by StoredWeightTest.
Expr floatToHalfBits(Expr value) {
  Expr bits = reinterpret(UInt(32), value);
  Expr sign = cast<uint16_t>((bits >> 16) & u32(0x8000));
  Expr magnitude = bits & u32(0x7fffffff);
  // A normal f16: the exponent rebased by 127 - 15, the mantissa's 13 low
  // bits rounded off; a carry past 0x7bff is 0x7c00, infinity.
  Expr rebased = magnitude - u32(0x38000000);
  Expr normal = min((rebased + u32(0x0fff) + ((rebased >> 13) & u32(1))) >> 13, u32(0x7c00));
  // Below 2^-14 a subnormal: the value in units of 2^-24, an exact f32
  // product, rounded to the nearest even integer.
  Expr subnormal = cast<uint32_t>(round(reinterpret(Float(32), magnitude) * 16777216.0f));
  Expr magnitudeBits = select(magnitude > u32(0x7f800000), u32(0x7e00),        // NaN
                              magnitude == u32(0x7f800000), u32(0x7c00),       // infinity
                              magnitude >= u32(0x38800000), normal, subnormal);
  return sign | cast<uint16_t>(magnitudeBits);
}

/// f32 to bf16 bits, ties to even, a NaN kept quiet: tfm::toBfloat16 as a
/// Halide expression.
Expr floatToBfloat16Bits(Expr value) {
  Expr bits = reinterpret(UInt(32), value);
  Expr rounded = (bits + u32(0x7fff) + ((bits >> 16) & u32(1))) >> 16;
  Expr nan = (bits >> 16) | u32(0x40);
  return cast<uint16_t>(select((bits & u32(0x7fffffff)) > u32(0x7f800000), nan, rounded));
}

} // namespace

Expr tfm::kernels::narrowToSixteenBits(Expr value, DType type, SixteenBitFloats sixteen) {
  if (sixteen == SixteenBitFloats::HalideTypes)
    return cast(type == DType::F16 ? Float(16) : BFloat(16), value);
  return type == DType::F16 ? floatToHalfBits(value) : floatToBfloat16Bits(value);
}

/// An f16 stored little-endian at `offset` (a block's scale).
Expr StoredWeight::halfAt(Expr offset, Expr n) const {
  return halfBitsToFloat(cast<uint16_t>(unsignedByte(offset, n)) |
                         (cast<uint16_t>(unsignedByte(offset + 1, n)) << 8));
}

Expr StoredWeight::at(Expr k, Expr n) const {
  if (!isBlocked()) {
    Expr v = image_.dimensions() == 1 ? reads_(k) : reads_(k, n);
    if (encoding_.plain == DType::F16 || encoding_.plain == DType::BF16)
      return widenSixteenBits(v, encoding_.plain);
    return encoding_.plain == DType::F32 ? v : cast<float>(v);
  }
  int perBlock = subBlockSize_ * subBlocks_;
  return at(k / perBlock, (k % perBlock) / subBlockSize_, k % subBlockSize_, n);
}

int StoredWeight::affineCount() const {
  if (!isBlocked())
    return 0;
  BlockFormat f = *encoding_.block;
  return f == BlockFormat::Q4_K || f == BlockFormat::Q5_K ? 2 : 1;
}

Expr StoredWeight::affine(int i, Expr b, Expr s, Expr n) const {
  if (hasIntegerSubBlockScales())
    return blockScale(i, b, n) * cast<float>(subBlockScale(i, b, s, n));
  // q8_0 and q4_0: f16 d first.
  return halfAt(b * static_cast<int>(blockLayout(*encoding_.block).blockBytes), n);
}

bool StoredWeight::hasIntegerSubBlockScales() const { return isBlocked() && subBlocks_ > 1; }

void StoredWeight::requireSubBlockScale(int i) const {
  if (hasIntegerSubBlockScales() && i >= 0 && i < affineCount())
    return;
  std::string format = isBlocked() ? blockLayout(*encoding_.block).name : "a plain type";
  throw std::logic_error("weight " + image_.name() + ": " + format + " has no sub-block " +
                         (i == 1 ? "offsets" : "scales"));
}

Expr StoredWeight::blockScale(int i, Expr b, Expr n) const {
  requireSubBlockScale(i);
  Expr base = b * static_cast<int>(blockLayout(*encoding_.block).blockBytes);
  if (*encoding_.block == BlockFormat::Q6_K) // f16 d at 208
    return halfAt(base + 208, n);
  // q4_K, q5_K: f16 d, f16 dmin: the value is d*scale*q - dmin*min
  return i == 0 ? halfAt(base, n) : -halfAt(base + 2, n);
}

Expr StoredWeight::subBlockScale(int i, Expr b, Expr s, Expr n) const {
  requireSubBlockScale(i);
  Expr base = b * static_cast<int>(blockLayout(*encoding_.block).blockBytes);
  if (*encoding_.block == BlockFormat::Q6_K) // int8 scales[16] at 192
    return cast<int32_t>(reinterpret(Int(8), unsignedByte(base + 192 + s, n)));
  // q4_K, q5_K: after f16 d and dmin, 12 bytes of 6-bit scales and
  // minimums: those of sub-blocks 0..3 in the low bits of bytes 0..3 and
  // 4..7, those of 4..7 in the nibbles of bytes 8..11 with their top bits in
  // bytes' 0..7 top bits.
  Expr packed = base + 4;
  Expr low, high;
  if (i == 0) {
    low = byteAt(packed + s, n) & 63;
    high = (byteAt(packed + s + 4, n) & 15) | ((byteAt(packed + s - 4, n) >> 6) << 4);
  } else {
    low = byteAt(packed + s + 4, n) & 63;
    high = (byteAt(packed + s + 4, n) >> 4) | ((byteAt(packed + s, n) >> 6) << 4);
  }
  return select(s < 4, low, high);
}

Expr StoredWeight::at(Expr b, Expr s, Expr e, Expr n) const {
  if (!isBlocked())
    return at(e, n);
  return at(b, s, e, n, [&](int i) { return affine(i, b, s, n); });
}

Expr StoredWeight::at(Expr b, Expr s, Expr e, Expr n,
                      const std::function<Expr(int)> &subBlockAffine) const {
  Expr value = subBlockAffine(0) * level(b, s, e, n);
  return affineCount() == 2 ? value + subBlockAffine(1) : value;
}

Expr StoredWeight::level(Expr b, Expr s, Expr e, Expr n) const {
  // A sub-block of 16 values is half of a 32-value unit.
  bool halves = subBlockSize_ == 16;
  Expr level =
      storedLevel(b, halves ? s / 2 : s, halves ? (s % 2) * 16 + e : e, n, Int(32));
  return cast<float>(level - levelZeroPoint());
}

int StoredWeight::levelZeroPoint() const {
  switch (*encoding_.block) {
  case BlockFormat::Q8_0:
    return 128;
  case BlockFormat::Q4_0:
    return 8;
  case BlockFormat::Q6_K:
    return 32;
  case BlockFormat::Q4_K:
  case BlockFormat::Q5_K:
    return 0;
  }
  throw std::logic_error("unhandled block format");
}

int StoredWeight::unitsPerBlock() const {
  return static_cast<int>(blockLayout(*encoding_.block).blockElements) / 32;
}

Expr StoredWeight::unitBlock(Expr unit) const { return unit / unitsPerBlock(); }

Expr StoredWeight::unitSubBlock(Expr unit, Expr group) const {
  Expr inBlock = unit % unitsPerBlock();
  return subBlockSize_ == 16 ? inBlock * 2 + group / 4 : inBlock;
}

Expr StoredWeight::unitLevel(Expr unit, Expr group, Expr j, Expr n) const {
  return storedLevel(unitBlock(unit), unit % unitsPerBlock(), group * 4 + j, n, UInt(8));
}

bool StoredWeight::hasSignedLevels() const {
  return isBlocked() && *encoding_.block == BlockFormat::Q8_0;
}

Expr StoredWeight::signedUnitLevel(Expr unit, Expr group, Expr j, Expr n) const {
  if (!hasSignedLevels())
    throw std::logic_error("weight " + image_.name() + ": " +
                           blockLayout(*encoding_.block).name + " has no signed levels");
  // f16 d, then int8 q[32]: one unit per block.
  int blockBytes = static_cast<int>(blockLayout(BlockFormat::Q8_0).blockBytes);
  return reads_(unitBlock(unit) * blockBytes + 2 + group * 4 + j, n);
}

Expr StoredWeight::storedLevel(Expr b, Expr unit, Expr e, Expr n, Type type) const {
  // Per format, so that a unit's 32 bytes are one dense load.
  const BlockLayout &layout = blockLayout(*encoding_.block);
  Expr base = b * static_cast<int>(layout.blockBytes);
  auto byte = [&](Expr offset) { return cast(type, unsignedByte(offset, n)); };
  auto constant = [&](Expr v) { return cast(type, v); };
  switch (*encoding_.block) {
  case BlockFormat::Q8_0: // f16 d, int8 q[32]: the signed byte + 128
    return byte(base + 2 + e) ^ constant(0x80);
  case BlockFormat::Q4_0: // f16 d; byte j: q[j] low nibble, q[j + 16] high
    return (byte(base + 2 + e % 16) >> constant((e / 16) * 4)) & constant(15);
  case BlockFormat::Q4_K:
  case BlockFormat::Q5_K: {
    // After the 16-byte header, q5_K's fifth bits qh[32]; then 4-bit q:
    // units (sub-blocks) 2i and 2i+1 share the bytes 32i.., low and high
    // nibbles.
    bool fiveBits = *encoding_.block == BlockFormat::Q5_K;
    Expr qs = base + (fiveBits ? 48 : 16);
    Expr q = (byte(qs + (unit / 2) * 32 + e) >> constant((unit % 2) * 4)) & constant(15);
    if (fiveBits)
      q = q | (((byte(base + 16 + e) >> constant(unit)) & constant(1)) << 4);
    return q;
  }
  case BlockFormat::Q6_K: {
    // ql[128] low 4 bits, qh[64] high 2 bits. Unit u (sub-blocks 2u and
    // 2u+1) lies in half h = u/4 of the block, quarter u%4 of that half: the
    // low bits of value e in ql[64h + e + 32*(quarter&1)] (high nibble for
    // quarters 2 and 3), the high bits in qh[32h + e] at bit 2*quarter.
    Expr h = unit / 4, quarter = unit % 4;
    Expr low =
        (byte(base + h * 64 + e + (quarter % 2) * 32) >> constant((quarter / 2) * 4)) & constant(15);
    Expr high = (byte(base + 128 + h * 32 + e) >> constant(quarter * 2)) & constant(3);
    return low | (high << 4);
  }
  }
  throw std::logic_error("unhandled block format");
}
