//===- Tokenizer.h - Text to token ids and back -----------------*- C++ -*-===//
//
// The interface every tokenizer format implements (llama2.c tokenizer.bin
// now; GPT-2 byte-level BPE and SentencePiece later), so the generator never
// knows which one it drives.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_TOKENIZER_H
#define TFM_RUNTIME_TOKENIZER_H

#include <cstdint>
#include <string>
#include <vector>

namespace tfm::rt {

class Tokenizer {
public:
  virtual ~Tokenizer() = default;

  virtual int64_t vocabSize() const = 0;

  /// Token ids of `text`, preceded by the BOS id when `addBos`.
  virtual std::vector<int32_t> encode(const std::string &text, bool addBos) const = 0;

  /// The bytes to print for `token` when it follows `previous` (some formats
  /// print a token differently at the start of a sequence). Control bytes
  /// that would garble a terminal come back empty.
  virtual std::string decode(int32_t previous, int32_t token) const = 0;
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_TOKENIZER_H
