//===- Sampler.cpp - Repeat penalty, greedy, temperature, top-k/p, min-p --===//
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

SamplerOptions tfm::rt::defaultSamplerOptions() {
  SamplerOptions options;
  options.temperature = 0.8f;
  options.topP = 0.95f;
  return options;
}

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
  if (!(o.repeatPenalty > 0.0f) || !std::isfinite(o.repeatPenalty))
    return bad("repeat-penalty", o.repeatPenalty, "a finite number > 0 (1 is none)");
  if (o.repeatLastN < 0)
    return bad("repeat-last-n", o.repeatLastN, "an integer >= 0 (0 is none)");
  return Sampler(o);
}

void Sampler::accept(int32_t token) {
  if (options.repeatLastN == 0)
    return;
  if (recent.size() == static_cast<size_t>(options.repeatLastN))
    recent.pop_front();
  recent.push_back(token);
}

const float *Sampler::penalized(const float *logits, int64_t vocabSize) {
  if (options.repeatPenalty == 1.0f || recent.empty())
    return logits;
  penalizedLogits.assign(logits, logits + vocabSize);
  // Once per distinct token, however often it recurs (llama.cpp's rule).
  std::vector<int32_t> tokens(recent.begin(), recent.end());
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  for (int32_t token : tokens) {
    if (token < 0 || token >= vocabSize)
      continue;
    float &logit = penalizedLogits[token];
    logit = logit > 0 ? logit / options.repeatPenalty : logit * options.repeatPenalty;
  }
  return penalizedLogits.data();
}

int32_t Sampler::sample(const float *logits, int64_t vocabSize) {
  int32_t token = choose(penalized(logits, vocabSize), vocabSize);
  accept(token);
  return token;
}

int32_t Sampler::choose(const float *logits, int64_t vocabSize) {
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
