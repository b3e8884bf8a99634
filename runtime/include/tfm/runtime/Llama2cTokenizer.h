//===- Llama2cTokenizer.h - llama2.c tokenizer.bin --------------*- C++ -*-===//
//
// File format: int32 max_token_length, then per token a float32 merge score,
// an int32 byte length and the bytes. Encoding and decoding follow llama2.c
// run.c exactly (a dummy-prefix space before a non-empty text, codepoint
// lookup with <0xXX> byte fallback at id byte+3, then greedy merges of the
// adjacent pair with the best score), so ids match llama2.c's. The file
// names no special tokens: BOS and EOS are the model config's (run.c's 1
// and 2), and a prompt starts with BOS.
//
// Unlike the other formats, decode() drops lone control bytes as run.c does,
// so text with such bytes does not come back whole.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_LLAMA2CTOKENIZER_H
#define TFM_RUNTIME_LLAMA2CTOKENIZER_H

#include "tfm/runtime/Tokenizer.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <unordered_map>

namespace tfm::rt {

class Llama2cTokenizer : public Tokenizer {
public:
  /// Reads `path`; refuses a malformed file, or one whose vocabulary size is
  /// not `expectedVocab` (a tokenizer of another model); a negative
  /// `expectedVocab` accepts any size (no model to compare with).
  static llvm::Expected<std::unique_ptr<Llama2cTokenizer>>
  load(const std::string &path, int64_t expectedVocab, int32_t bosId = 1, int32_t eosId = 2);

  int64_t vocabSize() const override { return static_cast<int64_t>(pieces.size()); }
  std::vector<int32_t> encode(const std::string &text, bool addBos) const override;
  std::string decode(int32_t previous, int32_t token) const override;

  const std::string &piece(int32_t token) const { return pieces[token]; }

private:
  static constexpr int32_t kFirstByteToken = 3; // <0x00> in llama2.c vocabularies

  int32_t lookup(const std::string &piece) const;

  std::vector<std::string> pieces;
  std::vector<float> scores;
  std::unordered_map<std::string, int32_t> ids;
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_LLAMA2CTOKENIZER_H
