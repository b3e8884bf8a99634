//===- SentencePieceTokenizer.h - SentencePiece BPE and Unigram -*- C++ -*-===//
//
// Encodes as SentencePiece's BPE model does (and llama.cpp's SPM tokenizer):
// added tokens (control, user-defined, unknown) are cut out of the text
// first (AddedTokens.h); each remaining stretch gets the dummy-prefix space
// when it starts the text or follows an added token, spaces become U+2581
// "▁", and the characters are merged pairwise, always the adjacent pair
// whose merged piece has the best score (leftmost on a tie). A character
// left without a piece becomes its UTF-8 bytes as <0xXX> pieces (byte
// fallback) or, without those, the unknown piece.
//
// Only normal and user-defined pieces are merged into; SentencePiece would
// also merge into unused pieces and split them again, which the
// vocabularies this project reads (Llama's) do not have.
//
// A Unigram model (T5's, CamemBERT's) normalizes each stretch as
// SentencePiece's normalizer does: the precompiled charsmap's rules (the
// longest first; none: the text as it is, an invalid byte as U+FFFD),
// leading and trailing whitespace dropped and runs of it squeezed
// (remove_extra_whitespaces), the dummy prefix, spaces as "▁". It then
// takes the segmentation of highest total score (Viterbi), a character no
// piece covers being the unknown piece, scored the lowest score less 10
// (or its bytes with byte fallback), as sentencepiece's unigram_model.cc.
//
// Decoding turns "▁" back into a space, so a "▁" in the input comes back
// as a space, and with remove_extra_whitespaces (not Llama's) runs of spaces
// come back as one: both are SentencePiece's normalization.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_SENTENCEPIECETOKENIZER_H
#define TFM_RUNTIME_SENTENCEPIECETOKENIZER_H

#include "tfm/runtime/AddedTokens.h"
#include "tfm/runtime/Tokenizer.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <unordered_map>

namespace tfm::rt {

class PrecompiledCharsmap;

/// trainer_spec.model_type.
enum class SentencePieceModel { Bpe, Unigram };

/// A SentencePiece vocabulary as tokenizer.model or a GGUF file gives it.
struct SentencePieceVocabulary {
  SentencePieceModel model = SentencePieceModel::Bpe;
  std::string source; // the file it came from, for messages
  std::vector<std::string> pieces; // as stored: "▁" for a space when escaping
  std::vector<float> scores;
  std::vector<TokenKind> kinds;
  /// Pieces found whole in the text: the readers take the control,
  /// user-defined and unknown pieces (addedTokensFromKinds).
  std::vector<AddedToken> added;
  SpecialTokens special;
  int32_t unknown = -1;
  bool byteFallback = true;
  // normalizer_spec
  bool addDummyPrefix = true;
  bool removeExtraWhitespaces = false;
  bool escapeWhitespaces = true;
  /// normalizer_spec.precompiled_charsmap (Unigram models only: a BPE
  /// model's is refused by its reader; empty: none).
  std::string precompiledCharsmap;
};

class SentencePieceTokenizer : public Tokenizer {
public:
  /// Checks that the vocabulary is consistent (sizes, ids in range, a way
  /// to encode any character); errors name `vocab.source`.
  static llvm::Expected<std::unique_ptr<SentencePieceTokenizer>>
  create(const SentencePieceVocabulary &vocab);

  int64_t vocabSize() const override { return static_cast<int64_t>(printed.size()); }
  std::vector<int32_t> encode(const std::string &text, bool addBos) const override;
  /// A piece's text with "▁" as a space and <0xXX> as its byte; the space
  /// the dummy prefix put in front of a stretch of text is left out.
  std::string decode(int32_t previous, int32_t token) const override;

private:
  SentencePieceTokenizer() = default;

  void encodeStretch(llvm::StringRef text, bool dummyPrefix, std::vector<int32_t> &out) const;
  llvm::Error prepareUnigram(const SentencePieceVocabulary &vocab);
  std::string normalizeForUnigram(llvm::StringRef text, bool dummyPrefix) const;
  void encodeUnigram(const std::string &normalized, std::vector<int32_t> &out) const;

  std::vector<std::string> printed; // by id: what decode prints
  std::vector<float> scores;
  std::vector<bool> isByte;
  std::unordered_map<std::string, int32_t> mergeable; // normal and user-defined pieces
  int32_t byteToken[256] = {};
  int32_t unknown = -1;
  AddedTokenMatcher added;
  bool addDummyPrefix = true;
  bool removeExtraWhitespaces = false;
  bool escapeWhitespaces = true;
  // Unigram models.
  SentencePieceModel model = SentencePieceModel::Bpe;
  std::shared_ptr<const PrecompiledCharsmap> charsmap; // null: no rules
  std::vector<bool> userDefined;                      // by id
  float minScore = 0, maxScore = 0;                    // of normal pieces
  size_t longestPiece = 0;                             // bytes
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_SENTENCEPIECETOKENIZER_H
