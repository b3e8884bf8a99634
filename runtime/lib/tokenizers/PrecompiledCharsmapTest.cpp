//===- PrecompiledCharsmapTest.cpp - Rules read from untrusted bytes ------===//
//
// A charsmap comes from a model file: a layout that does not add up, or a
// rule pointing outside the blob, is refused with where and what was found.
// The rules themselves are checked against sentencepiece on T5's kind of
// model (tests/e2e/test_unigram_tokenizer.py).
//
//===----------------------------------------------------------------------===//
#include "PrecompiledCharsmap.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace tfm::rt;

namespace {

std::string blobOf(uint32_t trieBytes, std::vector<uint32_t> units, std::string replacements) {
  std::string blob(4 + units.size() * 4, '\0');
  std::memcpy(blob.data(), &trieBytes, 4); // little-endian, as x86 and the files are
  std::memcpy(blob.data() + 4, units.data(), units.size() * 4);
  return blob + replacements;
}

std::string parseError(const std::string &blob) {
  auto map = PrecompiledCharsmap::parse(blob, "m.model");
  return map ? "" : llvm::toString(map.takeError());
}

TEST(PrecompiledCharsmap, RefusesALayoutThatDoesNotAddUp) {
  EXPECT_NE(parseError("ab").find("m.model: the precompiled charsmap has 2 bytes"),
            std::string::npos);
  std::string tooLong = parseError(blobOf(64, {0, 0}, ""));
  EXPECT_NE(tooLong.find("trie is 64 bytes"), std::string::npos) << tooLong;
  std::string ragged = parseError(blobOf(6, {0, 0}, ""));
  EXPECT_NE(ragged.find("trie is 6 bytes"), std::string::npos) << ragged;
}

TEST(PrecompiledCharsmap, RefusesARuleOutsideItsReplacements) {
  // Unit 1 has a leaf (bit 8); its offset 1 leads to unit 1 ^ 1 = 0, the
  // value unit (bit 31), whose value 7 is past the 2 bytes of replacements.
  uint32_t withLeaf = (1u << 10) | (1u << 8) | 'a';
  uint32_t value = (1u << 31) | 7;
  std::string error = parseError(blobOf(8, {value, withLeaf}, "x\0"));
  EXPECT_NE(error.find("starts at byte 7"), std::string::npos) << error;
}

TEST(PrecompiledCharsmap, FindsTheLongestRule) {
  // A trie of one rule, "a" -> "b": the root (unit 0) has offset 2, so
  // "a" (0x61) is unit 2 ^ 0x61 = 0x63, labelled 'a' with a leaf; its
  // offset 1 leads to unit 0x63 ^ 1 = 0x62, the value unit, whose value 0
  // is the replacement at byte 0.
  std::vector<uint32_t> units(0x64, 0);
  units[0] = 2u << 10;
  units[0x63] = (1u << 10) | (1u << 8) | 'a';
  units[0x62] = (1u << 31) | 0;
  std::string replacements("b\0", 2);
  auto map = PrecompiledCharsmap::parse(blobOf(units.size() * 4, units, replacements), "m");
  ASSERT_TRUE(bool(map)) << llvm::toString(map.takeError());
  auto [rule, size] = map->longestRule("ax");
  EXPECT_EQ(rule, "b");
  EXPECT_EQ(size, 1u);
  EXPECT_EQ(map->longestRule("xa").second, 0u);
}

} // namespace
