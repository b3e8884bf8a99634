//===- RelativeBuckets.h - T5's buckets of relative positions ---*- C++ -*-===//
//
// T5 adds a learned bias per head and bucket to each attention score, the
// bucket of the key's position relative to the query's. The kernels hold
// the bucket of every distance up to the maximum as a table of the
// compiled code; this is its one definition, free of LLVM and Halide so
// that the kernels may include it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_RELATIVEBUCKETS_H
#define TFM_COMMON_RELATIVEBUCKETS_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace tfm {

/// The longest distance a relative bias table may be given buckets to: the
/// kernels hold a bucket per distance up to it (T5's is 128).
inline constexpr int64_t kMaxRelativeDistance = 1 << 16;

/// The bucket of `relative` = key position - query position, as
/// transformers' T5Attention._relative_position_bucket computes it:
/// bidirectional (an encoder's), half the buckets for keys after the
/// query; causal (a decoder's), keys after the query in bucket 0. Of a
/// direction's buckets, the first half hold one distance each, the rest
/// distances up to `maxDistance` on a logarithmic scale, and every longer
/// distance the last. The logarithm is in float32, as there (its
/// truncation decides the buckets on their edges).
inline int64_t relativeBucket(int64_t relative, bool bidirectional, int64_t buckets,
                              int64_t maxDistance) {
  int64_t bucket = 0;
  if (bidirectional) {
    buckets /= 2;
    if (relative > 0)
      bucket += buckets;
    relative = std::abs(relative);
  } else {
    relative = -std::min<int64_t>(relative, 0);
  }
  int64_t maxExact = buckets / 2;
  if (relative < maxExact)
    return bucket + relative;
  float logRatio = std::log(static_cast<float>(relative) / static_cast<float>(maxExact)) /
                   static_cast<float>(std::log(double(maxDistance) / double(maxExact)));
  int64_t large =
      maxExact + static_cast<int64_t>(logRatio * static_cast<float>(buckets - maxExact));
  return bucket + std::min(large, buckets - 1);
}

} // namespace tfm

#endif // TFM_COMMON_RELATIVEBUCKETS_H
