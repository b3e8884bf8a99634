//===- ByteLevelBpeTokenizer.h - GPT-2 style byte-level BPE -----*- C++ -*-===//
//
// GPT-2's tokenizer (also MPT's, GPT-NeoX's, StarCoder's with their own
// vocabularies): added tokens are cut out of the text (AddedTokens.h), the
// rest is split into words by GPT-2's regex or Falcon's (WordSplit.h), and each
// word's bytes are merged pairwise, always the adjacent pair of lowest merge
// rank first (leftmost on a tie), until no ranked pair is left.
//
// Vocabulary files spell every byte as a printable character (GPT-2's
// bytes_to_unicode: printable Latin-1 bytes as themselves, the others as
// U+0100 onwards), so a token's text is that alphabet, except for added
// tokens, which are stored as their plain text. Both are turned back into
// bytes at load: encoding and decoding work on bytes, and decoding any
// token sequence gives exactly the bytes it was encoded from.
//
// The same merging serves the BPE Hugging Face converts from SentencePiece
// (Gemma's tokenizer.json: byte_fallback, a normalizer replacing spaces
// with U+2581): tokens are spelled in UTF-8 with "▁" for a space, the text
// is one word, its characters are the first symbols, and a character
// without a token becomes its bytes' <0xXX> tokens. A "▁" in the text is a
// space, as the normalizer makes it, and decodes as one.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_BYTELEVELBPETOKENIZER_H
#define TFM_RUNTIME_BYTELEVELBPETOKENIZER_H

#include "tfm/runtime/AddedTokens.h"
#include "tfm/runtime/Tokenizer.h"
#include "tfm/runtime/UnicodeCategories.h"
#include "tfm/runtime/WordSplit.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace tfm::rt {

/// How a vocabulary spells its tokens' bytes.
enum class TokenSpelling {
  ByteLevel,     // GPT-2's printable alphabet, a character per byte
  SentencePiece, // UTF-8 with "▁" for a space, <0xXX> byte tokens
};

/// A byte-level BPE vocabulary as one of its file formats gives it.
struct ByteLevelBpeVocabulary {
  std::string source; // the file(s) it came from, for messages
  TokenSpelling spelling = TokenSpelling::ByteLevel;
  /// Token text by id: the byte-level alphabet, or plain text for the
  /// tokens listed in `added`.
  std::vector<std::string> tokens;
  /// Merges by rank, each a pair of token texts in the byte-level alphabet.
  std::vector<std::pair<std::string, std::string>> merges;
  std::vector<AddedToken> added;
  SpecialTokens special;
  /// Stands for a byte the vocabulary has no token for (-1: such a byte is
  /// dropped, as Hugging Face and llama.cpp do). Vocabularies learnt from
  /// text may lack some bytes, most often those UTF-8 never uses (C0, C1,
  /// F5..FF); decoding then does not give such bytes back.
  int32_t unknown = -1;
  /// tokenizer.json's "normalizer"; GGUF and vocab.json carry none.
  Normalization normalization = Normalization::None;
  /// GGUF's tokenizer.ggml.pre, tokenizer.json's pre_tokenizer.
  WordSplit wordSplit = WordSplit::Gpt2;
  /// A word the vocabulary holds whole is that token, without merging
  /// (tokenizer.json's model.ignore_merges; Llama 3).
  bool ignoreMerges = false;
};

class ByteLevelBpeTokenizer : public Tokenizer {
public:
  /// Checks the vocabulary (every normal token in the byte-level alphabet,
  /// a token for each byte UTF-8 uses, both halves and the result of every
  /// merge in the vocabulary); errors name `vocab.source`.
  static llvm::Expected<std::unique_ptr<ByteLevelBpeTokenizer>>
  create(const ByteLevelBpeVocabulary &vocab);

  int64_t vocabSize() const override { return static_cast<int64_t>(bytes.size()); }
  std::vector<int32_t> encode(const std::string &text, bool addBos) const override;
  std::string decode(int32_t previous, int32_t token) const override;

private:
  ByteLevelBpeTokenizer() = default;

  void encodeWord(llvm::StringRef word, std::vector<int32_t> &out) const;
  std::vector<int32_t> mergeWord(llvm::StringRef word) const;
  /// The word's first symbols: a token per byte (byte-level) or per
  /// character, or its bytes' tokens (SentencePiece spelling).
  std::vector<int32_t> firstSymbols(llvm::StringRef word) const;

  struct Merge {
    int32_t rank;
    int32_t result;
  };
  static uint64_t pairKey(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }

  std::vector<std::string> bytes; // each token's bytes, by id
  int32_t byteToken[256] = {};    // -1: the byte is dropped
  TokenSpelling spelling = TokenSpelling::ByteLevel;
  /// SentencePiece spelling: normal tokens by their bytes, for the first
  /// symbols.
  std::unordered_map<std::string, int32_t> characters;
  std::unordered_map<uint64_t, Merge> merges; // by pairKey(left, right)
  AddedTokenMatcher added;
  Normalization normalization = Normalization::None;
  WordSplit wordSplit = WordSplit::Gpt2;
  /// Normal tokens by their bytes, for ignore_merges; empty without it.
  std::unordered_map<std::string, int32_t> wholeWords;

  // Words recur; their merges are remembered (up to a bound) as Hugging
  // Face's BPE does.
  static constexpr size_t kCacheEntries = 10000;
  mutable std::mutex cacheMutex;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache;
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_BYTELEVELBPETOKENIZER_H
