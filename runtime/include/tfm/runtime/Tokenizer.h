//===- Tokenizer.h - Text to token ids and back -----------------*- C++ -*-===//
//
// The interface every tokenizer format implements (llama2.c tokenizer.bin,
// GPT-2 byte-level BPE, SentencePiece, and the tokenizers GGUF files embed),
// so the generator never knows which one it drives. loadTokenizer()
// (TokenizerFactory.h) picks the implementation for a file.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_TOKENIZER_H
#define TFM_RUNTIME_TOKENIZER_H

#include <cstdint>
#include <string>
#include <vector>

namespace tfm::rt {

/// What a vocabulary entry is. The numbering is SentencePiece's piece type
/// and GGUF's tokenizer.ggml.token_type, which agree.
enum class TokenKind : int32_t {
  Normal = 1,
  Unknown = 2,
  Control = 3,     // BOS, EOS, padding, <|endoftext|>: never produced by merging
  UserDefined = 4, // added by hand; always one token wherever it appears
  Unused = 5,
  Byte = 6, // SentencePiece byte fallback <0xXX>
};

/// The sequence markers of a vocabulary, as its files give them.
struct SpecialTokens {
  int32_t bos = -1; // -1: the vocabulary has none
  int32_t eos = -1;
  bool addBos = false; // whether a prompt for generation starts with BOS
  /// Whether a sequence that starts with BOS ends with EOS (BERT's [CLS]
  /// ... [SEP], RoBERTa's <s> ... </s>).
  bool addEos = false;
  /// Tokens beside EOS that end a turn, as llama.cpp reads a GGUF: its
  /// EOT and EOM and the tokens of end-of-turn texts ("<|eot_id|>", ...).
  std::vector<int32_t> endOfTurn;
};

class Tokenizer {
public:
  virtual ~Tokenizer() = default;

  virtual int64_t vocabSize() const = 0;

  /// Token ids of `text`, preceded by the BOS id when `addBos` (and the
  /// vocabulary has one), and then followed by EOS where SpecialTokens::addEos.
  virtual std::vector<int32_t> encode(const std::string &text, bool addBos) const = 0;

  /// The bytes to print for `token` when it follows `previous`; `previous`
  /// is -1 for the first token of a text. Some formats print a token
  /// differently at the start of a text or after BOS (the space SentencePiece
  /// adds in front is not part of the text). Concatenating the decoded tokens
  /// of encode(text, addsBos()) -- BOS itself left out -- gives back `text`,
  /// byte for byte, invalid UTF-8 included; a format that normalizes text
  /// gives back the normalized text (see each format's header).
  virtual std::string decode(int32_t previous, int32_t token) const = 0;

  int32_t bosId() const { return special.bos; }
  int32_t eosId() const { return special.eos; }
  const std::vector<int32_t> &endOfTurnIds() const { return special.endOfTurn; }
  /// Whether a prompt for generation starts with BOS (Llama yes, GPT-2 no).
  bool addsBos() const { return special.addBos; }

protected:
  SpecialTokens special;
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_TOKENIZER_H
