//===- HalfFloat.cpp - IEEE binary16 and bfloat16 conversions -------------===//
#include "tfm/common/HalfFloat.h"

#include <cstring>

using namespace tfm;

uint16_t tfm::toHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude > 0x7f800000) // nan: keep it a (quiet) nan
    return sign | 0x7e00;
  if (magnitude >= 0x477ff000) // rounds to 65520 or more: infinity
    return sign | 0x7c00;
  if (magnitude < 0x38800000) {
    // Below f16's smallest normal: a subnormal in units of 2^-24. Adding
    // 0.5 (as f32) makes the hardware round the shifted-out bits to even.
    float f;
    std::memcpy(&f, &magnitude, sizeof f);
    f += 0.5f;
    uint32_t rounded;
    std::memcpy(&rounded, &f, sizeof rounded);
    return sign | static_cast<uint16_t>(rounded - 0x3f000000);
  }
  // Normal: rebias the exponent (127 -> 15) and round 23 to 10 mantissa
  // bits to nearest even; a carry into the exponent is the right result.
  uint32_t odd = (magnitude >> 13) & 1;
  magnitude += 0xc8000fff + odd; // -(112 << 23) + 0xfff
  return sign | static_cast<uint16_t>(magnitude >> 13);
}

uint16_t tfm::toBfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffff) > 0x7f800000) // nan
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float tfm::halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) { // inf, nan
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else { // subnormal: normalise into f32's range
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (uint32_t(113 - shift) << 23) | ((mantissa & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float tfm::bfloat16ToFloat(uint16_t value) {
  uint32_t bits = uint32_t(value) << 16; // bf16 is the top half of an f32
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
