//===- PoolingTest.cpp - Pooled and normalised embeddings -----------------===//
#include "tfm/runtime/Pooling.h"

#include <gtest/gtest.h>

using namespace tfm;
using namespace tfm::rt;

namespace {

// Three tokens, two columns.
const std::vector<float> kHidden = {1, 2, 3, 4, 5, 9};

TEST(Pooling, NoneKeepsEveryRow) { EXPECT_EQ(poolRows(kHidden, 3, 2, Pooling::None), kHidden); }

TEST(Pooling, MeanAveragesEachColumn) {
  EXPECT_EQ(poolRows(kHidden, 3, 2, Pooling::Mean), (std::vector<float>{3, 5}));
}

TEST(Pooling, ClsAndLastTakeOneRow) {
  EXPECT_EQ(poolRows(kHidden, 3, 2, Pooling::Cls), (std::vector<float>{1, 2}));
  EXPECT_EQ(poolRows(kHidden, 3, 2, Pooling::Last), (std::vector<float>{5, 9}));
}

TEST(Pooling, NormalizeScalesEachRowToUnitLength) {
  std::vector<float> rows = {3, 4, 0, 0, -6, 8};
  normalizeRows(rows, 2);
  EXPECT_EQ(rows, (std::vector<float>{0.6f, 0.8f, 0, 0, -0.6f, 0.8f}));
}

} // namespace
