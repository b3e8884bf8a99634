//===- BlockQuantTest.cpp - GGUF block formats ----------------------------===//
//
// Layouts are checked against ggml's own code outside the repository (see
// BlockQuant.h); here: the documented bit layout decodes as documented, q8_0
// is exact where it should be, and each format's error on Gaussian weights
// stays within what its bits allow.
//
//===----------------------------------------------------------------------===//
#include "tfm/common/BlockQuant.h"
#include "tfm/common/HalfFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace tfm;

namespace {

constexpr BlockFormat kFormats[] = {BlockFormat::Q8_0, BlockFormat::Q4_0, BlockFormat::Q4_K,
                                    BlockFormat::Q5_K, BlockFormat::Q6_K};

void putHalf(uint8_t *at, float value) {
  uint16_t h = toHalf(value);
  std::memcpy(at, &h, 2);
}

TEST(BlockQuant, LayoutsAreGgmls) {
  struct Expected {
    const char *name;
    uint32_t ggmlType;
    int64_t elements, bytes;
  };
  const Expected expected[] = {{"q8_0", 8, 32, 34},     {"q4_0", 2, 32, 18},
                               {"q4_k", 12, 256, 144}, {"q5_k", 13, 256, 176},
                               {"q6_k", 14, 256, 210}};
  for (size_t i = 0; i < 5; ++i) {
    const BlockLayout &layout = blockLayout(kFormats[i]);
    EXPECT_STREQ(layout.name, expected[i].name);
    EXPECT_EQ(layout.ggmlType, expected[i].ggmlType);
    EXPECT_EQ(layout.blockElements, expected[i].elements);
    EXPECT_EQ(layout.blockBytes, expected[i].bytes);
    EXPECT_EQ(parseBlockFormat(expected[i].name), kFormats[i]);
  }
  EXPECT_EQ(parseBlockFormat("q4_k_m"), std::nullopt);
  EXPECT_EQ(blockRowBytes(BlockFormat::Q4_K, 4096), 16 * 144);
}

TEST(BlockQuant, Q8_0MapsTheLargestMagnitudeTo127) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j)
    x[j] = static_cast<float>(j - 16);
  std::vector<uint8_t> block(34);
  quantizeRow(BlockFormat::Q8_0, x.data(), 32, block.data());
  uint16_t d;
  std::memcpy(&d, block.data(), 2);
  EXPECT_EQ(d, toHalf(16.0f / 127.0f));
  EXPECT_EQ(static_cast<int8_t>(block[2]), -127); // x = -16
  EXPECT_EQ(static_cast<int8_t>(block[2 + 16]), 0);
  EXPECT_EQ(static_cast<int8_t>(block[2 + 24]), 64); // 8 * 127/16 = 63.5, away from zero
  std::vector<float> y(32);
  dequantizeRow(BlockFormat::Q8_0, block.data(), 32, y.data());
  for (int j = 0; j < 32; ++j)
    EXPECT_EQ(y[j], halfToFloat(d) * static_cast<int8_t>(block[2 + j]));
}

TEST(BlockQuant, Q4_0PacksElementsJAndJPlus16) {
  std::vector<uint8_t> block(18, 0);
  putHalf(block.data(), 0.5f);
  block[2] = 0x3F;  // element 0: 15 - 8, element 16: 3 - 8
  block[17] = 0x80; // element 15: 0 - 8, element 31: 8 - 8
  std::vector<float> y(32);
  dequantizeRow(BlockFormat::Q4_0, block.data(), 32, y.data());
  EXPECT_EQ(y[0], 3.5f);
  EXPECT_EQ(y[16], -2.5f);
  EXPECT_EQ(y[15], -4.0f);
  EXPECT_EQ(y[31], 0.0f);
  EXPECT_EQ(y[1], -4.0f);
}

TEST(BlockQuant, Q4_KUnpacksSixBitScalesAndMins) {
  // Scales and minimums of 6 bits, so that sub-blocks 4..7 use the top bits
  // kept in bytes 0..7.
  const int scale[8] = {1, 17, 33, 63, 2, 18, 34, 62};
  const int min[8] = {63, 40, 5, 0, 61, 39, 6, 1};
  std::vector<uint8_t> block(144, 0);
  putHalf(block.data(), 0.25f);
  putHalf(block.data() + 2, 0.125f);
  uint8_t *packed = block.data() + 4;
  for (int j = 0; j < 4; ++j) {
    packed[j] = static_cast<uint8_t>(scale[j] | ((scale[j + 4] >> 4) << 6));
    packed[j + 4] = static_cast<uint8_t>(min[j] | ((min[j + 4] >> 4) << 6));
    packed[j + 8] = static_cast<uint8_t>((scale[j + 4] & 0xF) | ((min[j + 4] & 0xF) << 4));
  }
  // Chunk c of 64 elements: byte l of its 32 holds element 64c+l (low
  // nibble) and 64c+32+l (high); use q = 5 low, 9 high everywhere.
  std::memset(block.data() + 16, 0x95, 128);
  std::vector<float> y(256);
  dequantizeRow(BlockFormat::Q4_K, block.data(), 256, y.data());
  for (int e = 0; e < 256; ++e) {
    int sub = e / 32;
    int q = (e % 64) < 32 ? 5 : 9;
    EXPECT_EQ(y[e], 0.25f * scale[sub] * q - 0.125f * min[sub]) << "element " << e;
  }
}

TEST(BlockQuant, Q5_KAddsAFifthBitPerElement) {
  // q4_K's header with every scale 1 and minimum 0 (d 1, dmin 0): the value
  // is the 5-bit level. Low nibbles as q4_K stores them (bytes 48..175),
  // fifth bits in qh[l], bit 2c+h for element 64c + 32h + l.
  std::vector<uint8_t> block(176, 0);
  putHalf(block.data(), 1.0f);
  for (int j = 0; j < 4; ++j)
    block[4 + j] = 1; // scales 0..3; 4..7 are the low nibbles of bytes 8..11
  for (int j = 8; j < 12; ++j)
    block[4 + j] = 1;
  auto level = [](int e) { return (e * 7) % 32; };
  for (int e = 0; e < 256; ++e) {
    int chunk = e / 64, high = (e % 64) / 32, l = e % 32;
    block[48 + 32 * chunk + l] |= static_cast<uint8_t>((level(e) & 0xF) << (4 * high));
    block[16 + l] |= static_cast<uint8_t>((level(e) >> 4) << (2 * chunk + high));
  }
  std::vector<float> y(256);
  dequantizeRow(BlockFormat::Q5_K, block.data(), 256, y.data());
  for (int e = 0; e < 256; ++e)
    EXPECT_EQ(y[e], static_cast<float>(level(e))) << "element " << e;
}

TEST(BlockQuant, Q6_KSplitsLowAndHighBits) {
  std::vector<uint8_t> block(210, 0);
  uint8_t *ql = block.data(), *qh = block.data() + 128;
  auto *scales = reinterpret_cast<int8_t *>(block.data() + 192);
  for (int s = 0; s < 16; ++s)
    scales[s] = static_cast<int8_t>(s % 2 ? -(s + 1) : s + 1);
  putHalf(block.data() + 208, 0.5f);
  // Element e's 6-bit level u(e) = e % 64: per half of 128, ql[l] holds
  // elements l and l+64 in its nibbles, ql[l+32] elements l+32 and l+96,
  // qh[l] the four top-bit pairs.
  auto level = [](int e) { return e % 64; };
  for (int half = 0; half < 2; ++half)
    for (int l = 0; l < 32; ++l) {
      int b = 128 * half;
      int u1 = level(b + l), u2 = level(b + l + 32), u3 = level(b + l + 64),
          u4 = level(b + l + 96);
      ql[64 * half + l] = static_cast<uint8_t>((u1 & 0xF) | ((u3 & 0xF) << 4));
      ql[64 * half + l + 32] = static_cast<uint8_t>((u2 & 0xF) | ((u4 & 0xF) << 4));
      qh[32 * half + l] = static_cast<uint8_t>((u1 >> 4) | ((u2 >> 4) << 2) | ((u3 >> 4) << 4) |
                                               ((u4 >> 4) << 6));
    }
  std::vector<float> y(256);
  dequantizeRow(BlockFormat::Q6_K, block.data(), 256, y.data());
  for (int e = 0; e < 256; ++e)
    EXPECT_EQ(y[e], 0.5f * scales[e / 16] * (level(e) - 32)) << "element " << e;
}

TEST(BlockQuant, ErrorOnGaussianWeightsIsWhatTheBitsAllow) {
  // Root-mean-square error over unit-variance values. llama.cpp's reference
  // quantizers give 0.0054, 0.086, 0.071, 0.036 and 0.018 on such data
  // (their k-quant search weighs large values more); ours give the same for
  // q8_0 and q4_0 (identical bytes) and 0.071, 0.036 and 0.017 for the
  // k-quants.
  const double bound[] = {0.0060, 0.090, 0.075, 0.038, 0.019};
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int n = 256 * 256;
  std::vector<float> x(n), y(n);
  for (float &v : x)
    v = normal(rng);
  for (size_t f = 0; f < 5; ++f) {
    std::vector<uint8_t> q(blockRowBytes(kFormats[f], n));
    quantizeRow(kFormats[f], x.data(), n, q.data());
    dequantizeRow(kFormats[f], q.data(), n, y.data());
    double squared = 0.0;
    for (int i = 0; i < n; ++i)
      squared += (x[i] - y[i]) * double(x[i] - y[i]);
    EXPECT_LT(std::sqrt(squared / n), bound[f]) << blockLayout(kFormats[f]).name;
  }
}

TEST(BlockQuant, ZerosAndConstantsSurvive) {
  for (BlockFormat f : kFormats) {
    const int n = 256;
    for (float value : {0.0f, 1.0f, -3.0f}) {
      std::vector<float> x(n, value), y(n);
      std::vector<uint8_t> q(blockRowBytes(f, n));
      quantizeRow(f, x.data(), n, q.data());
      dequantizeRow(f, q.data(), n, y.data());
      for (int i = 0; i < n; ++i)
        ASSERT_NEAR(y[i], value, 2e-3 * std::fabs(value)) << blockLayout(f).name << " " << value;
    }
  }
}

} // namespace

// A large tensor is quantized by several threads: the bytes are those of its
// blocks quantized one at a time.
TEST(BlockQuant, LargeTensorsQuantizeAsBlockByBlock) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (BlockFormat f : {BlockFormat::Q8_0, BlockFormat::Q4_K}) {
    const BlockLayout &layout = blockLayout(f);
    const int64_t blocks = 3 * 4096 + 7, n = blocks * layout.blockElements;
    std::vector<float> x(n);
    for (float &v : x)
      v = normal(rng);
    std::vector<uint8_t> whole(blockRowBytes(f, n)), one(blockRowBytes(f, n));
    quantizeRow(f, x.data(), n, whole.data());
    for (int64_t b = 0; b < blocks; ++b)
      quantizeRow(f, x.data() + b * layout.blockElements, layout.blockElements,
                  one.data() + b * layout.blockBytes);
    EXPECT_EQ(whole, one) << layout.name;
  }
}
