//===- PrecompiledCharsmap.h - SentencePiece's normalization rules -*- C++ -*-===//
//
// A SentencePiece model's normalizer_spec.precompiled_charsmap (T5's and
// CamemBERT's "nmt_nfkc": NFKC and a few rules of its own) holds every
// rule as a replacement string for a byte sequence, found by the longest
// prefix of the text in a Darts-clone double-array trie:
//   uint32 little-endian   bytes of the trie
//   uint32 units           the trie: each unit a label, an offset to its
//                          children and a leaf flag; a leaf's value is an
//                          offset into the replacements
//   NUL-ended strings      the replacements
// The blob comes from a file: every index is checked before it is used.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_LIB_PRECOMPILEDCHARSMAP_H
#define TFM_RUNTIME_LIB_PRECOMPILEDCHARSMAP_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tfm::rt {

class PrecompiledCharsmap {
public:
  /// Checks the layout and every leaf's replacement; errors name `where`.
  static llvm::Expected<PrecompiledCharsmap> parse(llvm::StringRef blob, const std::string &where);

  /// The replacement of the longest rule matching a prefix of `text`, and
  /// the bytes of `text` it covers; {"", 0} where no rule matches.
  std::pair<llvm::StringRef, size_t> longestRule(llvm::StringRef text) const;

private:
  std::vector<uint32_t> units;
  std::string replacements;
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_LIB_PRECOMPILEDCHARSMAP_H
