//===- WeightFileTypeTest.cpp - Tensor encodings of each file type --------===//
#include "tfm/common/WeightFileType.h"

#include <gtest/gtest.h>

using namespace tfm;

namespace {

std::string encodingOf(const std::string &type, const std::string &tensor,
                       std::vector<int64_t> shape = {512, 256}, int64_t layers = 8,
                       bool tied = false) {
  std::string fallback;
  ElementEncoding encoding =
      tensorEncoding(*parseWeightFileType(type), tensor, shape, layers, tied, fallback);
  return fallback.empty() ? encoding.name()
                          : "fallback: " + fallback + "; stored as " + encoding.name();
}

TEST(WeightFileType, PlainTypesApplyToMatrices) {
  EXPECT_EQ(encodingOf("f16", "blk.0.attn_norm.weight", {256}), "f32");
  EXPECT_EQ(encodingOf("bf16", "blk.0.attn_qkv.bias", {768}), "f32");
  EXPECT_EQ(encodingOf("f16", "position_embd.weight", {1024, 768}), "f16");
  EXPECT_EQ(encodingOf("bf16", "token_embd.weight"), "bf16");
  EXPECT_EQ(encodingOf("f32", "output.weight", {512, 100}), "f32");
}

TEST(WeightFileType, BlockFormatsQuantizeMatricesOnly) {
  EXPECT_EQ(encodingOf("q8_0", "blk.3.ffn_up.weight"), "q8_0");
  EXPECT_EQ(encodingOf("q6_k", "output.weight"), "q6_k");
  EXPECT_EQ(encodingOf("q4_0", "blk.0.attn_norm.weight", {256}), "f32");
  EXPECT_EQ(encodingOf("q4_0", "blk.0.attn_qkv.bias", {768}), "f32");
  EXPECT_EQ(encodingOf("q4_k", "position_embd.weight", {1024, 768}), "f32");
}

TEST(WeightFileType, KQuantMixesFollowLlamaCpp) {
  // Eight layers: more bits in 0 (first eighth), 7 (last eighth) and 3, 6
  // (every third after the first eighth).
  for (int layer = 0; layer < 8; ++layer) {
    bool more = layer == 0 || layer == 3 || layer == 6 || layer == 7;
    std::string prefix = "blk." + std::to_string(layer) + ".";
    EXPECT_EQ(encodingOf("q4_k_m", prefix + "attn_v.weight"), more ? "q6_k" : "q4_k") << layer;
    EXPECT_EQ(encodingOf("q4_k_m", prefix + "ffn_down.weight"), more ? "q6_k" : "q4_k")
        << layer;
    EXPECT_EQ(encodingOf("q5_k_m", prefix + "ffn_down.weight"), more ? "q6_k" : "q5_k")
        << layer;
    EXPECT_EQ(encodingOf("q4_k_m", prefix + "attn_q.weight"), "q4_k") << layer;
  }
  EXPECT_EQ(encodingOf("q4_k_m", "output.weight"), "q6_k");
  EXPECT_EQ(encodingOf("q4_k_m", "token_embd.weight"), "q4_k");
  EXPECT_EQ(encodingOf("q4_k_m", "token_embd.weight", {512, 256}, 8, /*tied=*/true), "q6_k");
  EXPECT_EQ(encodingOf("q4_k_m", "blk.1.attn_qkv.weight"), "q5_k");
  EXPECT_EQ(encodingOf("q5_k_m", "blk.1.attn_qkv.weight"), "q6_k");
}

TEST(WeightFileType, RowsWithoutWholeBlocksFallBack) {
  EXPECT_EQ(encodingOf("q4_k", "blk.0.ffn_up.weight", {256, 96}),
            "fallback: tensor 'blk.0.ffn_up.weight': rows of 96 elements are not a multiple of "
            "q4_k's block of 256; stored as q8_0");
  EXPECT_EQ(encodingOf("q4_k_m", "output.weight", {256, 64}),
            "fallback: tensor 'output.weight': rows of 64 elements are not a multiple of "
            "q6_k's block of 256; stored as q8_0");
  EXPECT_EQ(encodingOf("q8_0", "blk.0.ffn_up.weight", {256, 96}), "q8_0");
  EXPECT_EQ(encodingOf("q4_0", "blk.0.ffn_down.weight", {64, 172}),
            "fallback: tensor 'blk.0.ffn_down.weight': rows of 172 elements are not a multiple "
            "of q4_0's block of 32; stored as f16");
}

TEST(WeightFileType, NamesAndLlamaFileTypes) {
  EXPECT_EQ(parseWeightFileType("q4_k_m")->llamaFileType(), 15u);
  EXPECT_EQ(parseWeightFileType("q8_0")->llamaFileType(), 7u);
  EXPECT_EQ(parseWeightFileType("q4_k")->llamaFileType(), std::nullopt);
  EXPECT_EQ(parseWeightFileType("q3_k_s"), std::nullopt);
  EXPECT_EQ(parseWeightFileType("i32"), std::nullopt);
}

} // namespace
