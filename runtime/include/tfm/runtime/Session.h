//===- Session.h - One sequence through a generated model -------*- C++ -*-===//
//
// Owns what the generated code borrows for a sequence: the KV cache (zeroed)
// and the scratch arena (64-byte aligned), plus the logits buffer. Tracks the
// position and refuses calls that would run past the context.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_SESSION_H
#define TFM_RUNTIME_SESSION_H

#include "tfm/common/model_abi.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace tfm::rt {

/// Ends a refusal of positions past the compiled context: the context is a
/// compile-time size, and where it comes from.
inline constexpr const char *kLongerContext =
    "; the context is fixed when the model is compiled (tfmc --context N compiles a longer "
    "one, except for learned positions)";

/// A model call produced a NaN or an infinity. Its own error type, so that
/// the caller, who knows the weight files, can say which tensor is bad.
class NonFiniteLogitError : public llvm::ErrorInfo<NonFiniteLogitError> {
public:
  static char ID;
  NonFiniteLogitError(std::string entry, int64_t position)
      : entry(std::move(entry)), position(position) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

  std::string entry;
  int64_t position;
};

class Session {
public:
  /// `weights` holds one pointer per manifest tensor; the data must outlive
  /// the session. Fails, saying how much is needed, when the cache and arena
  /// would not fit in this machine's memory or cannot be allocated.
  static llvm::Expected<std::unique_ptr<Session>> create(const tfm_model &model,
                                                         std::vector<const void *> weights);
  /// Tells the library the sequence is gone (a GPU library frees its memory
  /// on the device).
  ~Session();

  /// Runs `tokens` from the current position; logits() then holds the last
  /// token's logits.
  llvm::Error prefill(const std::vector<int32_t> &tokens);
  /// Runs one token at the current position.
  llvm::Error decode(int32_t token);
  /// Like prefill, but returns the logits of every token, [tokens.size(),
  /// vocab] row-major (for --logits and --perplexity); logits() then holds
  /// the last row.
  llvm::Expected<std::vector<float>> score(const std::vector<int32_t> &tokens);
  /// An encoder's one call: `tokens`, one whole text from position 0, every
  /// token attending to every other; returns each token's last hidden
  /// state, [tokens.size(), hiddenSize()] row-major. An encoder-decoder's
  /// encodes its source (the decoder's cross-attention reads it until the
  /// next encode) and starts the decoder's sequence again at position 0. A
  /// decoder's library has no encode, an encoder's no prefill, decode or
  /// score: each refuses; an encoder-decoder's decoder refuses to run
  /// before a source is encoded.
  llvm::Expected<std::vector<float>> encode(const std::vector<int32_t> &tokens);

  /// Starts a new sequence at position 0 with an empty cache.
  void reset();

  const float *logits() const { return logits_.data(); }
  int64_t vocabSize() const { return model.vocab_size; }
  int64_t hiddenSize() const { return model.hidden_size; }
  /// Only an encoder (BERT's): encode, and no decoder.
  bool isEncoder() const { return model.encode && !model.prefill; }
  /// An encoder-decoder (T5's): encode a source, then decode.
  bool hasSource() const { return model.encode && model.prefill; }
  /// The next position to be written.
  int64_t position() const { return pos; }

private:
  struct FreeDeleter {
    void operator()(void *p) const { std::free(p); }
  };

  Session(const tfm_model &model, std::vector<const void *> weights);
  /// `encoding`: the call is encode, which an encoder or encoder-decoder
  /// has; the others, a decoder or encoder-decoder (after an encode).
  llvm::Error checkTokens(const char *entry, const std::vector<int32_t> &tokens,
                          bool encoding = false) const;
  /// `out` holds `count` floats, rows of `width` (logits, or hidden states).
  llvm::Error checkCall(const char *entry, int status, int64_t nTokens, const float *out,
                        size_t count, size_t width);

  const tfm_model &model;
  std::vector<const void *> weights;
  std::unique_ptr<void, FreeDeleter> kvCache;
  std::unique_ptr<void, FreeDeleter> arena;
  std::vector<float> logits_;
  int64_t pos = 0;
  bool sourceEncoded = false; // an encoder-decoder's: encode has run
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_SESSION_H
