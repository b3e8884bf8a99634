//===- Sampler.h - Pick the next token from logits --------------*- C++ -*-===//
//
// First llama.cpp's repeat penalty on the recent tokens' logits; then greedy
// at temperature 0, otherwise softmax(logits / temperature), filtered by
// top-k, min-p and top-p (in that order), then a draw from a seeded
// generator of our own so the same seed gives the same tokens everywhere.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_SAMPLER_H
#define TFM_RUNTIME_SAMPLER_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <deque>
#include <vector>

namespace tfm::rt {

/// SplitMix64: tiny, fast, and identical on every platform.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in [0, 1) with 53 bits of resolution.
  double uniform();

private:
  uint64_t state;
};

struct SamplerOptions {
  float temperature = 0.0f; // 0: greedy
  int64_t topK = 0;         // 0: no limit
  float topP = 1.0f;        // 1: no limit
  float minP = 0.0f;        // 0: no limit
  float repeatPenalty = 1.0f; // 1: none; a recent token's logit is divided by it (if > 0)
                              // or multiplied (if < 0), as llama.cpp's --repeat-penalty
  int64_t repeatLastN = 64;   // how many recent tokens the penalty sees
  uint64_t seed = 42;
};

/// What tfm-run and the C API sample with when not told: temperature 0.8
/// and top-p 0.95.
SamplerOptions defaultSamplerOptions();

class Sampler {
public:
  /// Refuses options out of range, naming the option and the allowed range.
  static llvm::Expected<Sampler> create(const SamplerOptions &options);

  /// The next token id; `logits` holds one value per vocabulary entry.
  /// The token joins the recent tokens.
  int32_t sample(const float *logits, int64_t vocabSize);
  /// Adds a token the sampler did not choose (a prompt's) to the recent
  /// tokens the repeat penalty sees.
  void accept(int32_t token);

private:
  explicit Sampler(const SamplerOptions &options)
      : options(options), rng(options.seed) {}
  /// `logits`, or a copy with the repeat penalty applied.
  const float *penalized(const float *logits, int64_t vocabSize);
  int32_t choose(const float *logits, int64_t vocabSize);

  SamplerOptions options;
  SplitMix64 rng;
  std::deque<int32_t> recent; // at most repeatLastN, oldest first
  std::vector<float> penalizedLogits;                 // reused per call
  std::vector<std::pair<double, int32_t>> candidates; // reused per call
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_SAMPLER_H
