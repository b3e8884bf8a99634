//===- ElementEncoding.cpp - f32 values as f32, f16 or bf16 bytes ---------===//
#include "ElementEncoding.h"

#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <vector>

using namespace tfm;

static_assert(llvm::sys::IsLittleEndianHost,
              "weight files are little-endian; add a byte swap for this host");

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

void tfm::writeElements(const float *values, size_t n, DType type,
                        llvm::raw_ostream &os) {
  if (type == DType::F32) {
    os.write(reinterpret_cast<const char *>(values), n * sizeof(float));
    return;
  }
  std::vector<uint16_t> encoded(n);
  for (size_t i = 0; i < n; ++i)
    encoded[i] = type == DType::F16 ? toHalf(values[i]) : toBfloat16(values[i]);
  os.write(reinterpret_cast<const char *>(encoded.data()), n * sizeof(uint16_t));
}
