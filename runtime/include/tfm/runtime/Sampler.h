//===- Sampler.h - Pick the next token from logits --------------*- C++ -*-===//
//
// Greedy at temperature 0; otherwise softmax(logits / temperature), filtered
// by top-k, min-p and top-p (in that order), then a draw from a seeded
// generator of our own so the same seed gives the same tokens everywhere.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_SAMPLER_H
#define TFM_RUNTIME_SAMPLER_H

#include "llvm/Support/Error.h"

#include <cstdint>
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
  uint64_t seed = 42;
};

class Sampler {
public:
  /// Refuses options out of range, naming the option and the allowed range.
  static llvm::Expected<Sampler> create(const SamplerOptions &options);

  /// The next token id; `logits` holds one value per vocabulary entry.
  int32_t sample(const float *logits, int64_t vocabSize);

private:
  explicit Sampler(const SamplerOptions &options)
      : options(options), rng(options.seed) {}

  SamplerOptions options;
  SplitMix64 rng;
  std::vector<std::pair<double, int32_t>> candidates; // reused per call
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_SAMPLER_H
