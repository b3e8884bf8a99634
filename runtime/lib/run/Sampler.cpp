//===- Sampler.cpp - Greedy, temperature, top-k, top-p, min-p -------------===//
#include "tfm/runtime/Sampler.h"
#include "tfm/common/Failure.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

using namespace tfm::rt;

uint64_t SplitMix64::next() {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SplitMix64::uniform() { return (next() >> 11) * 0x1.0p-53; }

llvm::Expected<Sampler> Sampler::create(const SamplerOptions &o) {
  auto bad = [](const std::string &option, auto value, const char *expected) {
    std::string shown;
    if constexpr (std::is_integral_v<decltype(value)>)
      shown = std::to_string(value);
    else
      llvm::raw_string_ostream(shown) << llvm::format("%g", value);
    return failure("--" + option + " is " + shown + ", expected " + expected);
  };
  if (!(o.temperature >= 0.0f) || !std::isfinite(o.temperature))
    return bad("temp", o.temperature, "a finite number >= 0 (0 is greedy)");
  if (o.topK < 0)
    return bad("top-k", o.topK, "an integer >= 0 (0 keeps all)");
  if (!(o.topP > 0.0f && o.topP <= 1.0f))
    return bad("top-p", o.topP, "a number in (0, 1] (1 keeps all)");
  if (!(o.minP >= 0.0f && o.minP < 1.0f))
    return bad("min-p", o.minP, "a number in [0, 1) (0 keeps all)");
  return Sampler(o);
}

int32_t Sampler::sample(const float *logits, int64_t vocabSize) {
  if (options.temperature == 0.0f) {
    // The first of equal maxima, as llama2.c's argmax.
    int64_t best = 0;
    for (int64_t i = 1; i < vocabSize; ++i)
      if (logits[i] > logits[best])
        best = i;
    return static_cast<int32_t>(best);
  }

  double maxLogit = logits[0];
  for (int64_t i = 1; i < vocabSize; ++i)
    maxLogit = std::max(maxLogit, static_cast<double>(logits[i]));
  candidates.clear();
  double total = 0.0;
  for (int64_t i = 0; i < vocabSize; ++i) {
    double p = std::exp((logits[i] - maxLogit) / options.temperature);
    candidates.emplace_back(p, static_cast<int32_t>(i));
    total += p;
  }
  for (auto &c : candidates)
    c.first /= total;
  // Most probable first; equal probabilities by id, so the order is total.
  std::sort(candidates.begin(), candidates.end(), [](const auto &a, const auto &b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });

  size_t keep = candidates.size();
  if (options.topK > 0)
    keep = std::min(keep, static_cast<size_t>(options.topK));
  if (options.minP > 0.0f) {
    double floor = options.minP * candidates.front().first;
    size_t n = 1;
    while (n < keep && candidates[n].first >= floor)
      ++n;
    keep = n;
  }
  if (options.topP < 1.0f) {
    double cumulative = 0.0;
    size_t n = 0;
    while (n < keep) {
      cumulative += candidates[n++].first;
      if (cumulative >= options.topP)
        break;
    }
    keep = n;
  }

  double kept = 0.0;
  for (size_t i = 0; i < keep; ++i)
    kept += candidates[i].first;
  double r = rng.uniform() * kept;
  double cumulative = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    cumulative += candidates[i].first;
    if (r < cumulative)
      return candidates[i].second;
  }
  return candidates[keep - 1].second; // r rounded up to the total
}
