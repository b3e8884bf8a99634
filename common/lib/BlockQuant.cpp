//===- BlockQuant.cpp - GGUF's block-quantized weight formats -------------===//
#include "tfm/common/BlockQuant.h"

#include "tfm/common/HalfFloat.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <iterator>
#include <thread>
#include <vector>

using namespace tfm;

namespace {

constexpr BlockLayout kLayouts[] = {
    {BlockFormat::Q8_0, "q8_0", 8, 32, 34},
    {BlockFormat::Q4_0, "q4_0", 2, 32, 18},
    {BlockFormat::Q4_K, "q4_k", 12, 256, 144},
    {BlockFormat::Q5_K, "q5_k", 13, 256, 176},
    {BlockFormat::Q6_K, "q6_k", 14, 256, 210},
};

void storeHalf(uint8_t *at, float value) {
  uint16_t h = toHalf(value);
  std::memcpy(at, &h, sizeof h);
}

float loadHalf(const uint8_t *at) {
  uint16_t h;
  std::memcpy(&h, at, sizeof h);
  return halfToFloat(h);
}

/// The element of largest magnitude, with its sign (the first one on a tie).
float signedAbsMax(const float *x, int n) {
  float best = 0.0f;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(best))
      best = x[i];
  return best;
}

int roundClamped(float value, int lo, int hi) {
  return std::clamp(static_cast<int>(std::lrint(value)), lo, hi);
}

//===--- q8_0: the largest magnitude maps to +-127 ------------------------===//

void quantizeQ8_0(const float *x, uint8_t *block) {
  float amax = 0.0f;
  for (int i = 0; i < 32; ++i)
    amax = std::max(amax, std::fabs(x[i]));
  float d = amax / 127.0f;
  float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  storeHalf(block, d);
  for (int i = 0; i < 32; ++i)
    block[2 + i] = static_cast<uint8_t>(static_cast<int8_t>(std::round(x[i] * inverse)));
}

void dequantizeQ8_0(const uint8_t *block, float *y) {
  float d = loadHalf(block);
  for (int i = 0; i < 32; ++i)
    y[i] = d * static_cast<int8_t>(block[2 + i]);
}

//===--- q4_0: the largest magnitude maps to -8 ---------------------------===//

void quantizeQ4_0(const float *x, uint8_t *block) {
  float d = signedAbsMax(x, 32) / -8.0f;
  float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  storeHalf(block, d);
  auto level = [&](float v) {
    // Truncating v/d + 8.5 rounds to nearest; +8 (the extreme's mirror) is 15.
    return static_cast<uint8_t>(std::min(15, static_cast<int>(v * inverse + 8.5f)));
  };
  for (int j = 0; j < 16; ++j)
    block[2 + j] = static_cast<uint8_t>(level(x[j]) | (level(x[j + 16]) << 4));
}

void dequantizeQ4_0(const uint8_t *block, float *y) {
  float d = loadHalf(block);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * ((block[2 + j] & 0xF) - 8);
    y[j + 16] = d * ((block[2 + j] >> 4) - 8);
  }
}

//===--- q4_K and q5_K: 8 sub-blocks of 32 with 6-bit scales and minimums ===//

/// Sub-block j's scale and minimum from the 12 packed bytes: j < 4 in the
/// low 6 bits of bytes j and j+4; j >= 4 as nibbles of byte j+4 with their
/// top 2 bits in the top bits of bytes j-4 (scale) and j (minimum).
void unpackScaleAndMin(const uint8_t *packed, int j, int &scale, int &min) {
  if (j < 4) {
    scale = packed[j] & 63;
    min = packed[j + 4] & 63;
  } else {
    scale = (packed[j + 4] & 0xF) | ((packed[j - 4] >> 6) << 4);
    min = (packed[j + 4] >> 4) | ((packed[j] >> 6) << 4);
  }
}

void packScalesAndMins(const int *scale, const int *min, uint8_t *packed) {
  std::memset(packed, 0, 12);
  for (int j = 0; j < 4; ++j) {
    packed[j] = static_cast<uint8_t>(scale[j]);
    packed[j + 4] = static_cast<uint8_t>(min[j]);
  }
  for (int j = 4; j < 8; ++j) {
    packed[j + 4] = static_cast<uint8_t>((scale[j] & 0xF) | ((min[j] & 0xF) << 4));
    packed[j - 4] |= static_cast<uint8_t>((scale[j] >> 4) << 6);
    packed[j] |= static_cast<uint8_t>((min[j] >> 4) << 6);
  }
}

/// The scale and (non-negative) minimum of 32 values on levels 0..maxLevel,
/// value = scale*level - min. Their range gives a first grid; a few
/// stretched grids are tried too, each refitted by least squares on the
/// levels it assigns, and the one of least squared error is kept.
void fitScaleAndMin(const float *x, int maxLevel, float &scale, float &min) {
  const int n = 32;
  float lo = std::min(0.0f, *std::min_element(x, x + n));
  float hi = *std::max_element(x, x + n);
  scale = (hi - lo) / maxLevel;
  min = -lo;
  if (hi <= lo)
    return;
  auto squaredError = [&](float s, float m) {
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) {
      int l = s > 0.0f ? roundClamped((x[i] + m) / s, 0, maxLevel) : 0;
      float e = s * l - m - x[i];
      sum += e * e;
    }
    return sum;
  };
  float best = squaredError(scale, min);
  for (int step = 0; step <= 20; ++step) {
    // Levels from a grid of maxLevel + 0.1*step - 1 steps over the range.
    float inverse = (maxLevel - 1.0f + 0.1f * step) / (hi - lo);
    double sl = 0, sll = 0, sx = 0, slx = 0;
    for (int i = 0; i < n; ++i) {
      int l = roundClamped(inverse * (x[i] - lo), 0, maxLevel);
      sl += l;
      sll += double(l) * l;
      sx += x[i];
      slx += l * double(x[i]);
    }
    // Least squares of x ~ s*l - m; a positive offset is not storable.
    double det = n * sll - sl * sl;
    if (det <= 0)
      continue;
    double s = (n * slx - sl * sx) / det;
    double m = (sl * slx - sll * sx) / det;
    if (m < 0) {
      m = 0;
      s = slx / sll;
    }
    if (s <= 0)
      continue;
    float error = squaredError(static_cast<float>(s), static_cast<float>(m));
    if (error < best) {
      best = error;
      scale = static_cast<float>(s);
      min = static_cast<float>(m);
    }
  }
}

/// q4_K and q5_K: fills the 16-byte header (f16 d, f16 dmin, the packed
/// scales and minimums) and each element's level in 0..maxLevel. Each
/// sub-block spans [-min, -min + maxLevel*scale]; the minimum is stored as a
/// non-negative offset.
void quantizeScaleMin(const float *x, int maxLevel, uint8_t *header, uint8_t *level) {
  float subScale[8], subMin[8];
  for (int j = 0; j < 8; ++j)
    fitScaleAndMin(x + 32 * j, maxLevel, subScale[j], subMin[j]);
  storeHalf(header, *std::max_element(subScale, subScale + 8) / 63.0f);
  storeHalf(header + 2, *std::max_element(subMin, subMin + 8) / 63.0f);
  float d = loadHalf(header), dmin = loadHalf(header + 2); // as stored
  int scale[8], min[8];
  for (int j = 0; j < 8; ++j) {
    scale[j] = d > 0.0f ? roundClamped(subScale[j] / d, 0, 63) : 0;
    min[j] = dmin > 0.0f ? roundClamped(subMin[j] / dmin, 0, 63) : 0;
  }
  packScalesAndMins(scale, min, header + 4);
  for (int e = 0; e < 256; ++e) {
    float step = d * scale[e / 32], offset = dmin * min[e / 32];
    level[e] = step > 0.0f ? static_cast<uint8_t>(roundClamped((x[e] + offset) / step, 0, maxLevel))
                           : 0;
  }
}

/// The inverse of quantizeScaleMin given the levels.
void dequantizeScaleMin(const uint8_t *header, const uint8_t *level, float *y) {
  float d = loadHalf(header), dmin = loadHalf(header + 2);
  for (int j = 0; j < 8; ++j) {
    int scale, min;
    unpackScaleAndMin(header + 4, j, scale, min);
    for (int l = 0; l < 32; ++l)
      y[32 * j + l] = d * scale * level[32 * j + l] - dmin * min;
  }
}

// In both, byte l of the 32 for chunk c of 64 elements holds the low 4 bits
// of elements 64c+l (low nibble) and 64c+32+l (high nibble).
void packNibbles(const uint8_t *level, uint8_t *qs) {
  for (int chunk = 0; chunk < 4; ++chunk)
    for (int l = 0; l < 32; ++l)
      qs[32 * chunk + l] = static_cast<uint8_t>((level[64 * chunk + l] & 0xF) |
                                                ((level[64 * chunk + 32 + l] & 0xF) << 4));
}

void unpackNibbles(const uint8_t *qs, uint8_t *level) {
  for (int chunk = 0; chunk < 4; ++chunk)
    for (int l = 0; l < 32; ++l) {
      level[64 * chunk + l] = qs[32 * chunk + l] & 0xF;
      level[64 * chunk + 32 + l] = qs[32 * chunk + l] >> 4;
    }
}

void quantizeQ4_K(const float *x, uint8_t *block) {
  uint8_t level[256];
  quantizeScaleMin(x, 15, block, level);
  packNibbles(level, block + 16);
}

void dequantizeQ4_K(const uint8_t *block, float *y) {
  uint8_t level[256];
  unpackNibbles(block + 16, level);
  dequantizeScaleMin(block, level, y);
}

//===--- q5_K: q4_K with a fifth bit per element --------------------------===//

// The fifth bit of element 64c + 32h + l is bit 2c + h of qh[l].
void quantizeQ5_K(const float *x, uint8_t *block) {
  uint8_t level[256];
  quantizeScaleMin(x, 31, block, level);
  uint8_t *qh = block + 16;
  std::memset(qh, 0, 32);
  for (int e = 0; e < 256; ++e)
    qh[e % 32] |= static_cast<uint8_t>((level[e] >> 4) << (e / 32));
  packNibbles(level, block + 48);
}

void dequantizeQ5_K(const uint8_t *block, float *y) {
  uint8_t level[256];
  unpackNibbles(block + 48, level);
  const uint8_t *qh = block + 16;
  for (int e = 0; e < 256; ++e)
    level[e] |= static_cast<uint8_t>(((qh[e % 32] >> (e / 32)) & 1) << 4);
  dequantizeScaleMin(block, level, y);
}

//===--- q6_K: 16 sub-blocks of 16, each with an int8 scale ---------------===//

/// The scale of 16 values on levels -32..31, value = scale*level: the one
/// that maps the largest magnitude to -32, or, if less squared error, a
/// least-squares refit of the levels a slightly different scale assigns.
float fitSymmetricScale(const float *x) {
  const int n = 16;
  float extreme = signedAbsMax(x, n);
  float best = extreme / -32.0f;
  if (extreme == 0.0f)
    return best;
  auto squaredError = [&](float s) {
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) {
      float e = s * roundClamped(x[i] / s, -32, 31) - x[i];
      sum += e * e;
    }
    return sum;
  };
  float bestError = squaredError(best);
  for (int step = -9; step <= 9; ++step) {
    float inverse = (-32.0f + 0.1f * step) / extreme;
    double slx = 0, sll = 0;
    for (int i = 0; i < n; ++i) {
      int l = roundClamped(inverse * x[i], -32, 31);
      slx += l * double(x[i]);
      sll += double(l) * l;
    }
    if (sll <= 0)
      continue;
    float s = static_cast<float>(slx / sll);
    if (s == 0.0f)
      continue;
    float error = squaredError(s);
    if (error < bestError) {
      bestError = error;
      best = s;
    }
  }
  return best;
}

void quantizeQ6_K(const float *x, uint8_t *block) {
  // The largest sub-block scale maps to -128, as q4_0 maps its values.
  float subScale[16];
  for (int j = 0; j < 16; ++j)
    subScale[j] = fitSymmetricScale(x + 16 * j);
  float d = signedAbsMax(subScale, 16) / -128.0f;
  uint8_t *ql = block, *qh = block + 128, *scales = block + 192;
  storeHalf(block + 208, d);
  d = loadHalf(block + 208);
  int scale[16];
  for (int j = 0; j < 16; ++j) {
    scale[j] = d != 0.0f ? roundClamped(subScale[j] / d, -128, 127) : 0;
    scales[j] = static_cast<uint8_t>(static_cast<int8_t>(scale[j]));
  }
  uint8_t level[256]; // q + 32, in 0..63
  for (int e = 0; e < 256; ++e) {
    float step = d * scale[e / 16];
    level[e] = static_cast<uint8_t>(
        (step != 0.0f ? roundClamped(x[e] / step, -32, 31) : 0) + 32);
  }
  // Per half of 128: ql[l] holds elements l (low nibble) and l+64 (high),
  // ql[l+32] elements l+32 and l+96; qh[l] their top 2 bits, in that order.
  for (int half = 0; half < 2; ++half) {
    const uint8_t *u = level + 128 * half;
    for (int l = 0; l < 32; ++l) {
      ql[64 * half + l] = static_cast<uint8_t>((u[l] & 0xF) | ((u[l + 64] & 0xF) << 4));
      ql[64 * half + l + 32] = static_cast<uint8_t>((u[l + 32] & 0xF) | ((u[l + 96] & 0xF) << 4));
      qh[32 * half + l] = static_cast<uint8_t>((u[l] >> 4) | ((u[l + 32] >> 4) << 2) |
                                               ((u[l + 64] >> 4) << 4) | ((u[l + 96] >> 4) << 6));
    }
  }
}

void dequantizeQ6_K(const uint8_t *block, float *y) {
  const uint8_t *ql = block, *qh = block + 128;
  const auto *scales = reinterpret_cast<const int8_t *>(block + 192);
  float d = loadHalf(block + 208);
  for (int half = 0; half < 2; ++half) {
    float *out = y + 128 * half;
    const uint8_t *low = ql + 64 * half, *high = qh + 32 * half;
    const int8_t *sc = scales + 8 * half;
    for (int l = 0; l < 32; ++l) {
      int q1 = ((low[l] & 0xF) | (((high[l] >> 0) & 3) << 4)) - 32;
      int q2 = ((low[l + 32] & 0xF) | (((high[l] >> 2) & 3) << 4)) - 32;
      int q3 = ((low[l] >> 4) | (((high[l] >> 4) & 3) << 4)) - 32;
      int q4 = ((low[l + 32] >> 4) | (((high[l] >> 6) & 3) << 4)) - 32;
      out[l] = d * sc[l / 16] * q1;
      out[l + 32] = d * sc[l / 16 + 2] * q2;
      out[l + 64] = d * sc[l / 16 + 4] * q3;
      out[l + 96] = d * sc[l / 16 + 6] * q4;
    }
  }
}

} // namespace

const BlockLayout &tfm::blockLayout(BlockFormat format) {
  return kLayouts[static_cast<int>(format)];
}

std::optional<BlockFormat> tfm::parseBlockFormat(std::string_view name) {
  for (const BlockLayout &layout : kLayouts)
    if (name == layout.name)
      return layout.format;
  return std::nullopt;
}

int64_t tfm::blockRowBytes(BlockFormat format, int64_t n) {
  const BlockLayout &layout = blockLayout(format);
  assert(n % layout.blockElements == 0 && "row length must be a multiple of the block size");
  return n / layout.blockElements * layout.blockBytes;
}

namespace {

/// Each format's block coder, in BlockFormat order.
struct BlockCoder {
  void (*quantize)(const float *x, uint8_t *block);
  void (*dequantize)(const uint8_t *block, float *y);
};
constexpr BlockCoder kCoders[] = {{quantizeQ8_0, dequantizeQ8_0},
                                  {quantizeQ4_0, dequantizeQ4_0},
                                  {quantizeQ4_K, dequantizeQ4_K},
                                  {quantizeQ5_K, dequantizeQ5_K},
                                  {quantizeQ6_K, dequantizeQ6_K}};
static_assert(std::size(kCoders) == std::size(kLayouts), "a coder per block format");

} // namespace

void tfm::quantizeRow(BlockFormat format, const float *x, int64_t n, uint8_t *out) {
  const BlockLayout &layout = blockLayout(format);
  const int64_t blocks = blockRowBytes(format, n) / layout.blockBytes;
  auto quantizeBlocks = [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b)
      kCoders[static_cast<int>(format)].quantize(x + b * layout.blockElements,
                                                 out + b * layout.blockBytes);
  };
  // Blocks are independent, and a k-quant's scale search takes tens of
  // microseconds a block (a 7B Q4_K_M file took most of an hour on one
  // thread): a whole tensor is shared among the hardware threads.
  constexpr int64_t kBlocksPerThread = 4096;
  int64_t threads = std::min<int64_t>(std::max(1u, std::thread::hardware_concurrency()),
                                      blocks / kBlocksPerThread);
  if (threads < 2) {
    quantizeBlocks(0, blocks);
    return;
  }
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t)
    pool.emplace_back(quantizeBlocks, blocks * t / threads, blocks * (t + 1) / threads);
  for (std::thread &worker : pool)
    worker.join();
}

void tfm::dequantizeRow(BlockFormat format, const uint8_t *in, int64_t n, float *y) {
  const BlockLayout &layout = blockLayout(format);
  const int64_t blocks = blockRowBytes(format, n) / layout.blockBytes;
  for (int64_t b = 0; b < blocks; ++b)
    kCoders[static_cast<int>(format)].dequantize(in + b * layout.blockBytes,
                                                 y + b * layout.blockElements);
}
