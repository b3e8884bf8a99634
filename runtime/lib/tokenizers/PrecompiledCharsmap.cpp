//===- PrecompiledCharsmap.cpp - Longest-prefix rules in a double array ---===//
#include "PrecompiledCharsmap.h"

#include "tfm/common/Failure.h"

#include "llvm/Support/Endian.h"

using namespace tfm::rt;

namespace {

// A Darts-clone unit (darts.h's DoubleArrayUnit).
bool hasLeaf(uint32_t unit) { return ((unit >> 8) & 1) == 1; }
/// A leaf's value unit (its label bit 31 set, so that no byte matches it).
bool isValue(uint32_t unit) { return (unit >> 31) != 0; }
uint32_t leafValue(uint32_t unit) { return unit & ((1U << 31) - 1); }
uint32_t label(uint32_t unit) { return unit & ((1U << 31) | 0xFF); }
uint32_t offset(uint32_t unit) { return (unit >> 10) << ((unit & (1U << 9)) >> 6); }

} // namespace

llvm::Expected<PrecompiledCharsmap> PrecompiledCharsmap::parse(llvm::StringRef blob,
                                                               const std::string &where) {
  if (blob.size() < 4)
    return tfm::failure(where + ": the precompiled charsmap has " + std::to_string(blob.size()) +
                        " bytes, expected at least 4 (the size of its trie)");
  uint32_t trieBytes = llvm::support::endian::read32le(blob.data());
  if (trieBytes % 4 != 0 || trieBytes == 0 || trieBytes > blob.size() - 4)
    return tfm::failure(where + ": the precompiled charsmap's trie is " +
                        std::to_string(trieBytes) +
                        " bytes, expected a positive multiple of 4 "
                        "within the " +
                        std::to_string(blob.size() - 4) + " bytes after it");
  PrecompiledCharsmap map;
  for (uint32_t at = 0; at < trieBytes; at += 4)
    map.units.push_back(llvm::support::endian::read32le(blob.data() + 4 + at));
  map.replacements = blob.drop_front(4 + trieBytes).str();
  // Every leaf's value must start a NUL-ended replacement.
  for (size_t i = 0; i < map.units.size(); ++i) {
    if (isValue(map.units[i]) || !hasLeaf(map.units[i]))
      continue;
    size_t leaf = i ^ offset(map.units[i]);
    if (leaf >= map.units.size())
      return tfm::failure(where + ": the precompiled charsmap's trie unit " + std::to_string(i) +
                          " points past its " + std::to_string(map.units.size()) + " units");
    uint32_t value = leafValue(map.units[leaf]);
    if (value >= map.replacements.size() || map.replacements.find('\0', value) == std::string::npos)
      return tfm::failure(where + ": the precompiled charsmap's rule at trie unit " +
                          std::to_string(leaf) + " starts at byte " + std::to_string(value) +
                          ", outside its NUL-ended replacements (" +
                          std::to_string(map.replacements.size()) + " bytes)");
  }
  return map;
}

std::pair<llvm::StringRef, size_t> PrecompiledCharsmap::longestRule(llvm::StringRef text) const {
  std::pair<llvm::StringRef, size_t> longest{"", 0};
  // darts.h's commonPrefixSearch, each index checked: a unit outside the
  // trie ends the search as a label mismatch does.
  size_t node = offset(units[0]);
  for (size_t i = 0; i < text.size(); ++i) {
    auto byte = static_cast<unsigned char>(text[i]);
    node ^= byte;
    if (node >= units.size() || label(units[node]) != byte)
      break;
    uint32_t unit = units[node];
    node ^= offset(unit);
    if (hasLeaf(unit) && node < units.size()) {
      uint32_t value = leafValue(units[node]);
      longest = {llvm::StringRef(replacements.c_str() + value), i + 1};
    }
  }
  return longest;
}
