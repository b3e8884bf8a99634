//===- StoredWeightTest.cpp - f16 and bf16 as kernels hold them -----------===//
//
// GPU kernels hold f16 and bf16 as their bits and convert them with integer
// operations (SixteenBitFloats::IntegerBits). The conversions must give, bit
// for bit, what the rest of tfmc gives (common/lib/HalfFloat.cpp: the
// weight writers, quantizers and tests): every f16 and bf16 widened, and
// f32 values rounded to them, ties, subnormals, overflow, infinities and
// NaNs included. Run in Halide's JIT on the CPU: the expressions are the
// same whatever the device.
//
//===----------------------------------------------------------------------===//
#include "StoredWeight.h"

#include "tfm/common/HalfFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace tfm;
using namespace tfm::kernels;

namespace {

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// Every 16-bit pattern widened by widenSixteenBits from a buffer of `type`.
Halide::Buffer<float> widenAll(Halide::Type stored, DType type) {
  Halide::Buffer<uint16_t> bits(65536);
  for (int i = 0; i < 65536; ++i)
    bits(i) = uint16_t(i);
  Halide::Var i;
  Halide::Func widened;
  widened(i) = widenSixteenBits(Halide::reinterpret(stored, bits(i)), type);
  return widened.realize({65536});
}

/// f32 values that exercise rounding to 16 bits: every value the 16-bit type
/// holds, the midpoints between neighbours (ties) and just either side of
/// them, f32 subnormals, the largest floats, infinities, NaNs and random
/// values over the whole exponent range.
std::vector<float> roundingCases(float (*widen)(uint16_t)) {
  std::vector<float> values;
  for (uint32_t h = 0; h < 65536; ++h) {
    float v = widen(uint16_t(h)), next = widen(uint16_t(h + 1));
    values.push_back(v);
    if (std::isfinite(v) && std::isfinite(next) && (h & 0x7fff) != 0x7fff) {
      float mid = v + (next - v) / 2;
      values.push_back(mid);
      values.push_back(std::nextafter(mid, v));
      values.push_back(std::nextafter(mid, next));
    }
  }
  for (float v : {std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity(),
                  65504.0f, 65519.99f, 65520.0f, 1e-8f, 2.9802322e-8f})
    for (float sign : {1.0f, -1.0f})
      values.push_back(sign * v);
  for (uint32_t nan : {0x7fc00000u, 0x7f800001u, 0xffc12345u}) {
    float f;
    std::memcpy(&f, &nan, 4);
    values.push_back(f);
  }
  std::mt19937 rng(3);
  std::uniform_int_distribution<uint32_t> any;
  for (int i = 0; i < 200000; ++i) {
    uint32_t b = any(rng);
    float f;
    std::memcpy(&f, &b, 4);
    values.push_back(f);
  }
  return values;
}

/// narrowToSixteenBits of every value, as bits.
std::vector<uint16_t> narrowAll(const std::vector<float> &values, DType type) {
  Halide::Buffer<float> in(int(values.size()));
  std::memcpy(in.data(), values.data(), values.size() * 4);
  Halide::Var i;
  Halide::Func narrowed;
  narrowed(i) = narrowToSixteenBits(in(i), type, SixteenBitFloats::IntegerBits);
  Halide::Buffer<uint16_t> out = narrowed.realize({int(values.size())});
  return std::vector<uint16_t>(out.data(), out.data() + values.size());
}

void expectWidensAsTfm(Halide::Type stored, DType type, float (*reference)(uint16_t)) {
  Halide::Buffer<float> got = widenAll(stored, type);
  for (int h = 0; h < 65536; ++h) {
    float want = reference(uint16_t(h));
    if (std::isnan(want))
      ASSERT_TRUE(std::isnan(got(h))) << std::hex << h;
    else
      ASSERT_EQ(bitsOf(got(h)), bitsOf(want)) << std::hex << "bits 0x" << h;
  }
}

void expectRoundsAsTfm(DType type, uint16_t (*reference)(float), float (*widen)(uint16_t)) {
  std::vector<float> values = roundingCases(widen);
  std::vector<uint16_t> got = narrowAll(values, type);
  for (size_t i = 0; i < values.size(); ++i)
    ASSERT_EQ(got[i], reference(values[i]))
        << std::hex << "f32 bits 0x" << bitsOf(values[i]) << " (" << values[i] << ")";
}

} // namespace

TEST(SixteenBitFloats, HalfBitsWidenAsTfm) {
  expectWidensAsTfm(Halide::UInt(16), DType::F16, halfToFloat);
  expectWidensAsTfm(Halide::Float(16), DType::F16, halfToFloat);
}

TEST(SixteenBitFloats, Bfloat16BitsWidenAsTfm) {
  expectWidensAsTfm(Halide::UInt(16), DType::BF16, bfloat16ToFloat);
  expectWidensAsTfm(Halide::BFloat(16), DType::BF16, bfloat16ToFloat);
}

TEST(SixteenBitFloats, F32RoundsToHalfBitsAsTfm) {
  expectRoundsAsTfm(DType::F16, toHalf, halfToFloat);
}

TEST(SixteenBitFloats, F32RoundsToBfloat16BitsAsTfm) {
  expectRoundsAsTfm(DType::BF16, toBfloat16, bfloat16ToFloat);
}
