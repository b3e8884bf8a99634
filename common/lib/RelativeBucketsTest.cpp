//===- RelativeBucketsTest.cpp - T5's bucket table, checked by hand -------===//
#include "tfm/common/RelativeBuckets.h"

#include <gtest/gtest.h>

#include <vector>

using tfm::relativeBucket;

namespace {

// T5's 32 buckets up to distance 128. Bidirectional: 16 a direction, keys
// after the query from 16; distances 0..7 exact; from 8, bucket 8 +
// floor(ln(n / 8) / ln(128 / 8) * 8): n = 20 -> 8 + floor(0.3305 * 8) = 10,
// n = 127 -> 8 + floor(0.9970 * 8) = 15, n >= 128 capped at 15.
TEST(RelativeBuckets, BidirectionalTableByHand) {
  const std::vector<std::pair<int64_t, int64_t>> cases = {
      {-200, 15}, {-128, 15}, {-127, 15}, {-20, 10}, {-9, 8}, {-8, 8}, {-7, 7}, {-1, 1},
      {0, 0},     {1, 17},    {7, 23},    {8, 24},   {16, 26}, {20, 26}, {127, 31}, {128, 31},
      {500, 31}};
  for (const auto &[relative, bucket] : cases)
    EXPECT_EQ(relativeBucket(relative, true, 32, 128), bucket) << "relative " << relative;
}

// Causal: 32 buckets for keys before the query, 0..15 exact; from 16,
// 16 + floor(ln(n / 16) / ln(128 / 16) * 16): n = 20 -> 16 + floor(0.1073 *
// 16) = 17, n = 32 -> 16 + floor(0.3333 * 16) = 21, n = 64 -> 16 +
// floor(0.6667 * 16) = 26; keys after the query (masked) in bucket 0.
TEST(RelativeBuckets, CausalTableByHand) {
  const std::vector<std::pair<int64_t, int64_t>> cases = {
      {-500, 31}, {-128, 31}, {-127, 31}, {-64, 26}, {-32, 21}, {-20, 17}, {-16, 16},
      {-15, 15},  {-9, 9},    {-1, 1},    {0, 0},    {1, 0},    {200, 0}};
  for (const auto &[relative, bucket] : cases)
    EXPECT_EQ(relativeBucket(relative, false, 32, 128), bucket) << "relative " << relative;
}

// Past the maximum distance every key shares the last bucket, at any
// maximum: 8 buckets to distance 16, bidirectional, 2 exact a direction.
TEST(RelativeBuckets, DistancesPastTheMaximumShareTheLastBucket) {
  for (int64_t n : {16, 17, 100, 100000}) {
    EXPECT_EQ(relativeBucket(-n, true, 8, 16), 3) << n;
    EXPECT_EQ(relativeBucket(n, true, 8, 16), 7) << n;
    EXPECT_EQ(relativeBucket(-n, false, 8, 16), 7) << n;
  }
}

} // namespace
