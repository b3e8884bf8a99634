//===- HalfFloat.h - IEEE binary16 and bfloat16 conversions -----*- C++ -*-===//
//
// The 16-bit float encodings weight files use: IEEE binary16 (f16, also the
// scales of GGUF's block formats) and bfloat16. Free of LLVM headers.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_HALFFLOAT_H
#define TFM_COMMON_HALFFLOAT_H

#include <cstdint>

namespace tfm {

/// IEEE binary16 of `value`, rounded to nearest even; overflow gives
/// infinity, tiny values subnormals or zero.
uint16_t toHalf(float value);
/// The exact f32 value of an IEEE binary16.
float halfToFloat(uint16_t half);

/// bfloat16 (the top half of an f32) of `value`, rounded to nearest even.
uint16_t toBfloat16(float value);
/// The exact f32 value of a bfloat16.
float bfloat16ToFloat(uint16_t value);

} // namespace tfm

#endif // TFM_COMMON_HALFFLOAT_H
