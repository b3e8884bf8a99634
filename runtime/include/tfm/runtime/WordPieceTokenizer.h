//===- WordPieceTokenizer.h - BERT's WordPiece ------------------*- C++ -*-===//
//
// Encodes as Hugging Face's BertNormalizer, BertPreTokenizer and WordPiece
// model do (and llama.cpp's WPM tokenizer, for the uncased vocabularies it
// reads):
//  * added tokens ([CLS], [SEP], [UNK], ...) are cut out of the text first
//    (AddedTokens.h);
//  * the rest is normalized: NUL, U+FFFD and control characters dropped,
//    whitespace made a space, CJK ideographs set apart as words of their
//    own, and for an uncased vocabulary accents stripped (NFD, nonspacing
//    marks dropped) and every character lowercased;
//  * it is split at whitespace into words, and every punctuation character
//    (Unicode P*, and ASCII's symbols) is a word of its own;
//  * each word becomes its longest prefix in the vocabulary, then the
//    longest continuation piece ("##ing") of what follows, and so on; a word
//    that cannot be covered, or longer than maxWordChars characters, is the
//    unknown token as a whole.
// A sequence for the model is [CLS] words [SEP]: encode(text, true) adds
// both (SpecialTokens::bos and eos, addEos).
//
// Decoding puts a space before every token but the text's first (or the
// one after [CLS]) and continuation pieces, which print without their
// mark, as Hugging Face's WordPiece decoder does before its cleanup;
// special tokens print their text ("[UNK]", the "[SEP]" ending a
// sequence). The text that comes back is the normalized one, with a space
// around each punctuation mark: encoding it again gives the same ids.
//
// Invalid UTF-8 bytes are U+FFFD to the normalizer, which drops them.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_WORDPIECETOKENIZER_H
#define TFM_RUNTIME_WORDPIECETOKENIZER_H

#include "tfm/runtime/AddedTokens.h"
#include "tfm/runtime/Tokenizer.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <unordered_map>

namespace tfm::rt {

/// What BertNormalizer does to text before it is split into words.
struct BertNormalization {
  bool cleanText = true; // drop NUL, U+FFFD and controls; whitespace -> " "
  bool separateChineseChars = true;
  bool stripAccents = true; // Hugging Face's default: as `lowercase`
  bool lowercase = true;
};

/// A WordPiece vocabulary as tokenizer.json, vocab.txt or a GGUF file gives it.
struct WordPieceVocabulary {
  std::string source; // the file it came from, for messages
  /// Token text by id, without its mark: "ing" for both "##ing" (a
  /// continuation) and "ing" (a word's first piece).
  std::vector<std::string> tokens;
  /// By id: whether the token continues a word (Hugging Face's "##" prefix;
  /// a GGUF's token without llama.cpp's "▁" in front).
  std::vector<bool> continues;
  std::vector<AddedToken> added; // matched whole in the text ([CLS], [UNK], ...)
  SpecialTokens special;         // bos = [CLS], eos = [SEP]
  int32_t unknown = -1;
  BertNormalization normalization;
  int64_t maxWordChars = 100;
};

class WordPieceTokenizer : public Tokenizer {
public:
  /// Checks the vocabulary (sizes, ids in range, an unknown token to fall
  /// back on); errors name `vocab.source`.
  static llvm::Expected<std::unique_ptr<WordPieceTokenizer>>
  create(const WordPieceVocabulary &vocab);

  int64_t vocabSize() const override { return static_cast<int64_t>(tokens.size()); }
  /// With `addBos`, [CLS] first and [SEP] last.
  std::vector<int32_t> encode(const std::string &text, bool addBos) const override;
  std::string decode(int32_t previous, int32_t token) const override;

private:
  WordPieceTokenizer() = default;

  void encodeText(llvm::StringRef text, std::vector<int32_t> &out) const;
  void encodeWord(const std::string &word, size_t chars, std::vector<int32_t> &out) const;

  std::vector<std::string> tokens;
  std::vector<bool> continues;
  std::unordered_map<std::string, int32_t> firstPieces, continuationPieces;
  AddedTokenMatcher added;
  int32_t unknown = -1;
  BertNormalization normalization;
  int64_t maxWordChars = 100;
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_WORDPIECETOKENIZER_H
